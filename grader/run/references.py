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
from types import ModuleType
from typing import Any

from ..course.spec import Check
from ..errors import CourseError
from . import wire


class Reference:
    """Calls the reference (or a registered wrong version) of one exercise.

    Answers are remembered per (function, inputs): a watch loop or a class
    computes each reference answer once, not once per grading.
    """

    def __init__(self, exercise):
        self.exercise = exercise
        self._module = None
        self._answers: dict[tuple[str, str], Any] = {}

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

    def call(self, name: str, args: Sequence[Any], kwargs: dict[str, Any], check: Check | None,
             purpose: str = "graded function") -> Any:
        """The plain-data answer of ``name``; its failure is a course error."""
        key = (name, wire.dumps([list(args), kwargs]))
        if key not in self._answers:
            self._answers[key] = self._call(name, args, kwargs, check, purpose)
        return self._answers[key]

    def _call(self, name, args, kwargs, check, purpose):
        func = self.function(name, purpose)
        kwargs = {**_accepted(func, self.exercise.params), **kwargs}
        try:
            value = func(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            return wire.decode(wire.encode(value))
        except Exception as exc:
            where = f" on check {check.id!r}" if check is not None else ""
            raise CourseError(
                f"the reference {name}() raised {type(exc).__name__}: {exc}{where}",
                check.source if check is not None else self.exercise.solution_path,
                check.line if check is not None else None,
                hint="fix the solution or the check's inputs") from None


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
