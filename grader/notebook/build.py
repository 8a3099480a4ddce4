"""Writing a set's student notebook (``attn-grade notebook SET``): the intro, and per
exercise its prompt, its stub's code cell (tagged with its file) and a check cell."""

from pathlib import Path
from typing import Any

from ..judge.msg import Msg
from ..report.messages import render

INSTALL_COMMAND = "python3 -m pip install 'attn-grade[notebook]'"
META_KEY = "attn_grade"


class NotebookUnavailable(RuntimeError):
    """nbformat is missing: the notebook extra is not installed."""


def nbformat_available() -> bool:
    try:
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def build(exercise_set: Any, lang: str) -> Any:
    """The student notebook of ``exercise_set`` (an nbformat NotebookNode)."""
    try:
        import nbformat
        from nbformat import v4
    except ImportError:
        raise NotebookUnavailable(INSTALL_COMMAND) from None
    from ..report.student_view import prompt_text

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
