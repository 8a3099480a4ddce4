"""Hidden pytest checks: instructors' pytest files run on the trusted side.

A test asks for the ``student`` fixture and calls the student's functions
through it; each call goes to the student's process and comes back as plain
values, so assertions run here, out of the student's reach.  Markers:

  @pytest.mark.points(2)                 points of this test (default: a share)
  @pytest.mark.misconception("no-causal-mask")   tag reported when it fails
"""

import contextlib
import io
import os
import tempfile
from pathlib import Path

from .errors import CourseError
from .feedback import Msg
from .judge import outcome_lines
from .results import CheckResult, misconception_line


# pytest plugins hidden checks do not need; unraisableexception alone costs
# about 0.4 s of gc.collect() per run.
UNUSED_PLUGINS = ("cacheprovider", "unraisableexception", "threadexception", "faulthandler",
                  "doctest", "junitxml", "pastebin", "stepwise", "legacypath", "lsof")


class StudentCallFailed(Exception):
    """The student's call raised, hung or crashed; the test fails with that."""

    def __init__(self, outcome, function):
        super().__init__(f"{function}: {outcome.status}")
        self.outcome, self.function = outcome, function


class StudentProxy:
    """The student's module as seen by a hidden test: calls cross to the child."""

    def __init__(self, process, exercise):
        self._process, self._exercise = process, exercise

    def call(self, function, *args, **kwargs):
        """The full CallOutcome (value, mutated_args, output) of a call that answered.

        A call that raised, hung or crashed fails the test with that reason.
        """
        outcome = self._process.call(function, args, kwargs)
        if not outcome.ok:
            raise StudentCallFailed(outcome, function)
        return outcome

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs).value


class _Plugin:
    """Gives tests their ``student`` fixture and records their outcomes."""

    def __init__(self, proxies, exercises_by_file):
        self.proxies, self.by_file, self.reports = proxies, exercises_by_file, {}
        self.items, self.collect_errors, self.current = [], [], None

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "points(n): points of a hidden check")
        config.addinivalue_line("markers", "misconception(tag): tag reported on failure")

    def pytest_collection_modifyitems(self, items):
        self.items = list(items)

    def pytest_runtest_setup(self, item):
        self.current = item

    def pytest_runtest_logreport(self, report):
        if report.failed or report.when == "call":
            self.reports.setdefault(id(self.current), report)

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


def run(exercises, proxies):
    """Run the hidden tests of ``exercises``; a list of (exercise, CheckResult, points)."""
    import pytest

    by_file = {t.resolve(): ex for ex in exercises for t in ex.test_files}
    if not by_file:
        return []
    plugin = _with_fixture(pytest)(proxies, by_file)
    with tempfile.TemporaryDirectory() as tmp, _quiet():
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        pytest.main([*map(str, by_file), "-c", str(ini), "--rootdir", tmp, "-q",
                     *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")], "--import-mode=importlib",
                     "-W", "ignore::pytest.PytestAssertRewriteWarning", "--tb=short"],
                    plugins=[plugin])
    for report in plugin.collect_errors:
        raise _collect_error(report)
    return [_result(item, plugin) for item in plugin.items]


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


def _result(item, plugin):
    exercise = plugin.by_file[Path(item.path).resolve()]
    report = plugin.reports.get(id(item))
    points = item.get_closest_marker("points")
    points = float(points.args[0]) if points else None
    tags = _declared_tags(item, exercise)
    base = dict(exercise=exercise.id, file=exercise.file, check=item.name,
                visibility="hidden", max_score=0.0, kind="pytest",
                description=_doc(item))
    if report is not None and report.passed:
        return exercise, CheckResult(passed=True, **base), points
    lines, tags = _failure(item, report, exercise, tags)
    return exercise, CheckResult(passed=False, lines=tuple(lines), tags=tuple(tags),
                                 **base), points


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


def _failure(item, report, exercise, tags):
    failed_call = _student_failure(report)
    if failed_call is not None:   # the code did not answer: no misconception to name
        return outcome_lines(failed_call.outcome, failed_call.function, exercise.file,
                             exercise.limits), []
    known = {m.tag: m for m in exercise.misconceptions}
    return [Msg("hidden-failed")] + [misconception_line(known[t]) for t in tags], tags


def _student_failure(report):
    return getattr(report, "student_failure", None) if report else None
