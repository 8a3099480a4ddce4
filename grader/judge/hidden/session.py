"""The grader's side of a hidden-test session: a bounded fork runs pytest
(``plugin``), the grader answers its calls through the run's ``StudentCalls`` and
turns its events into results, each test bounded in trusted time."""

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from ...course.spec import Exercise
from ...errors import CourseError
from ...run import processes
from ...run.outcome import CallOutcome
from .. import bounded, jobs
from ..msg import Msg
from ..results import CheckResult
from .events import CallAsked, Collected, CourseProblem, EventError, Finished, Started, read_event
from .plugin import rootdir, run_session
from .replays import Replays, answer_key


class StudentCalls(Protocol):
    """A run's student processes, one an exercise, as the hidden tests reach them; the
    grading owns them (and keeps one alive at a time)."""

    def call(self, exercise_id: str, function: str, args: Any,
             kwargs: Any) -> tuple[CallOutcome, bool]:
        """The outcome of a call with arguments in wire form, and whether it is the
        module's failure to load."""

    def close_all(self) -> None:
        """Close every process (a test that overran may have left one mid-call)."""


class Session:
    """One pytest session over the hidden tests of ``exercises``, started at once.

    Its fork collects the tests while the grader does other work; ``serve(id)``
    then runs the tests of exercise ``id`` (and of any served before), so they
    call the child that exercise's YAML checks just used instead of a new one;
    ``finish()`` runs the rest and returns (exercise, CheckResult, points) in
    the session's order.  ``budget``: seconds of trusted work a test may take
    besides its calls into the student's process; ``allowance``: the seconds of
    trusted work each exercise has left in the run (by id, spent here: the fork's CPU
    during each test), no test having more.  A test that overruns fails alone; the
    tests after it run in a new fork, but those of an exercise with no time left fail
    unrun (judge-allowance).
    """

    def __init__(self, exercises: Sequence[Exercise], calls: StudentCalls,
                 budget: float, replays: "Replays | None" = None,
                 allowance: dict[str, float] | None = None):
        self.allowance = {} if allowance is None else allowance
        self._cpu_at_start: float | None = None
        self.by_file = {t.resolve(): ex for ex in exercises for t in ex.test_files}
        self.by_id = {ex.id: ex for ex in exercises}
        self.calls, self.budget = calls, budget
        self.root = Path(rootdir(self.by_file)) if self.by_file else None
        self._files: dict[str, Exercise] = {}   # a test id's file: its exercise
        self.order: list[str] | None = None
        self.done: dict[str, Finished] = {}
        self.started: str | None = None
        self.turn: set[str] = set()       # exercises whose tests may run now
        self.held: str | None = None      # a test that waits for its exercise's turn
        self.fork: bounded.Fork | None = None
        self.replays = replays.follow(self.by_file) if replays is not None else None
        self.steps: list[tuple[str, str]] = []   # the running test's calls and answers
        # calls a replay made, with their replies, that a fork's tests will ask again
        self.answered: list[tuple[str, dict]] = []
        self.whole = False   # the running fork ran every test before its current one
        if self.replays is not None and self.replays.order is not None:
            self.order = list(self.replays.order)   # replayed until a test is not
        elif self.by_file:
            self._start(None)

    def _start(self, only):
        self.whole = only is None
        if only is not None:   # an exercise with no trusted time left: its tests fail unrun
            for nodeid in only:
                exercise = self.exercise_of(nodeid)
                if self._left(exercise) <= 0:
                    self.done[nodeid] = _overrun_event(nodeid, exercise, jobs.EXERCISE_SECONDS,
                                                       "allowance")
            only = [nodeid for nodeid in only if nodeid not in self.done]
            if not only:
                return
        self.fork = bounded.Fork(functools.partial(run_session, self.by_file, only), self.budget)

    def _left(self, exercise: Exercise) -> float:
        return self.allowance.get(exercise.id, jobs.EXERCISE_SECONDS)

    def _spend(self, nodeid: str, seconds: float) -> None:
        exercise = self.exercise_of(nodeid)
        self.allowance[exercise.id] = self._left(exercise) - seconds

    def exercise_of(self, nodeid: str) -> Exercise:
        file = nodeid.split("::")[0]
        if file not in self._files:   # resolved once a file, not once a test and a look
            path = (self.root / file).resolve() if self.root else None
            self._files[file] = self.by_file.get(path) or next(iter(self.by_file.values()))
        return self._files[file]

    def serve(self, exercise_id: str) -> None:
        """Run every test up to the first of an exercise not served yet."""
        self.turn.add(exercise_id)
        self._replay()
        self._run()

    def finish(self) -> list[tuple[Exercise, CheckResult, float | None]]:
        self.turn.update(self.by_id)
        self._replay()
        self._run()
        return [_rebuild(self.done[nodeid], self.by_id)
                for nodeid in self.order or () if nodeid in self.done]

    def close(self) -> None:
        if self.fork is not None:
            self.fork.close()
            self.fork = None

    def _replay(self):
        """Replay the tests whose turn it is, in order, until one's answers differ from
        every recorded run's; a pytest fork then runs every test (those replayed answered
        with the replies they got) as a grading alone would."""
        if self.fork is not None or self.order is None or self.replays is None:
            return
        for nodeid in self.order:
            if nodeid in self.done:
                continue
            exercise = self.exercise_of(nodeid)
            if exercise.id not in self.turn:
                return
            event = self.replays.replay(nodeid, exercise, self._call, self.answered)
            if event is None:
                # every test from the first, as a grading alone runs them: a test file's
                # module-level draws (its RNG) advance test by test, and the replayed
                # tests' calls are answered with the replies the student already gave
                self._start(None)
                return
            self.done[nodeid] = event

    def _run(self):
        while self.fork is not None:
            if self.held is not None:
                if self.exercise_of(self.held).id not in self.turn:
                    return
                self.held = None
            try:
                event = next(self.fork)
            except StopIteration:
                self.fork = None
                return
            except bounded.Overrun as exc:
                self.fork = None
                self._overrun(exc)
                continue
            self._take(event)

    def _take(self, raw):
        try:
            event = read_event(dict(raw))
        except EventError as exc:
            raise RuntimeError(f"the hidden tests sent {exc}") from None
        if isinstance(event, CallAsked):
            key = event.key()
            reply = self._answered(event, key)
            self.steps.append((key, answer_key(reply)))
            raw.reply(reply)
        elif isinstance(event, CourseProblem):
            raise event.error()
        elif isinstance(event, Collected) and self.order is None:
            self.order = list(event.items)
            if self.replays is not None:
                self.replays.order = list(self.order)
        elif isinstance(event, Started):
            self._started(event.test)
        elif isinstance(event, Finished):
            self._finished(event)

    def _started(self, nodeid):
        self.started = self.held = nodeid
        self.steps = []
        # no more trusted time for the test than its exercise has left
        self.fork.budget = max(0.0, min(self.budget, self._left(self.exercise_of(nodeid))))
        self._cpu_at_start = processes.cpu_seconds(self.fork.pid)

    def _finished(self, event):
        cpu = processes.cpu_seconds(self.fork.pid)
        if cpu is not None and self._cpu_at_start is not None:
            self._spend(event.test, cpu - self._cpu_at_start)
        self.fork.budget, self._cpu_at_start = self.budget, None
        self.done[event.test] = event
        if self.replays is not None and event.test == self.started and self.whole:
            self.replays.record(event, self.exercise_of(event.test), self.steps)

    def _answered(self, event, key):
        """The reply to a fork's call: the one a replay already got for the same call
        (the student's process is asked each call once, as in a grading alone), else
        the process's own."""
        if self.answered and self.answered[0][0] == key:
            return self.answered.pop(0)[1]
        self.answered = []
        return self._call(event)

    def _call(self, asked: CallAsked) -> dict:
        """Make a fork's call into the student's process (the grading owns it)."""
        outcome, load = self.calls.call(asked.exercise, asked.function, asked.args,
                                        asked.kwargs)
        # the module could not be imported: said as such (its import limit, not a call's)
        return {**outcome.to_plain(), "load": load}

    def _overrun(self, exc):
        """The test that overran fails; a new fork runs the ones after it."""
        if exc.why == "crash":
            raise RuntimeError(f"the hidden tests crashed in the grader:\n{exc.detail}") \
                from None
        started = self.started
        if started is None or started in self.done:
            raise CourseError(f"the hidden tests stopped before running ({exc.why})",
                              next(iter(self.by_file))) from None
        spent = max(0.0, min(self.budget, self._left(self.exercise_of(started))))
        self._spend(started, spent)
        self.done[started] = _overrun_event(started, self.exercise_of(started),
                                            spent if spent > 0 else jobs.EXERCISE_SECONDS,
                                            "timeout" if spent > 0 else "allowance")
        self.held, self.answered = None, []
        self.calls.close_all()   # the overrun may have left one mid-call
        only = [nodeid for nodeid in self.order or () if nodeid not in self.done]
        if only:
            self._start(only)


def _overrun_event(nodeid: str, exercise: Exercise, budget: float, why: str) -> Finished:
    msg = Msg("judge-timeout", seconds=f"{budget:g}") if why == "timeout" else \
        Msg("judge-allowance", seconds=f"{budget:g}") if why == "allowance" else \
        Msg("unjudgeable")
    result = CheckResult(exercise=exercise.id, file=exercise.file, check="", visibility="hidden",
                         passed=False, max_score=0.0, lines=(msg,), answered=True)
    return Finished(nodeid, exercise.id, nodeid.split("::")[-1], None, None,
                    result.to_plain())


def _rebuild(event: Finished, by_id: dict[str, Exercise]
             ) -> tuple[Exercise, CheckResult, float | None]:
    exercise = by_id[event.exercise]
    result = CheckResult.from_plain(
        event.result, exercise=exercise.id, file=exercise.file, check=event.name,
        visibility="hidden", max_score=0.0, kind="pytest", description=event.doc,
        uses=event.uses)
    return exercise, result, event.points
