"""Which folder of stub files a grading reads: the student's own folder, or a private
copy of the stub files found in an upload or a notebook (``uploads``,
``notebook_cells``); or why an upload cannot be graded, said in the student's language.
"""

import os
from collections.abc import Sequence
from pathlib import Path

from ..course.spec import Exercise, ExerciseSet
from ..judge.msg import Msg
from ..report import render as report
from . import notebook_cells
from . import uploads as submission_files

# why a submission is not graded: (status, message), the status "error" or "empty"
Problem = tuple[str, str]


def submission_folder(exercise_set: ExerciseSet, selected: Sequence[Exercise],
                      submission: str | None, upload: str | None, tmp: str | Path,
                      lang: str = "en") -> tuple[Path | None, Problem | None]:
    """(folder to grade, None), or (None, (status, message)) for an upload not to grade.

    An upload's stub files are copied into ``tmp`` (see ``submission_files``).
    """
    notebook = submission is not None and Path(submission).is_file()
    if not upload and not notebook:
        return (Path(submission) if submission else exercise_set.exercises_dir), None
    os.chmod(tmp, 0o711)     # a child running as 'nobody' must reach the copy
    folder = Path(tmp) / "submission"
    # a notebook's cells become every stub file of the set (a multihead may import attention)
    names = submission_files.stub_names(exercise_set.exercises if notebook else selected)
    try:
        found = notebook_cells.collect(upload or str(submission), names, folder,
                                       exercise_set.exercises_dir)
    except notebook_cells.NotebookError as exc:
        if exc.cell is not None:   # said as a mistake in the student's own code
            return None, ("error", exc.said(lang))
        return None, ("error", not_graded(exc.said(lang), lang))
    except submission_files.SubmissionError as exc:
        return None, ("error", not_graded(exc.said(lang), lang))
    if not found:
        return None, ("empty", not_graded(
            report.render(Msg("upload-empty", files=", ".join(names)), lang), lang))
    return folder, None


def not_graded(reason: str, lang: str) -> str:
    return report.render(Msg("not-graded", reason=reason), lang)
