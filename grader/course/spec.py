"""Loaded course objects: frozen, built once from YAML, never mutated.

A spec says what to check; results (``results.py``) say what happened and
point back to their spec by id.
"""

import dataclasses
import functools
import hashlib
import os
from pathlib import Path
from typing import Any

from .limits import Limits

LANGUAGES = ("en", "zh")   # every text of a course, and every message, in each of these


@dataclasses.dataclass(frozen=True)
class Text:
    """Bilingual text."""

    zh: str
    en: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclasses.dataclass(frozen=True)
class Compare:
    """How an answer is compared: a kind plus its tolerance parameters."""

    kind: str
    params: dict

    def param(self, name: str, default: Any = None) -> Any:
        value = self.params.get(name)
        return default if value is None else value


@dataclasses.dataclass(frozen=True)
class Rule:
    """A value rule for a known wrong answer: ``ratio``, ``equals``, ``nonfinite``..."""

    kind: str
    value: Any


@dataclasses.dataclass(frozen=True)
class Misconception:
    """A named wrong answer: a wrong reference function or a value rule."""

    tag: str
    message: Text | None     # None: the grader's own (its words: judge.results.GRADER_TAGS)
    wrong: str | None        # name of a wrong function in the solution module
    rule: Rule | None
    functions: tuple         # graded functions it applies to (empty: all)
    checks: tuple            # check ids it applies to (empty: all)

    def applies_to(self, check: "Check") -> bool:
        return ((not self.functions or check.function in self.functions)
                and (not self.checks or check.id in self.checks))


@dataclasses.dataclass(frozen=True)
class Check:
    """One graded call: inputs, how to compare, points, visibility."""

    id: str
    function: str
    args: tuple
    kwargs: dict
    compare: Compare
    visibility: str
    points: float | None
    pick: Any
    expect: Any
    has_expect: bool
    description: Text | None
    source: Path
    line: int
    reveal: str = "answer"     # what a failure may show: answer | diagnosis | nothing
    twins: tuple = ()          # a visible check's: the hidden checks that let it count

    @property
    def hidden(self) -> bool:
        return self.visibility == "hidden"


@dataclasses.dataclass(frozen=True)
class Exercise:
    id: str
    set_id: str
    title: Text
    prompt: Text
    file: str
    functions: tuple
    points: float
    limits: Limits
    hints: tuple
    misconceptions: tuple
    checks: tuple
    spec_path: Path
    solution_path: Path
    test_files: tuple
    submission_points: float | None = None   # in a release: the points at submission
    variants: tuple = ()       # per-student numbers (dicts); the first is the notes' own
    variant: int = 0           # which of them this copy of the spec stands for
    seed: int = 0              # the seed offset its inputs were drawn with (dev check's seeds)
    source: str = ""           # the hash of its set's YAML and data files when loaded

    @property
    def module(self) -> str:
        return Path(self.file).stem

    @functools.cached_property
    def copy_key(self) -> tuple:
        """Which copy of the exercise this is: its id, the seed its inputs were drawn
        with, its numbers, its limits and the hash of its set's YAML and data files;
        what is kept between gradings (reference answers, judged answers, replayed
        tests) is kept per copy, so a YAML or data file updated under a watch loop is
        not judged by the old one (a solution's Python is not in it: restart)."""
        from .. import wire

        return (self.set_id, self.id, self.seed, wire.dumps(self.params or {}),
                repr(self.limits), self.source)

    @functools.cached_property
    def child_modules(self) -> tuple:
        """Modules the student's process should import before the student's module:
        sympy when the checks pass symbols."""
        from .. import wire

        def has_sympy(value):
            if isinstance(value, (list, tuple)):
                return any(map(has_sympy, value))
            if isinstance(value, dict):
                return any(map(has_sympy, value.values()))
            return wire.symbolic(value)   # the set cache keeps sympy values as trees

        symbolic = any(has_sympy(c.args) or has_sympy(c.kwargs) for c in self.checks)
        return ("sympy",) if symbolic else ()

    @property
    def params(self) -> dict:
        """The numbers of this variant, passed to the reference where it takes them."""
        return dict(self.variants[self.variant]) if self.variants else {}

    def with_variant(self, index: int) -> "Exercise":
        return dataclasses.replace(self, variant=index % len(self.variants)) \
            if self.variants else self

    def for_student(self, student: str | None) -> "Exercise":
        """The variant a student gets: drawn from their id, the notes' numbers without one."""
        if not student or len(self.variants) < 2:
            return self
        digest = hashlib.sha256(f"{self.set_id}/{self.id}/{student}".encode()).hexdigest()
        return self.with_variant(int(digest, 16) % len(self.variants))

    def wrong_targets(self, misconception: Misconception) -> tuple:
        """The graded functions a misconception's wrong version stands in for."""
        if misconception.functions:
            return misconception.functions
        if misconception.checks:
            return tuple(dict.fromkeys(c.function for c in self.checks
                                       if c.id in misconception.checks))
        return self.functions


@dataclasses.dataclass(frozen=True)
class ExerciseSet:
    id: str
    title: Text
    exercises: tuple
    exercises_dir: Path
    solutions_dir: Path
    released: bool = False
    mutation_score: float | None = None   # dev mutants' threshold (killed / not equivalent)

    def exercise(self, exercise_id: str) -> Exercise | None:
        for ex in self.exercises:
            if ex.id == exercise_id:
                return ex
        return None


@dataclasses.dataclass(frozen=True)
class Course:
    root: Path

    def __post_init__(self) -> None:
        # absolute: a loaded set keeps its paths (in the cache too, which every process
        # shares), and a relative one would name other files from another folder
        object.__setattr__(self, "root", Path(os.path.abspath(self.root)))

    @property
    def exercises_dir(self) -> Path:
        return self.root / "exercises"

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    def set_ids(self) -> list[str]:
        return sorted(p.parent.name for p in self.exercises_dir.glob("*/set.yaml"))
