"""The reference solution of an exercise, run on the trusted side.

Instructor code: imported into the grader process (never the student's).
Its answers pass through the wire format too, so that reference and student
values reach the comparison engine as the same plain types.
"""

import copy
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import wire
from ..course import cache
from ..course.spec import Check
from ..errors import CourseError


class Reference:
    """Calls the reference (or a registered wrong version) of one exercise.

    Answers are remembered per (function, inputs): a watch loop or a class
    computes each reference answer once, not once per grading.
    """

    def __init__(self, exercise, stored: "StoredAnswers | None" = None):
        self.exercise = exercise
        self.stored = stored
        self._module: ModuleType | None = None
        self._answers: dict[tuple[str, str], Any] = {}
        self._kept: dict[tuple, Any] = {}

    def kept(self, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()``, once per key: what a grading derives from this exercise alone
        (its calls, a check's expected and wrong answers), kept for the next student."""
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]

    @property
    def available(self) -> bool:
        return self.exercise.solution_path.is_file()

    def module(self) -> ModuleType:
        if self._module is None:
            self._module = _import(self.exercise)
        return self._module

    def function(self, name: str, purpose: str = "graded function") -> Callable[..., Any]:
        func = getattr(self.module(), name, None)
        if not callable(func):
            raise CourseError(f"the solution has no function {name!r} ({purpose} of "
                              f"exercise {self.exercise.id!r})", self.exercise.solution_path,
                              hint=f"define {name} in the solution or fix the exercise YAML")
        return func

    def takes(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """The numbers of ``params`` (a variant's) that function ``name`` takes."""
        return _accepted(self.function(name), params)

    def call(self, name: str, args: Sequence[Any], kwargs: dict[str, Any], check: Check | None,
             purpose: str = "graded function") -> Any:
        """The plain-data answer of ``name``; its failure is a course error."""
        key = (name, wire.dumps([list(args), kwargs]))
        if key not in self._answers:
            self._answers[key] = self._stored_or_call(key, args, kwargs, check, purpose)
        return self._answers[key]

    def _stored_or_call(self, key, args, kwargs, check, purpose):
        if self.stored is None:
            return self._call(key[0], args, kwargs, check, purpose)
        where = "\0".join((self.exercise.id, wire.dumps(self.exercise.params or {}), *key))
        text = self.stored.get(where)
        if text is not None:
            return wire.loads(text, lazy=True)
        value = self._call(key[0], args, kwargs, check, purpose)
        self.stored.add(where, wire.dumps(value))
        return value

    def _call(self, name, args, kwargs, check, purpose):
        func = self.function(name, purpose)
        kwargs = {**_accepted(func, self.exercise.params), **kwargs}
        try:
            value = func(*copy.deepcopy(wire.materialized(list(args))),
                         **copy.deepcopy(wire.materialized(kwargs)))
            return wire.decode(wire.encode(value), lazy=True)
        except Exception as exc:
            where = f" on check {check.id!r}" if check is not None else ""
            raise CourseError(
                f"the reference {name}() raised {type(exc).__name__}: {exc}{where}",
                check.source if check is not None else self.exercise.solution_path,
                check.line if check is not None else None,
                hint="fix the solution or the check's inputs") from None


class StoredAnswers:
    """One set's reference answers kept on disk (in the set cache, as trusted as it),
    as wire text: a grading with every answer stored runs no solution and imports
    nothing for them (sympy, for a formula).  ``name``: ``cache.answers_key``."""

    def __init__(self, name: str):
        self.name = name
        entry = cache.read(name) or {}
        self._answers = {k: v for k, v in entry.items()
                         if type(k) is str and type(v) is str}
        self._new = False

    @classmethod
    def of_set(cls, course_root: Path, set_id: str) -> "StoredAnswers | None":
        name = cache.answers_key(course_root, set_id)
        return cls(name) if name else None

    def get(self, where: str) -> str | None:
        return self._answers.get(where)

    def add(self, where: str, text: str) -> None:
        self._answers[where] = text
        self._new = True

    def save(self) -> None:
        """Write the entry if this run added answers to it."""
        if self._new:
            cache.write(self.name, self._answers)
            self._new = False


def _accepted(func, params):
    """The variant's numbers that ``func`` takes as keyword arguments."""
    if not params:
        return {}
    try:
        names = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in params.items() if k in names}


def _import(exercise):
    path = exercise.solution_path
    if not path.is_file():
        raise CourseError(f"the reference solution {path.name} is missing", path,
                          hint=f"create {path} with the graded functions")
    name = f"_attn_grade_reference.{exercise.set_id}.{path.stem}".replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    sys.path.insert(0, folder)   # solutions may import each other
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CourseError(f"importing the solution raised {type(exc).__name__}: {exc}",
                          path) from None
    finally:
        sys.path.remove(folder)
    return module
