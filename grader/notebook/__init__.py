"""Jupyter as a front end: write a set's student notebook, and grade it from its cells.

In a notebook::

    from grader import notebook as ag
    ag.init("day3")            # or ag.init("day3", path="work.ipynb")
    ag.check("attention")      # grade one exercise; ag.check_all(), ag.hint("attention")

``check`` grades the notebook *file* as saved (save before checking; a cell run but
not saved is named): its code cells become the stub files
(``instructor.notebook_cells``, the same path as ``attn-grade SET --submission
work.ipynb``), and the grading runs in a fresh ``python -m grader`` process with the
CLI's sandbox and limits. So student code never runs in the kernel's process or the
grader's, and nothing the kernel did (a monkeypatched numpy, a redefined function)
can change a verdict.

Which notebook: ``init(SET, path=...)``; else the notebook Jupyter names in
``$JPY_SESSION_NAME``; else the single .ipynb in the current folder. Every problem
(an unknown set, exercise or file) is one sentence in the student's language.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..course import loader as spec_loader
from ..errors import CourseError
from ..judge.msg import Msg
from ..report.messages import render
from .build import INSTALL_COMMAND, META_KEY, NotebookUnavailable, build, nbformat_available, write
from .result import Result

__all__ = ["INSTALL_COMMAND", "META_KEY", "NotebookUnavailable", "Result", "build", "check",
           "check_all", "hint", "init", "nbformat_available", "notebook_path", "write"]

GRADER_ROOT = Path(__file__).resolve().parents[2]   # the folder holding grader/
NAMES = {"call": "ag.init", "ext": ".ipynb"}         # code in a sentence, in any language


@dataclass
class _State:
    set_id: str | None = None
    path: Path | None = None
    course: Path | None = None
    lang: str = "en"
    options: list[str] = field(default_factory=list)


_state = _State()


def init(set_id: str, path: str | Path | None = None, course: str | Path | None = None,
         lang: str | None = None, isolation: str | None = None) -> Result | None:
    """Say which set this notebook is (and optionally which file and course folder);
    a Result saying what is wrong if the set or the file cannot be found."""
    _state.set_id = set_id
    _state.path = Path(path).resolve() if path else None
    _state.course = Path(course).resolve() if course else None
    _state.lang = lang or _env_lang()
    _state.options = ["--isolation", isolation] if isolation else []
    notes = []
    for step in (lambda: _exercise_set(_state.path or Path.cwd() / "x.ipynb"), notebook_path):
        try:
            step()
        except _Problem as problem:
            notes += problem.result.notes
    return Result(lang=_state.lang, notes=tuple(notes)) if notes else None


class _Problem(Exception):
    """A notebook problem, said in one sentence."""

    def __init__(self, msg: Msg):
        super().__init__(msg.code)
        lang = _state.lang if _state.set_id is not None else _env_lang()   # init not run
        self.result = Result(lang=lang, notes=(render(msg, lang),))


def _env_lang() -> str:
    return os.environ.get("ATTN_GRADE_LANG") or "en"


def notebook_path() -> Path:
    """The notebook being graded (see the module's docstring)."""
    if _state.set_id is None:
        raise _Problem(Msg("notebook-not-initialised", call='ag.init("SET")'))
    if _state.path is not None:
        if not _state.path.is_file():
            raise _Problem(Msg("notebook-no-file", path=str(_state.path), **NAMES))
        if _state.path.suffix.lower() != ".ipynb":
            raise _Problem(Msg("notebook-not-ipynb", path=str(_state.path), **NAMES))
        return _state.path
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_file():
        return Path(session).resolve()
    found = sorted(Path.cwd().glob("*.ipynb"))
    if len(found) == 1:
        return found[0].resolve()
    names = ", ".join(p.name for p in found) or Msg("notebook-none-in", folder=str(Path.cwd()),
                                                    **NAMES)
    raise _Problem(Msg("notebook-not-found", found=names,
                       call=f'ag.init("{_state.set_id}", path="work.ipynb")'))


def _course_dir(notebook: Path) -> Path:
    if _state.course is not None:
        return _state.course
    for start in (notebook.parent, Path.cwd(), GRADER_ROOT):
        try:
            return spec_loader.find_course(start).root
        except CourseError:
            continue
    return GRADER_ROOT


def _exercise_set(notebook: Path) -> Any:
    """The set ``init`` named, loaded; a _Problem naming the sets if there is no such set."""
    course = spec_loader.Course(_course_dir(notebook))
    assert _state.set_id is not None
    if _state.set_id not in course.set_ids():
        raise _Problem(Msg("notebook-unknown-set", set=_state.set_id,
                           sets=", ".join(course.set_ids())))
    return spec_loader.load_set(course, _state.set_id)


def _exercise(exercise_set: Any, exercise_id: str) -> Any:
    exercise = exercise_set.exercise(exercise_id)
    if exercise is None:
        raise _Problem(Msg("notebook-unknown-exercise", exercise=exercise_id,
                           set=exercise_set.id,
                           exercises=", ".join(e.id for e in exercise_set.exercises)))
    return exercise


def _grade(exercise_ids: list[str]) -> Result:
    from . import cells

    lang = _state.lang
    try:
        notebook = notebook_path()
        exercise_set = _exercise_set(notebook)
        files = {_exercise(exercise_set, e).file for e in exercise_ids} or None
    except _Problem as problem:
        return problem.result
    from ..instructor import notebook_cells
    from ..instructor.batch import grader_argv

    # this grader, in isolated mode: nothing beside the notebook (a click.py, a numpy/)
    # is on its import path, whatever the kernel's
    command = grader_argv(exercise_set.id, "--submission", notebook, "--json", "--format",
                          "notebook", "--lang", lang, "--course", _course_dir(notebook),
                          *_state.options,
                          *(arg for ex_id in exercise_ids for arg in ("--exercise", ex_id)))
    done = subprocess.run(command, capture_output=True, text=True, cwd=str(notebook.parent),
                          stdin=subprocess.DEVNULL, check=False)
    try:
        document = json.loads(done.stdout)
        saved = notebook_cells.read(notebook)
    except (ValueError, notebook_cells.NotebookError):
        error = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return Result(lang=lang, notes=(render(Msg("notebook-not-graded", error=error[-1]
                                                   if error else f"exit {done.returncode}"),
                                               lang),))
    document = json.loads(cells.where_in_cells(
        json.dumps(document, ensure_ascii=False), saved,
        [e.file for e in exercise_set.exercises], lang))
    notes = [document["problem"]] if document.get("problem") else []
    history, transform = _history()
    late = cells.unsaved(saved, history, files, transform)
    if late:
        notes.insert(0, render(Msg("notebook-unsaved", cells=cells.cells_text(late, lang)),
                               lang))
    return Result(document, lang, tuple(notes))


def _history() -> tuple[list[str], Any]:
    """The sources this kernel ran (IPython's ``_ih``) and its input transformation;
    none outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return [], lambda code: code
    shell = get_ipython()
    if shell is None:
        return [], lambda code: code
    return list(shell.user_ns.get("_ih", []))[:-1], shell.transform_cell


def check(exercise_id: str) -> Result:
    """Grade one exercise of the saved notebook."""
    return _grade([exercise_id])


def check_all() -> Result:
    """Grade the whole set from the saved notebook."""
    return _grade([])


def hint(exercise_id: str, next: bool = False) -> Result:
    """The hints of ``exercise_id`` revealed so far; with ``next=True`` the next one too
    (as ``attn-grade hint``: each hint revealed counts in your progress, so looking again
    costs nothing and only ``next=True`` reveals)."""
    from ..judge.msg import Msg
    from ..report.messages import render
    from ..report.progress import Progress
    from ..report.student_view import hint_lines

    try:
        folder = notebook_path().parent
        exercise = _exercise(_exercise_set(folder / "x.ipynb"), exercise_id)
    except _Problem as problem:
        return problem.result
    assert _state.set_id is not None
    mine = Progress(folder)
    shown, total = mine.record(_state.set_id, exercise_id).hints, len(exercise.hints)
    if next and shown < total:
        shown = mine.hint_shown(_state.set_id, exercise_id)
        mine.save()
    lines = [line for line in hint_lines(exercise, shown, _state.lang) if line] if shown \
        else []
    if shown < total:
        lines.append(render(Msg("notebook-hint-next", n=shown + 1, total=total,
                                call=f"ag.hint({exercise_id!r}, next=True)"), _state.lang))
    return Result(lang=_state.lang, lines=tuple(lines))
