"""The class report of a folder of results, as ``attn-grade report`` and
``grade-all --report`` write it: read (``class_report.read_folder``), aggregated with
the set's misconception messages when the course that graded it is at hand, and drawn
(``class_page``) or written as data.
"""

import json
from pathlib import Path

from ..course import loader as spec_loader
from ..course.spec import LANGUAGES, Course, ExerciseSet
from ..errors import CourseError, Refusal
from ..judge.msg import Msg
from ..report import render as report
from . import class_report


def require_matplotlib(lang: str) -> None:
    """Refuse (exit 2, said in ``lang``) to draw a class report without matplotlib."""
    from .class_page import INSTALL_COMMAND, report_extra_available

    if not report_extra_available():
        raise Refusal(report.render(Msg("class-needs-report-extra", command=INSTALL_COMMAND),
                                    lang))


def class_report_text(folder: Path, output: Path, lang: str, fmt: str,
                      course: Course | None, exercise_set: ExerciseSet | None = None) -> str:
    """The class report of the results in ``folder``: an HTML page (``fmt`` "html") that
    will be written to ``output`` (its links to the results are relative to it), or
    JSON data.  ``course``: where the set's misconception messages are looked up (none:
    misconceptions shown by tag)."""
    if fmt == "html":
        require_matplotlib(lang)
    entries, rows = class_report.read_folder(folder)
    if not entries:
        raise CourseError(report.render(Msg("class-no-results", folder=folder), lang))
    if exercise_set is None and course is not None:
        exercise_set = _graded_set(course, class_report.set_id(entries))
    data = class_report.aggregate(
        entries, rows, class_report.set_messages(exercise_set) if exercise_set else {},
        {lang: exercise_set.title.get(lang) for lang in LANGUAGES} if exercise_set else None)
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2)
    from .class_page import href_to, page

    return page(data, lang, href_to(folder.resolve(), output.resolve()))


def _graded_set(course: Course, set_id: str | None) -> ExerciseSet | None:
    """The set the results were graded on, if ``course`` has it (else: tags alone)."""
    try:
        return spec_loader.load_set(course, set_id) \
            if set_id in course.set_ids() else None
    except CourseError:
        return None     # the course is not the one graded: tags alone
