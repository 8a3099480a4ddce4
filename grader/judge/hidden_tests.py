"""Hidden pytest checks: instructors' pytest files run on the trusted side.

A test asks for the ``student`` fixture and calls the student's functions
through it; each call goes to the student's process and comes back as plain
values, so assertions run here, out of the student's reach.  Markers:

  @pytest.mark.points(2)                 points of this test (default: a share)
  @pytest.mark.misconception("no-causal-mask")   tag named when it fails *and*
      the student's answers in that test are the tag's wrong version's answers

The session runs in a fork of the grader under a deadline (``bounded``): an
answer that makes an assertion run for minutes fails its own test only.  The
fork reports each test as a JSON event; the parent rebuilds the results.
"""

import contextlib
import functools
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import wire
from ..course.spec import Exercise
from ..errors import CourseError
from ..run.outcome import CallOutcome, Crash, Status
from ..run.references import Reference
from ..run.student import Request, StudentProcess, wire_request
from . import bounded, jobs
from .check import load_lines, outcome_lines
from .compare import same_answer
from .msg import Msg
from .results import CheckResult, misconception_line, outcome_from_plain, outcome_to_plain

# pytest plugins hidden checks do not need; unraisableexception alone costs
# about 0.4 s of gc.collect() per run.
UNUSED_PLUGINS = ("cacheprovider", "unraisableexception", "threadexception", "faulthandler",
                  "doctest", "junitxml", "pastebin", "stepwise", "legacypath", "lsof")


def preload() -> None:
    """Import what each session's fork would otherwise import again: pytest, its
    builtin plugins, pdb (which its debugging plugin loads) and numpy.random (which
    test files use).  Once per grader process (~20 ms a session saved), with the
    collector off (as grader.entry imports)."""
    import gc
    import importlib

    gc.disable()
    try:
        import pdb  # noqa: F401

        import numpy.random  # noqa: F401
        from _pytest.config import default_plugins

        for name in default_plugins:
            if name not in UNUSED_PLUGINS:
                with contextlib.suppress(ImportError):
                    importlib.import_module(f"_pytest.{name}")
    finally:
        gc.enable()


class StudentCallFailed(Exception):
    """The student's call raised, hung or crashed; the test fails with that."""

    def __init__(self, outcome, function, load=False):
        super().__init__(f"{function}: {outcome.status}")
        self.outcome, self.function, self.load = outcome, function, load


class StudentProxy:
    """The student's module as seen by a hidden test: calls cross to the child.

    The test runs in a fork; the parent, which owns the student's process,
    makes each call and sends back the outcome as wire data.
    """

    def __init__(self, exercise, channel):
        self._exercise, self._channel = exercise, channel
        self.calls = []   # (function, args, kwargs, outcome) of the current test

    def call(self, function: str, *args: Any, **kwargs: Any) -> CallOutcome:
        """The full CallOutcome (value, mutated_args, output) of a call that answered.

        A call that raised, hung or crashed fails the test with that reason.
        """
        reply = self._channel.ask({"call": function, "exercise": self._exercise.id,
                                   "args": wire.encode(list(args)),
                                   "kwargs": wire.encode(dict(kwargs))})
        outcome = outcome_from_wire(reply)
        self.calls.append((function, args, kwargs, outcome))
        if not outcome.ok:
            raise StudentCallFailed(outcome, function, load=reply.get("load") is True)
        return outcome

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs).value


def outcome_to_wire(outcome: CallOutcome) -> dict[str, Any]:
    """A CallOutcome as JSON-able data for the fork."""
    return {"status": outcome.status.value, "value": wire.encode(outcome.value),
            "error": outcome.error, "detail": outcome.detail, "output": outcome.output,
            "output_dropped": outcome.output_dropped, "mutated_args": outcome.mutated_args,
            "crash": outcome.crash.to_plain() if outcome.crash else None}


def outcome_from_wire(data: Any) -> CallOutcome:
    crash = data.get("crash")
    return CallOutcome(Status(data["status"]), value=wire.decode(data["value"]),
                       error=data["error"], detail=data["detail"], output=data["output"],
                       output_dropped=data["output_dropped"],
                       mutated_args=data["mutated_args"],
                       crash=Crash.from_plain(crash) if crash else None)


def _answer_call(event, processes, sent=None):
    """Make a fork's call into the student's process (the parent owns it); ``sent``:
    its Request, made before (a replay's).

    One student process alive at a time: the others of the run are closed first,
    so no exercise's code can reach (signal, kill) another's live process.
    """
    process = processes[event["exercise"]]
    for other in processes.values():
        if other is not process:
            other.close()
    sent = sent or wire_request(str(event["call"]), event["args"], event["kwargs"])
    outcome = process.call_many([sent])[0]
    # the module could not be imported: said as such (its import limit, not a call's)
    return {**outcome_to_wire(outcome), "load": outcome is process.load_failure}


def _request_key(event):
    return json.dumps([event.get(k) for k in ("call", "exercise", "args", "kwargs")],
                      sort_keys=True)


def _answer_key(reply):
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
        self.runs: dict[tuple[str, tuple], list[tuple[list[tuple[str, str]], dict]]] = {}
        self.requests: dict[str, tuple[dict, Request]] = {}   # a recorded call, as sent

    def follow(self, by_file: Mapping[Path, Exercise]) -> "Replays":
        """These replays, for these test files as they are now: other files, or a
        changed one, forget every run recorded."""
        files = tuple(sorted((str(p), os.stat(p).st_mtime_ns, os.stat(p).st_size)
                             for p in by_file))
        if files != self.files:
            self.files, self.order, self.runs, self.requests = files, None, {}, {}
        return self

    def record(self, event: dict, exercise: Exercise, steps: list[tuple[str, str]]) -> None:
        runs = self.runs.setdefault((str(event["test"]), exercise.copy_key), [])
        if len(runs) < self.KEPT and all(kept != steps for kept, _ in runs):
            runs.append((list(steps), event))

    def replay(self, nodeid: str, exercise: Exercise,
               processes: Mapping[str, StudentProcess],
               made: list[tuple[str, dict]]) -> dict | None:
        """The recorded event of the run whose calls this student's answers follow
        (the calls made here, in order, each added to ``made`` with its reply); None
        when none does."""
        runs = self.runs.get((nodeid, exercise.copy_key), [])
        step = 0
        while runs:
            ended = [event for steps, event in runs if len(steps) == step]
            if ended:
                return ended[0]
            request = runs[0][0][step][0]
            if request not in self.requests:   # parsed and made once for every student
                event = dict(zip(("call", "exercise", "args", "kwargs"), json.loads(request)))
                self.requests[request] = (event, wire_request(
                    str(event["call"]), event["args"], event["kwargs"]))
            event, sent = self.requests[request]
            reply = _answer_call(event, processes, sent)
            made.append((request, reply))
            taken = (request, _answer_key(reply))
            runs = [(steps, event) for steps, event in runs if steps[step] == taken]
            step += 1
        return None


def _short_failure(excinfo, style=None):
    """A failed hidden test's report text: its exception, not a traceback (which
    pytest builds by parsing the test file again, ~40 ms a failure)."""
    return excinfo.exconly()[:2000]


class _Plugin:
    """Gives tests their ``student`` fixture and reports each test as an event."""

    def __init__(self, exercises_by_file, channel, only=None):
        self.by_file, self.emit, self.only = exercises_by_file, channel.emit, only
        self.proxies = {ex.id: StudentProxy(ex, channel) for ex in exercises_by_file.values()}
        self.reports, self.collect_errors, self.current = {}, [], None

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "points(n): points of a hidden check")
        config.addinivalue_line("markers", "misconception(tag): tag reported on failure")

    def pytest_collection_modifyitems(self, items):
        if self.only is not None:
            items[:] = [item for item in items if item.nodeid in self.only]
        try:   # an undeclared tag is the instructor's mistake: say so before any test runs
            for item in items:
                _declared_tags(item, self.by_file[Path(item.path).resolve()])
        except CourseError as exc:
            _report_course_error(self.emit, exc)
            items[:] = []
        for item in items:   # nobody reads a failed test's traceback: skip building it
            item.repr_failure = _short_failure
        self.emit({"items": [item.nodeid for item in items]})

    def pytest_runtest_setup(self, item):
        self.current = item
        for proxy in self.proxies.values():
            proxy.calls = []
        self.emit({"start": item.nodeid})

    def pytest_runtest_logreport(self, report):
        if report.failed or report.when == "call":
            self.reports.setdefault(id(self.current), report)

    def pytest_runtest_logfinish(self, nodeid, location):
        item = self.current
        exercise = self.by_file[Path(item.path).resolve()]
        result, points = _result(item, self, exercise)
        calls = self.proxies[exercise.id].calls
        self.emit({"test": nodeid, "exercise": exercise.id, "name": item.name,
                   "doc": _doc(item), "points": points, "result": outcome_to_plain(result),
                   "uses": sorted({c[0] for c in calls})})

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(report)

    def pytest_exception_interact(self, node, call, report):
        if isinstance(call.excinfo.value, StudentCallFailed):
            report.student_failure = call.excinfo.value

    def student_for(self, node):
        exercise = self.by_file[Path(node.path).resolve()]
        return self.proxies[exercise.id]


def _with_fixture(pytest):
    """The plugin class with its ``student`` fixture (pytest is imported lazily)."""

    class Plugin(_Plugin):
        @pytest.fixture
        def student(self, request):
            return self.student_for(request.node)

    return Plugin


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

    def __init__(self, exercises: Sequence[Exercise], processes: Mapping[str, StudentProcess],
                 budget: float, replays: "Replays | None" = None,
                 allowance: dict[str, float] | None = None):
        self.allowance = {} if allowance is None else allowance
        self._cpu_at_start: float | None = None
        self.by_file = {t.resolve(): ex for ex in exercises for t in ex.test_files}
        self.by_id = {ex.id: ex for ex in exercises}
        self.processes, self.budget = processes, budget
        self.root = Path(_rootdir(self.by_file)) if self.by_file else None
        self._files: dict[str, Exercise] = {}   # a test id's file: its exercise
        self.order: list[str] | None = None
        self.done: dict[str, Any] = {}
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
        self.fork = bounded.Fork(functools.partial(_session, self.by_file, only), self.budget)

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
            event = self.replays.replay(nodeid, exercise, self.processes, self.answered)
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

    def _take(self, event):
        if "call" in event:
            key = _request_key(event)
            reply = self._answered(event, key)
            self.steps.append((key, _answer_key(reply)))
            event.reply(reply)
        if "course_error" in event:
            raise _course_error(event["course_error"])
        if "items" in event and self.order is None:
            self.order = [str(i) for i in event["items"]]
            if self.replays is not None:
                self.replays.order = list(self.order)
        if "start" in event:
            self.started = self.held = str(event["start"])
            self.steps = []
            # no more trusted time for the test than its exercise has left
            self.fork.budget = max(0.0, min(self.budget, self._left(self.exercise_of(
                self.started))))
            self._cpu_at_start = bounded.cpu_seconds(self.fork.pid)
        if "test" in event:
            cpu = bounded.cpu_seconds(self.fork.pid)
            if cpu is not None and self._cpu_at_start is not None:
                self._spend(str(event["test"]), cpu - self._cpu_at_start)
            self.fork.budget, self._cpu_at_start = self.budget, None
            self.done[event["test"]] = event
            if self.replays is not None and event["test"] == self.started and self.whole:
                self.replays.record(event, self.exercise_of(event["test"]), self.steps)

    def _answered(self, event, key):
        """The reply to a fork's call: the one a replay already got for the same call
        (the student's process is asked each call once, as in a grading alone), else
        the process's own."""
        if self.answered and self.answered[0][0] == key:
            return self.answered.pop(0)[1]
        self.answered = []
        return _answer_call(event, self.processes)

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
        for process in self.processes.values():
            process.close(wait=True)   # the overrun may have left one mid-call
        only = [nodeid for nodeid in self.order or () if nodeid not in self.done]
        if only:
            self._start(only)


def _session(by_file, only, channel):
    """The pytest session, in the fork: events for the parent, nothing on stdout."""
    import pytest

    plugin = _with_fixture(pytest)(by_file, channel, only)
    emit = channel.emit
    try:
        # -c os.devnull: no configuration file of the course's or above it counts, and no
        # folder to make (a fork killed midway would leave one behind)
        with _quiet():
            pytest.main([*map(str, by_file), "-c", os.devnull, "--rootdir", _rootdir(by_file),
                         "-q",
                         *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")],
                         "--import-mode=importlib",
                         "-W", "ignore::pytest.PytestAssertRewriteWarning", "--tb=short"],
                        plugins=[plugin])
        for report in plugin.collect_errors:
            raise _collect_error(report)
    except CourseError as exc:
        _report_course_error(emit, exc)


def _rootdir(files):
    """The folder the test ids are relative to: one that holds every file, so each
    id names its file (outside it, two files' test_x would share the id "::test_x")."""
    return os.path.commonpath([str(path.parent) for path in files])


def _report_course_error(emit, exc):
    emit({"course_error": {"message": exc.message, "line": exc.line, "hint": exc.hint,
                           "path": str(exc.path) if exc.path else None}})


def _course_error(data):
    path = data.get("path")
    return CourseError(str(data.get("message")), Path(path) if path else None,
                       data.get("line"), data.get("hint"))


def _overrun_event(nodeid, exercise, budget, why):
    msg = Msg("judge-timeout", seconds=f"{budget:g}") if why == "timeout" else \
        Msg("judge-allowance", seconds=f"{budget:g}") if why == "allowance" else \
        Msg("unjudgeable")
    result = CheckResult(exercise=exercise.id, file=exercise.file, check="", visibility="hidden",
                         passed=False, max_score=0.0, lines=(msg,), answered=True)
    return {"test": nodeid, "exercise": exercise.id, "name": nodeid.split("::")[-1],
            "doc": None, "points": None, "result": outcome_to_plain(result), "uses": []}


def _rebuild(event, by_id):
    exercise = by_id[event["exercise"]]
    points = event.get("points")
    result = outcome_from_plain(
        event["result"], exercise=exercise.id, file=exercise.file, check=str(event["name"]),
        visibility="hidden", max_score=0.0, kind="pytest", description=event.get("doc"),
        uses=tuple(map(str, event.get("uses", ()))))
    return exercise, result, float(points) if type(points) in (int, float) else None


def _collect_error(report):
    """A CourseError at the instructor's line, without pytest's traceback."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return CourseError(f"the hidden tests could not be collected: {crash.message}",
                           Path(crash.path), crash.lineno)
    lines = [ln for ln in report.longreprtext.splitlines() if ln.startswith("E ")]
    detail = lines[-1][1:].strip() if lines else "see pytest's output"
    return CourseError(f"the hidden tests could not be collected: {detail}",
                       Path(str(report.nodeid).split("::")[0]) if report.nodeid else None)



@contextlib.contextmanager
def _quiet():
    """pytest prints a session report; keep stdout for our JSON alone."""
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved


def _result(item, plugin, exercise):
    """(CheckResult, points) of a finished test, in the fork."""
    report = plugin.reports.get(id(item))
    points = item.get_closest_marker("points")
    points = float(points.args[0]) if points else None
    tags = _declared_tags(item, exercise)
    base = dict(exercise=exercise.id, file=exercise.file, check=item.name,
                visibility="hidden", max_score=0.0, kind="pytest")
    if report is not None and report.passed:
        return CheckResult(passed=True, **base), points
    calls = plugin.proxies[exercise.id].calls
    lines, tags = _failure(report, exercise, tags, calls)
    return CheckResult(passed=False, lines=tuple(lines), tags=tuple(tags), **base), points


def _doc(item):
    doc = getattr(getattr(item, "function", None), "__doc__", None)
    return doc.strip().splitlines()[0] if doc else None


def _declared_tags(item, exercise):
    """The test's misconception tags; each must be declared in the exercise YAML."""
    marker = item.get_closest_marker("misconception")
    tags = list(marker.args) if marker else []
    known = {m.tag for m in exercise.misconceptions}
    for tag in tags:
        if tag not in known:
            raise CourseError(f"{item.name}: misconception {tag!r} is not declared in "
                              f"{exercise.spec_path.name}", Path(item.path),
                              hint="add it under 'misconceptions' in the exercise YAML")
    return tags


def _failure(report, exercise, tags, calls):
    failed_call = _student_failure(report)
    if failed_call is not None:   # the code did not answer: no misconception to name
        if failed_call.load:
            return load_lines(failed_call.outcome, exercise.file, exercise.limits), []
        return outcome_lines(failed_call.outcome, failed_call.function, exercise.file,
                             exercise.limits), []
    known = {m.tag: m for m in exercise.misconceptions}
    shown = [t for t in tags if _evidence(known[t], exercise, calls)]
    mutated = sorted({c[0] for c in calls if c[3].ok and c[3].mutated_args})
    notes = [Msg("mutated-args", function=f) for f in mutated]
    return [Msg("hidden-failed"), *notes] + [misconception_line(known[t]) for t in shown], shown


def _evidence(misconception, exercise, calls):
    """Whether the student's answers in this test are the wrong version's answers.

    A test fails for many reasons; its tag is named only when every answer the
    student gave to the wrong version's function equals what the registered
    wrong version gives for the same inputs (and there was such an answer).
    """
    if not misconception.wrong:
        return False
    targets = exercise.wrong_targets(misconception)
    relevant = [c for c in calls if c[0] in targets and c[3].ok]
    if not relevant:
        return False
    reference = Reference(exercise)
    for _function, args, kwargs, outcome in relevant:
        try:
            wrong = reference.call(misconception.wrong, args, kwargs, None,
                                   purpose=f"wrong version for {misconception.tag}")
        except CourseError:
            return False
        if not same_answer(outcome.value, wrong):
            return False
    return True


def _student_failure(report):
    return getattr(report, "student_failure", None) if report else None
