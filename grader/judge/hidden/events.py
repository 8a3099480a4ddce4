"""What a hidden-test fork tells the grader, as typed events.

The fork emits each as JSON (``to_plain``); the grader reads it back with
``read_event``, which takes only known kinds with fields of the right types, so
nothing the fork sends is trusted as more than data.
"""

import dataclasses
import json
from pathlib import Path
from typing import Any

from ...errors import CourseError


class EventError(ValueError):
    """The fork sent something that is not one of its events."""


@dataclasses.dataclass(frozen=True)
class Collected:
    """The tests collected, in the session's order."""

    items: tuple[str, ...]

    def to_plain(self) -> dict[str, Any]:
        return {"items": list(self.items)}


@dataclasses.dataclass(frozen=True)
class Started:
    test: str

    def to_plain(self) -> dict[str, Any]:
        return {"start": self.test}


@dataclasses.dataclass(frozen=True)
class CallAsked:
    """A test's call into the student's process, its arguments in wire form."""

    function: str
    exercise: str
    args: Any
    kwargs: Any

    def to_plain(self) -> dict[str, Any]:
        return {"call": self.function, "exercise": self.exercise, "args": self.args,
                "kwargs": self.kwargs}

    def key(self) -> str:
        """The call as one string (the same call, the same key)."""
        return json.dumps([self.function, self.exercise, self.args, self.kwargs],
                          sort_keys=True)

    @classmethod
    def from_key(cls, key: str) -> "CallAsked":
        return cls(*json.loads(key))


@dataclasses.dataclass(frozen=True)
class Finished:
    """A test's end: its result as ``CheckResult.to_plain`` data, its points marker and
    the student's functions it called."""

    test: str
    exercise: str
    name: str
    doc: str | None
    points: float | None
    result: dict
    uses: tuple[str, ...] = ()

    def to_plain(self) -> dict[str, Any]:
        return {"test": self.test, "exercise": self.exercise, "name": self.name,
                "doc": self.doc, "points": self.points, "result": self.result,
                "uses": list(self.uses)}


@dataclasses.dataclass(frozen=True)
class CourseProblem:
    """An instructor's mistake found in the fork (an undeclared tag, a test file that
    cannot be collected)."""

    message: str
    path: str | None = None
    line: int | None = None
    hint: str | None = None

    @classmethod
    def of(cls, exc: CourseError) -> "CourseProblem":
        return cls(exc.message, str(exc.path) if exc.path else None, exc.line, exc.hint)

    def to_plain(self) -> dict[str, Any]:
        return {"course_error": dataclasses.asdict(self)}

    def error(self) -> CourseError:
        return CourseError(self.message, Path(self.path) if self.path else None, self.line,
                           self.hint)


Event = Collected | Started | CallAsked | Finished | CourseProblem


def read_event(data: Any) -> Event:
    """The event ``data`` is; EventError for anything else."""
    if type(data) is not dict:
        raise EventError("not an object")
    try:
        return _read(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise EventError(str(exc)) from None


def _read(data: dict) -> Event:
    if "items" in data:
        return Collected(tuple(_str(i) for i in _list(data["items"])))
    if "start" in data:
        return Started(_str(data["start"]))
    if "call" in data:
        return CallAsked(_str(data["call"]), _str(data["exercise"]), _list(data["args"]),
                         _dict(data["kwargs"]))
    if "test" in data:
        points = data.get("points")
        return Finished(_str(data["test"]), _str(data["exercise"]), _str(data["name"]),
                        _optional_str(data.get("doc")),
                        float(points) if isinstance(points, (int, float))
                        and not isinstance(points, bool) else None,
                        _dict(data["result"]), tuple(_str(u) for u in _list(data["uses"])))
    if "course_error" in data:
        raw = _dict(data["course_error"])
        line = raw.get("line")
        return CourseProblem(_str(raw["message"]), _optional_str(raw.get("path")),
                             line if type(line) is int else None,
                             _optional_str(raw.get("hint")))
    raise EventError("an unknown event")


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("expected a string")
    return value


def _optional_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _list(value: Any) -> list:
    if type(value) is not list:
        raise TypeError("expected a list")
    return value


def _dict(value: Any) -> dict:
    if type(value) is not dict:
        raise TypeError("expected an object")
    return value
