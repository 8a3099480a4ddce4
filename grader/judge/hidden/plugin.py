"""The hidden tests' side of a session, in the fork: pytest with a ``student`` fixture
whose calls cross to the grader (which owns the student's processes), each test
reported as an event (``events``).  Nothing here runs in the grader's own process.
"""

import contextlib
import inspect
import io
import os
from pathlib import Path
from typing import Any

from ... import wire
from ...errors import CourseError
from ...run.outcome import CallOutcome
from ...run.references import Reference
from ..check import load_lines, outcome_lines
from ..compare import same_answer
from ..msg import Msg
from ..results import CheckResult, misconception_line
from .events import CallAsked, Collected, CourseProblem, Finished, Started

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
        reply = self._channel.ask(CallAsked(function, self._exercise.id,
                                            wire.encode(list(args)),
                                            wire.encode(dict(kwargs))).to_plain())
        outcome = CallOutcome.from_plain(reply)
        self.calls.append((function, args, kwargs, outcome))
        if not outcome.ok:
            raise StudentCallFailed(outcome, function, load=reply.get("load") is True)
        return outcome

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs).value


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
            self.emit(CourseProblem.of(exc).to_plain())
            items[:] = []
        for item in items:   # nobody reads a failed test's traceback: skip building it
            item.repr_failure = _short_failure
        self.emit(Collected(tuple(item.nodeid for item in items)).to_plain())

    def pytest_runtest_setup(self, item):
        self.current = item
        for proxy in self.proxies.values():
            proxy.calls = []
        self.emit(Started(item.nodeid).to_plain())

    def pytest_runtest_logreport(self, report):
        if report.failed or report.when == "call":
            self.reports.setdefault(id(self.current), report)

    def pytest_runtest_logfinish(self, nodeid, location):
        item = self.current
        exercise = self.by_file[Path(item.path).resolve()]
        result, points = _result(item, self, exercise)
        calls = self.proxies[exercise.id].calls
        self.emit(Finished(nodeid, exercise.id, item.name, _doc(item), points,
                           result.to_plain(), tuple(sorted({c[0] for c in calls}))).to_plain())

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


def run_session(by_file, only, channel):
    """The pytest session, in the fork: events for the parent, nothing on stdout."""
    import pytest

    plugin = _with_fixture(pytest)(by_file, channel, only)
    emit = channel.emit
    try:
        # -c os.devnull: no configuration file of the course's or above it counts, and no
        # folder to make (a fork killed midway would leave one behind)
        with _quiet():
            pytest.main([*map(str, by_file), "-c", os.devnull, "--rootdir", rootdir(by_file),
                         "-q",
                         *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")],
                         "--import-mode=importlib",
                         "-W", "ignore::pytest.PytestAssertRewriteWarning", "--tb=short"],
                        plugins=[plugin])
        for report in plugin.collect_errors:
            raise _collect_error(report)
    except CourseError as exc:
        emit(CourseProblem.of(exc).to_plain())


def rootdir(files):
    """The folder the test ids are relative to: one that holds every file, so each
    id names its file (outside it, two files' test_x would share the id "::test_x")."""
    return os.path.commonpath([str(path.parent) for path in files])


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
    """The test's docstring, whole (its languages are picked where it is rendered)."""
    doc = getattr(getattr(item, "function", None), "__doc__", None)
    return inspect.cleandoc(doc) if doc and doc.strip() else None


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
    # a tag may be declared once per function (its wrong version and message each): the
    # test names it when the answers match any of them
    shown = {}
    for m in exercise.misconceptions:
        if m.tag in tags and m.tag not in shown and _evidence(m, exercise, calls):
            shown[m.tag] = m
    mutated = sorted({c[0] for c in calls if c[3].ok and c[3].mutated_args})
    notes = [Msg("mutated-args", function=f) for f in mutated]
    # what the test raised: for the instructor (dev check); no hidden phrasing, so a
    # student never sees it
    raised = Msg("hidden-test-raised", raised=_raised(report)) if report is not None else None
    return [Msg("hidden-failed"), *notes] + [misconception_line(m) for m in shown.values()] \
        + ([raised] if raised else []), list(shown)


def _raised(report) -> str:
    """The exception's first line (pytest's assertion detail follows it)."""
    lines = (report.longreprtext or "").strip().splitlines()
    return lines[0] if lines else ""


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
