"""What grading produced: plain records that point back to their spec by id."""

import dataclasses
import functools
from typing import Any

from ..course.spec import Exercise, Misconception, Text
from .msg import Msg, plain, unplain
from .points import add_points


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
    uses: tuple = ()           # functions a hidden pytest test called
    function: str = ""         # the function a YAML check calls
    shadowed: tuple = ()       # rule tags that matched too but yield to a wrong version
    reveal: str = "answer"     # what the check's feedback may show (see Check.reveal)
    output: str = ""           # what the student's code printed (failed visible checks)
    answer_key: str = ""       # a digest of the (picked) answer: equal answers, equal keys
    wrong_keys: tuple = ()     # (tag, digest of its wrong version's answer here) pairs

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0

    @property
    def hidden(self) -> bool:
        return self.visibility == "hidden"

    def with_points(self, points: float) -> "CheckResult":
        return dataclasses.replace(self, max_score=points)

    def to_plain(self) -> dict[str, Any]:
        """The parts that judging decides, as JSON-able data (to cross a fork).

        Values that are not plain (arrays, sympy, fractions) travel as the text
        the report would show, so the parent never rebuilds a student's object.
        """
        return {"passed": bool(self.passed), "lines": [plain(m) for m in self.lines],
                "tags": [str(t) for t in self.tags], "answered": bool(self.answered),
                "shadowed": [str(t) for t in self.shadowed],
                "answer_key": str(self.answer_key),
                "wrong_keys": [[str(t), str(k)] for t, k in self.wrong_keys],
                "output": self.output[:OUTPUT_KEPT],
                "margin": self.margin if isinstance(self.margin, float) else None}

    @classmethod
    def from_plain(cls, data: dict[str, Any], **base: Any) -> "CheckResult":
        """Rebuild from ``to_plain`` data and the fields that come from the spec."""
        margin = data.get("margin")
        return cls(passed=data.get("passed") is True,
                   lines=tuple(unplain(m) for m in data.get("lines", ())),
                   tags=tuple(t for t in data.get("tags", ()) if type(t) is str),
                   shadowed=tuple(t for t in data.get("shadowed", ()) if type(t) is str),
                   answer_key=data["answer_key"] if type(data.get("answer_key")) is str else "",
                   wrong_keys=tuple((t, k) for t, k in _pairs(data.get("wrong_keys"))),
                   output=data["output"] if type(data.get("output")) is str else "",
                   answered=data.get("answered") is True,
                   margin=float(margin) if isinstance(margin, (int, float))
                   and not isinstance(margin, bool) else None, **base)


def _pairs(value: Any) -> list[tuple[str, str]]:
    """[tag, key] pairs of a result's plain data, each checked (the data crossed a fork)."""
    if not isinstance(value, list):
        return []
    return [(p[0], p[1]) for p in value if isinstance(p, list) and len(p) == 2
            and type(p[0]) is str and type(p[1]) is str]


@dataclasses.dataclass(frozen=True)
class ExerciseResult:
    exercise: Exercise
    checks: tuple

    @functools.cached_property   # the report asks for each many times
    def score(self) -> float:
        return add_points(c.score for c in self.checks)

    @functools.cached_property
    def max_score(self) -> float:
        return add_points(c.max_score for c in self.checks)


@dataclasses.dataclass(frozen=True)
class RunResult:
    set_id: str
    title: Text
    exercises: tuple
    isolation: str
    submission: str
    seconds: float
    released: bool = False     # hidden checks not available (student release)

    @functools.cached_property
    def score(self) -> float:
        return add_points(e.score for e in self.exercises)

    @functools.cached_property
    def max_score(self) -> float:
        return add_points(e.max_score for e in self.exercises)

    @property
    def all_passed(self) -> bool:
        return all(c.passed for e in self.exercises for c in e.checks)


def misconception_line(misconception: Misconception) -> Msg:
    text = misconception.message if misconception.message is not None \
        else GRADER_TAGS[misconception.tag]
    return Msg("misconception", tag=misconception.tag, text=text)


# the grader's own misconceptions, which no YAML declares: tag -> their words
GRADER_TAGS = {"notes-numbers": Msg("tag-notes-numbers")}


# ------------------------------------------------------------ crossing a fork

OUTPUT_KEPT = 8000   # characters of a student's printed output a result keeps
