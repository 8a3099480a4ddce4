"""A run's student processes, one an exercise, of which at most one is alive: no
exercise's code can reach (signal, kill) another's live process.  The grading owns
them; its YAML checks and the hidden tests (``judge.hidden.StudentCalls``) reach
them through here only."""

from collections.abc import Iterator
from typing import Any

from .outcome import CallOutcome
from .student import StudentProcess, wire_request


class ExerciseProcesses:
    def __init__(self) -> None:
        self.by_id: dict[str, StudentProcess] = {}

    def add(self, exercise_id: str, process: StudentProcess) -> None:
        self.by_id[exercise_id] = process

    def __getitem__(self, exercise_id: str) -> StudentProcess:
        return self.by_id[exercise_id]

    def __iter__(self) -> Iterator[StudentProcess]:
        return iter(self.by_id.values())

    def __bool__(self) -> bool:
        return bool(self.by_id)

    def current(self, exercise_id: str) -> StudentProcess:
        """The exercise's process, every other one closed first."""
        process = self.by_id[exercise_id]
        for other in self.by_id.values():
            if other is not process:
                other.close()
        return process

    def call(self, exercise_id: str, function: str, args: Any,
             kwargs: Any) -> tuple[CallOutcome, bool]:
        """A call with arguments already in wire form (a hidden test's, as its fork sent
        them): its outcome, and whether that is the module's failure to load."""
        process = self.current(exercise_id)
        outcome = process.call_many([wire_request(function, args, kwargs)])[0]
        return outcome, outcome is process.load_failure

    def close_all(self, wait: bool = True) -> None:
        for process in self.by_id.values():
            process.close(wait=wait)
