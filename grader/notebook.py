"""Jupyter as a front end: write a set's student notebook, and grade it from its cells.

In a notebook::

    from grader import notebook as ag
    ag.init("day3")            # or ag.init("day3", path="work.ipynb")
    ag.check("attention")      # grade one exercise; ag.check_all(), ag.hint("attention")

``check`` grades the notebook *file* as saved (save before checking): its code
cells become the stub files (``instructor.notebook_cells``, the same path as
``attn-grade SET --submission work.ipynb``), and the grading runs in a fresh
``python -m grader`` process with the CLI's sandbox and limits. So student code
never runs in the kernel's process or the grader's, and nothing the kernel did
(a monkeypatched numpy, a redefined function) can change a verdict.

Which notebook: ``init(SET, path=...)``; else the notebook Jupyter names in
``$JPY_SESSION_NAME``; else the single .ipynb in the current folder.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .course import loader as spec_loader
from .errors import CourseError
from .judge.msg import Msg
from .report.messages import render

INSTALL_COMMAND = "python3 -m pip install 'attn-grade[notebook]'"
GRADER_ROOT = Path(__file__).resolve().parent.parent   # the folder holding grader/
META_KEY = "attn_grade"


class NotebookUnavailable(RuntimeError):
    """nbformat is missing: the notebook extra is not installed."""


def nbformat_available() -> bool:
    try:
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------- writing a notebook


def build(exercise_set: Any, lang: str) -> Any:
    """The student notebook of ``exercise_set`` (an nbformat NotebookNode)."""
    try:
        import nbformat
        from nbformat import v4
    except ImportError:
        raise NotebookUnavailable(INSTALL_COMMAND) from None
    from .report.student_view import prompt_text

    cells = [v4.new_markdown_cell(f"# {exercise_set.title.get(lang)}\n\n"
                                  + render(Msg("notebook-intro"), lang)),
             v4.new_code_cell(f"from grader import notebook as ag\n"
                              f"ag.init({exercise_set.id!r}, lang={lang!r})")]
    files_done = set()
    for exercise in exercise_set.exercises:
        points = render(Msg("notebook-points", points=f"{exercise.points:g}"), lang)
        cells.append(v4.new_markdown_cell(
            f"## {exercise.id} · {exercise.title.get(lang)} ({points})\n\n"
            + prompt_text(exercise, lang).strip()))
        if exercise.file not in files_done:
            files_done.add(exercise.file)
            stub = exercise.spec_path.with_name(exercise.file)
            code = stub.read_text(encoding="utf-8").rstrip("\n")
            cells.append(v4.new_code_cell(code, metadata={META_KEY: {
                "file": exercise.file, "exercise": exercise.id}}))
        cells.append(v4.new_code_cell(f"ag.check({exercise.id!r})"))
    notebook = v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.metadata[META_KEY] = {"set": exercise_set.id, "lang": lang}
    nbformat.validate(notebook)
    return notebook


def write(exercise_set: Any, path: str | Path, lang: str) -> Path:
    """Write the student notebook of ``exercise_set`` to ``path``."""
    import nbformat

    notebook = build(exercise_set, lang)
    path = Path(path)
    nbformat.write(notebook, str(path))
    return path


# ---------------------------------------------------------------- in the kernel


@dataclass
class _State:
    set_id: str | None = None
    path: Path | None = None
    course: Path | None = None
    lang: str = "en"
    options: list[str] = field(default_factory=list)


_state = _State()


def init(set_id: str, path: str | Path | None = None, course: str | Path | None = None,
         lang: str | None = None, isolation: str | None = None) -> None:
    """Say which set this notebook is (and optionally which file and course folder)."""
    _state.set_id = set_id
    _state.path = Path(path).resolve() if path else None
    _state.course = Path(course).resolve() if course else None
    _state.lang = lang or os.environ.get("ATTN_GRADE_LANG") or "en"
    _state.options = ["--isolation", isolation] if isolation else []


def notebook_path() -> Path:
    """The notebook being graded (see the module's docstring)."""
    if _state.path is not None:
        return _state.path
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_file():
        return Path(session).resolve()
    found = sorted(Path.cwd().glob("*.ipynb"))
    if len(found) == 1:
        return found[0].resolve()
    raise LookupError(", ".join(p.name for p in found) or "no .ipynb in " + str(Path.cwd()))


def _course_dir(notebook: Path) -> Path:
    if _state.course is not None:
        return _state.course
    for start in (notebook.parent, Path.cwd(), GRADER_ROOT):
        try:
            return spec_loader.find_course(start).root
        except CourseError:
            continue
    return GRADER_ROOT


@dataclass
class Result:
    """What a check cell shows: rich HTML in Jupyter, plain text elsewhere."""

    lines: list[tuple[str, str, list[str]]]   # (kind, head, detail lines)
    summary: str
    passed: bool = False
    score: float = 0.0
    max_score: float = 0.0
    document: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        out = []
        for kind, head, detail in self.lines:
            mark = {"pass": "✓", "fail": "✗", "head": ""}.get(kind, "!")
            out.append(f"{mark} {head}".strip() if kind != "head" else head)
            out += [f"    {line}" for line in detail]
        out.append(self.summary)
        return "\n".join(out)

    def _repr_json_(self) -> dict[str, Any]:
        """Scores and misconception tags, for tools that read a notebook's outputs."""
        doc = self.document
        return {"score": self.score, "max_score": self.max_score,
                "exercises": {e["exercise"]: [e["score"], e["max_score"]]
                              for e in doc.get("extra_data", {}).get("exercises", [])},
                "tags": sorted({t for test in doc.get("tests", []) for t in test["tags"]})}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        colour = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#9a6700"}
        rows = []
        for kind, head, detail in self.lines:
            if kind == "head":
                rows.append(f"<div style='font-weight:bold;margin-top:.4em'>"
                            f"{html.escape(head)}</div>")
                continue
            mark = {"pass": "✓", "fail": "✗"}.get(kind, "!")
            more = "".join(f"<div style='margin-left:2em;white-space:pre-wrap'>"
                           f"{html.escape(line)}</div>" for line in detail)
            rows.append(f"<div><span style='color:{colour.get(kind, '#000')}'>{mark}</span> "
                        f"{html.escape(head)}{more}</div>")
        rows.append(f"<div style='font-weight:bold;margin-top:.4em'>"
                    f"{html.escape(self.summary)}</div>")
        return "<div class='attn-grade'>" + "".join(rows) + "</div>"


def _problem(text: str) -> Result:
    return Result([("error", text, [])], "", False)


def _grade(exercise_ids: list[str]) -> Result:
    lang = _state.lang
    if _state.set_id is None:
        return _problem(render(Msg("notebook-not-initialised", call='ag.init("SET")'), lang))
    try:
        notebook = notebook_path()
    except LookupError as exc:
        return _problem(render(Msg("notebook-not-found", found=str(exc),
                                   call=f'ag.init("{_state.set_id}", path="work.ipynb")'),
                               lang))
    from .instructor.batch import grader_argv

    # this grader, in isolated mode: nothing beside the notebook (a click.py, a numpy/)
    # is on its import path, whatever the kernel's
    command = grader_argv(_state.set_id, "--submission", notebook, "--json", "--lang", lang,
                          "--course", _course_dir(notebook), *_state.options,
                          *(arg for ex_id in exercise_ids for arg in ("--exercise", ex_id)))
    done = subprocess.run(command, capture_output=True, text=True, cwd=str(notebook.parent),
                          stdin=subprocess.DEVNULL, check=False)
    try:
        document = json.loads(done.stdout)
    except ValueError:
        error = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return _problem(render(Msg("notebook-not-graded",
                                   error=error[-1] if error else f"exit {done.returncode}"),
                               lang))
    return from_document(document, lang)


def from_document(document: dict[str, Any], lang: str) -> Result:
    """A Result from a results.json document (``attn-grade SET --json``)."""
    lines: list[tuple[str, str, list[str]]] = []
    exercises = {e["exercise"]: e for e in document.get("extra_data", {}).get("exercises", [])}
    by_exercise: dict[str, list[dict[str, Any]]] = {}
    for test in document.get("tests", []):
        by_exercise.setdefault(test["extra_data"]["exercise"], []).append(test)
    if not document.get("tests"):
        lines.append(("error", document.get("output", ""), []))
        return Result(lines, "", False, 0.0, float(document.get("max_score", 0)), document)
    for ex_id, tests in by_exercise.items():
        info = exercises.get(ex_id, {})
        lines.append(("head", f"{ex_id}   {info.get('score', 0):g} / "
                      f"{info.get('max_score', 0):g}", []))
        for test in tests:
            extra = test["extra_data"]
            label = render(Msg("hidden-label", check=extra["check"]), lang) \
                if extra.get("hidden") else extra["check"]
            output = test.get("output", "").split("\n")
            kind = "pass" if test["status"] == "passed" else "fail"
            lines.append((kind, f"{label}: {output[0]}",
                          [line for line in output[1:] if line] if kind == "fail" else []))
    score, top = float(document.get("score", 0)), float(document.get("max_score", 0))
    return Result(lines, document.get("output", ""), score == top, score, top, document)


def check(exercise_id: str) -> Result:
    """Grade one exercise of the saved notebook."""
    return _grade([exercise_id])


def check_all() -> Result:
    """Grade the whole set from the saved notebook."""
    return _grade([])


def hint(exercise_id: str) -> Result:
    """The next hint of ``exercise_id`` (and those shown before), as ``attn-grade hint``."""
    from .report.progress import Progress
    from .report.student_view import hint_lines

    lang = _state.lang
    if _state.set_id is None:
        return _problem(render(Msg("notebook-not-initialised", call='ag.init("SET")'), lang))
    try:
        folder = notebook_path().parent
    except LookupError:
        folder = Path.cwd()
    course = spec_loader.Course(_course_dir(folder / "x.ipynb"))
    exercise_set = spec_loader.load_set(course, _state.set_id)
    exercise = exercise_set.exercise(exercise_id)
    if exercise is None:
        raise CourseError(f"no exercise {exercise_id!r} in set {_state.set_id!r}")
    mine = Progress(folder)
    shown = mine.record(_state.set_id, exercise_id).hints
    if shown < len(exercise.hints):
        shown = mine.hint_shown(_state.set_id, exercise_id)
        mine.save()
    text = hint_lines(exercise, shown, lang)
    return Result([("head", line, []) for line in text if line], "", True)
