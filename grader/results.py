"""What grading produced: plain records that point back to their spec by id."""

import dataclasses

from .feedback import Msg


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """One graded check (a YAML case or a hidden pytest test)."""

    exercise: str
    file: str
    check: str
    visibility: str
    passed: bool
    max_score: float
    lines: tuple = ()          # Msg values, phrased by the renderer
    tags: tuple = ()           # misconception ids that matched
    kind: str = "case"         # case | pytest
    answered: bool = False     # the call returned a value (so the inputs are worth showing)
    margin: float | None = None  # share of the tolerance used by a passing answer
    description: object = None  # Text or None

    @property
    def score(self):
        return self.max_score if self.passed else 0.0

    @property
    def hidden(self):
        return self.visibility == "hidden"

    def with_points(self, points):
        return dataclasses.replace(self, max_score=points)


@dataclasses.dataclass(frozen=True)
class ExerciseResult:
    exercise: object           # the Exercise spec
    checks: tuple

    @property
    def score(self):
        return sum(c.score for c in self.checks)

    @property
    def max_score(self):
        return sum(c.max_score for c in self.checks)


@dataclasses.dataclass(frozen=True)
class RunResult:
    set_id: str
    title: object              # Text
    exercises: tuple
    isolation: str
    submission: str
    seconds: float
    released: bool = False     # hidden checks not available (student release)

    @property
    def score(self):
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self):
        return sum(e.max_score for e in self.exercises)

    @property
    def all_passed(self):
        return all(c.passed for e in self.exercises for c in e.checks)


def misconception_line(misconception):
    return Msg("misconception", tag=misconception.tag, text=misconception.message)
