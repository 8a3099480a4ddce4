"""Finished hidden tests kept by the calls they made and the answers they got, so a
process that grades many times runs pytest only for answers it has not seen."""

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ...course.spec import Exercise
from .events import CallAsked, Finished


def answer_key(reply: dict) -> str:
    """Everything a test can see of a call's outcome (``student.call`` gives it what the
    call printed, too)."""
    return json.dumps(reply, sort_keys=True)


class Replays:
    """Finished hidden tests by the calls they made and the answers they got, kept by
    a process that grades many times (a class worker, watch, dev check).

    A test is a function of the answers it gets (its randomness seeded, no clock): a
    test whose every call gets, in order, the very answers a recorded run got ends as
    that run did, so its result is reused without pytest; its calls are still made
    in the student's process.  Any other answer, and the test runs for real.
    """

    KEPT = 8   # runs kept per test and variant

    def __init__(self):
        self.files: tuple | None = None
        self.order: list[str] | None = None
        self.runs: dict[tuple[str, tuple], list[tuple[list[tuple[str, str]], Finished]]] = {}
        self.requests: dict[str, CallAsked] = {}   # a recorded call, parsed once

    def follow(self, by_file: Mapping[Path, Exercise]) -> "Replays":
        """These replays, for these test files as they are now: other files, or a
        changed one, forget every run recorded."""
        files = tuple(sorted((str(p), os.stat(p).st_mtime_ns, os.stat(p).st_size)
                             for p in by_file))
        if files != self.files:
            self.files, self.order, self.runs, self.requests = files, None, {}, {}
        return self

    def record(self, event: Finished, exercise: Exercise, steps: list[tuple[str, str]]) -> None:
        runs = self.runs.setdefault((event.test, exercise.copy_key), [])
        if len(runs) < self.KEPT and all(kept != steps for kept, _ in runs):
            runs.append((list(steps), event))

    def replay(self, nodeid: str, exercise: Exercise, answer: Callable[[CallAsked], dict],
               made: list[tuple[str, dict]]) -> Finished | None:
        """The recorded end of the run whose calls this student's answers follow (the
        calls made here by ``answer``, in order, each added to ``made`` with its reply);
        None when none does."""
        runs = self.runs.get((nodeid, exercise.copy_key), [])
        step = 0
        while runs:
            ended = [event for steps, event in runs if len(steps) == step]
            if ended:
                return ended[0]
            request = runs[0][0][step][0]
            if request not in self.requests:   # parsed once for every student
                self.requests[request] = CallAsked.from_key(request)
            reply = answer(self.requests[request])
            made.append((request, reply))
            taken = (request, answer_key(reply))
            runs = [(steps, event) for steps, event in runs if steps[step] == taken]
            step += 1
        return None
