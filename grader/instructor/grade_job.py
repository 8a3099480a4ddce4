"""What grade-all asks a worker to grade: one student's folder of stub files, as a
typed job (``GradeJob``) sent as one line of JSON; and the grading itself, as the
worker runs it (``grade``): the set graded with the worker's Warm and the result
rendered as a Gradescope results document, the one ``attn-grade SET --json`` prints.
"""

import dataclasses
from pathlib import Path
from typing import Any

from .. import grading
from ..course import draws
from ..course import loader as spec_loader
from ..errors import ExitCode
from ..report import render as report
from ..report.progress import Progress
from ..run import sandbox


@dataclasses.dataclass(frozen=True)
class GradeJob:
    """One student's grading: the set, the course, the folder of their stub files."""

    set_id: str
    course: str                      # the course folder
    folder: str = ""                 # the student's stub files (a private copy)
    student: str | None = None       # whose per-student numbers (--student)
    lang: str = "en"
    exercises: tuple[str, ...] = ()  # only these (none: all)
    isolation: str | None = None     # none: the strongest available
    required: str | None = None      # --require-isolation
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)   # Limits overrides
    hidden_visibility: str = "hidden"

    def to_plain(self) -> dict[str, Any]:
        """The job as JSON-ready data (``from_plain`` reads it back)."""
        plain = dataclasses.asdict(self)
        plain["exercises"] = list(self.exercises)
        return plain

    @classmethod
    def from_plain(cls, plain: Any) -> "GradeJob":
        """The job ``to_plain`` made; ValueError for anything else."""
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(plain, dict) or not set(plain) <= names or \
                not isinstance(plain.get("set_id"), str) or \
                not isinstance(plain.get("course"), str):
            raise ValueError(f"not a grading job: {plain!r:.200}")
        return cls(**{**plain, "exercises": tuple(plain.get("exercises", ())),
                      "limits": dict(plain.get("limits") or {})})


def grade(job: GradeJob, warm: grading.Warm | None = None) -> tuple[int, dict[str, Any]]:
    """(exit code, results document) of ``job``, as ``attn-grade SET --submission FOLDER
    --json`` would give them; ``warm``: what the worker keeps between students.  A
    problem in the course raises CourseError."""
    course = spec_loader.Course(Path(job.course).resolve())
    level = job.isolation or sandbox.strongest_available()
    only = set(job.exercises) or None
    folder = Path(job.folder)
    with grading.warmed(course, job.set_id, folder, level, job.required, job.limits, only,
                        warm) as early:
        exercise_set = spec_loader.load_set(course, job.set_id, only=job.exercises or None)
        run = grading.grade_set(draws.drawn(exercise_set, folder), folder, level, job.limits,
                                only, job.required, job.student, warm=early)
    document = report.gradescope(run, job.lang, job.hidden_visibility,
                                 Progress(folder).hints_used(job.set_id))
    return (ExitCode.PASSED if run.all_passed else ExitCode.FAILED), document
