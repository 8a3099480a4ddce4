"""Hidden tests replayed from a recorded run when every answer is the same.

A process that grades many times (a class worker, watch, dev check) keeps each
finished test with the calls it made and the answers it got; a later grading
whose answers are the very same, call by call, reuses the result without a
pytest fork.  Any other answer runs the test for real.
"""

import shutil
from pathlib import Path

import pytest
from conftest import engine_level, session_zygote

from grader.course import loader
from grader.course.spec import Course
from grader.grading import Warm, grade_set
from grader.judge import bounded, hidden
from grader.judge.hidden import plugin
from grader.run.exercise_processes import ExerciseProcesses

ROOT = Path(__file__).resolve().parents[1]


def _warm(replays=False):
    """A Warm whose runs fork their templates from this process's zygote (conftest)."""
    return Warm(replays=replays, zygote=session_zygote())


@pytest.fixture
def sessions(monkeypatch):
    """The pytest forks started, counted."""
    started = []
    real = bounded.Fork.__init__

    def counted(self, target, *args, **kwargs):
        if getattr(target, "func", None) is plugin.run_session:
            started.append(target.args[1])   # its ``only``
        real(self, target, *args, **kwargs)

    monkeypatch.setattr(bounded.Fork, "__init__", counted)
    return started


def _grade(submission, warm, only=("temperature", "attention")):
    exercise_set = loader.load_set(Course(ROOT), "day3")
    run = grade_set(exercise_set, submission, engine_level(), only=set(only), warm=warm)
    return {(c.exercise, c.check): (c.passed, c.lines, c.tags)
            for e in run.exercises for c in e.checks if c.kind == "pytest"}


def _solutions(tmp_path, **changes):
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "solutions" / "day3", folder)
    for name, (old, new) in changes.items():
        path = folder / f"{name}.py"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    return folder


def test_the_same_answers_replay_every_test_without_pytest(tmp_path, sessions):
    warm = _warm(replays=True)
    first = _grade(_solutions(tmp_path), warm)
    assert sessions == [None] and first and all(p for p, _, _ in first.values())
    again = _grade(_solutions(tmp_path / "b"), warm)
    assert sessions == [None], "the second grading started no pytest fork"
    assert again == first


def test_other_answers_run_the_tests_for_real_from_the_first_that_differs(tmp_path, sessions):
    warm = _warm(replays=True)
    right = _grade(_solutions(tmp_path), warm)
    wrong = _grade(_solutions(tmp_path / "b", temperature=("/ T\n", "* T\n")), warm)
    alone = _grade(_solutions(tmp_path / "c", temperature=("/ T\n", "* T\n")), _warm())
    assert wrong == alone, "the same results as a grading that replays nothing"
    # a real run runs every test, as a grading alone (module-level draws advance in order)
    assert wrong != right and sessions == [None, None, None]
    failed = {key for key, (passed, _, _) in wrong.items() if not passed}
    assert failed and all(ex == "temperature" for ex, _ in failed)


def test_a_changed_test_file_forgets_what_was_recorded(tmp_path, sessions):
    replays = hidden.Replays()
    test = tmp_path / "test_x.py"
    test.write_text("def test_x(student):\n    pass\n")
    replays.follow({test: None})
    replays.order, replays.runs = ["test_x.py::test_x"], {("test_x.py::test_x", ""): []}
    assert replays.follow({test: None}).order is not None
    test.write_text("def test_x(student):\n    assert False\n")
    assert replays.follow({test: None}).order is None and replays.runs == {}


def test_what_a_call_printed_is_part_of_the_answer_a_replay_compares(tmp_path, sessions):
    """A test may read what the student's code printed (``student.call(...).output``)."""
    warm = _warm(replays=True)
    _grade(_solutions(tmp_path), warm, only=("temperature",))
    noisy = _solutions(tmp_path / "b", temperature=("def softmax(logits, T=1.0):\n",
                                                    "def softmax(logits, T=1.0):\n"
                                                    "    print('debug')\n"))
    _grade(noisy, warm, only=("temperature",))
    assert sessions == [None, None], "a real run"


@pytest.fixture
def student_calls(monkeypatch):
    """Each call the hidden tests made into a student's process: (function, inputs)."""
    from grader import wire
    from grader.run.student import StudentProcess

    made = []
    real = StudentProcess.call

    def logged(self, function, args=(), kwargs=None):
        made.append((function, wire.dumps([list(args), dict(kwargs or {})])))
        return real(self, function, args, kwargs)

    monkeypatch.setattr(StudentProcess, "call", logged)
    return made


def test_a_student_process_gets_the_same_calls_as_in_a_grading_alone(tmp_path, student_calls):
    """After a replay's answers differ, the real run neither calls the student again for
    what the replay already asked nor skips the tests before it (their module-level RNG
    draws would shift every later test's inputs)."""
    no_mask = _solutions(tmp_path / "b", attention=("def attention(Q, K, V, causal=True):\n",
                                                    "def attention(Q, K, V, causal=False):\n"))
    _grade(no_mask, _warm(), only=("attention",))
    alone = list(student_calls)
    warm = _warm(replays=True)
    _grade(_solutions(tmp_path), warm, only=("attention",))
    student_calls.clear()
    _grade(no_mask, warm, only=("attention",))
    assert student_calls == alone


def test_a_student_who_answers_right_only_when_asked_again_gains_nothing(tmp_path):
    """A replay's calls, then the real test's, must not ask the student twice."""
    again = ("def softmax(logits, T=1.0):\n",
             "SEEN = set()\n\n\ndef softmax(logits, T=1.0):\n"
             "    key = np.asarray(logits).tobytes() + repr(T).encode()\n"
             "    if key not in SEEN:\n"
             "        SEEN.add(key)\n"
             "        return np.zeros(np.shape(logits))\n")
    alone = _grade(_solutions(tmp_path / "a", temperature=again), _warm(), only=("temperature",))
    warm = _warm(replays=True)
    _grade(_solutions(tmp_path / "b"), warm, only=("temperature",))
    assert _grade(_solutions(tmp_path / "c", temperature=again), warm,
                  only=("temperature",)) == alone


def test_a_test_file_that_cannot_be_collected_fails_every_grading(tmp_path):
    """Replays must not hide the instructor's broken file after the first grading."""
    from grader.errors import CourseError

    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    for name in ("course.yaml",):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, tmp_path / name)
    broken = tmp_path / "solutions" / "day3" / "test_temperature.py"
    broken.write_text(broken.read_text() + "\nraise RuntimeError('broken')\n")
    exercise_set = loader.load_set(Course(tmp_path), "day3")
    warm = _warm(replays=True)
    for folder in ("a", "b"):
        with pytest.raises(CourseError, match="could not be collected"):
            grade_set(exercise_set, _solutions(tmp_path / folder), engine_level(),
                      only={"temperature", "attention"}, warm=warm)


def test_a_warm_keeps_no_calls_of_another_seed(tmp_path, monkeypatch):
    """dev check grades each seed with one Warm: a seed's YAML checks make their own calls."""
    from grader.run.student import StudentProcess

    sent: list[bytes] = []
    real = StudentProcess.call_many

    def logged(self, calls):
        sent.extend(c.data if hasattr(c, "data") else repr(c).encode() for c in calls)
        return real(self, calls)

    monkeypatch.setattr(StudentProcess, "call_many", logged)

    def calls(seed, warm):
        sent.clear()
        exercise_set = loader.load_set(Course(ROOT), "day3", seed_offset=seed)
        grade_set(exercise_set, exercise_set.solutions_dir, engine_level(), only={"attention"},
                  warm=warm, hidden_tests=False)
        return list(sent)

    warm = _warm()
    assert calls(0, warm) != calls(1, _warm())
    assert calls(1, warm) == calls(1, _warm())


@pytest.fixture
def judgings(monkeypatch):
    """The answers judged by each grading: those given to a judging fork, and those
    judged in this process (plain data, jobs.judged_here)."""
    from grader.judge import jobs as check

    given = []
    real, here = check._judged, check.judge_safely

    def counted(jobs, budget, *rest):
        given[-1] += len(jobs)
        return real(jobs, budget, *rest)

    def judged_here(job):
        given[-1] += 1
        return here(job)

    def bounded(jobs, budget, memo=None, *rest):
        given.append(0)
        return real_bounded(jobs, budget, memo, *rest)

    real_bounded = check.judge_bounded
    monkeypatch.setattr(check, "_judged", counted)
    monkeypatch.setattr(check, "judge_safely", judged_here)
    monkeypatch.setattr("grader.grading.judge_bounded", bounded)
    return given


def _yaml_results(submission, warm, only=("temperature", "growth")):
    exercise_set = loader.load_set(Course(ROOT), "day3")
    run = grade_set(exercise_set, submission, engine_level(), only=set(only), warm=warm)
    return {(c.exercise, c.check): (c.passed, c.lines, c.tags, c.output)
            for e in run.exercises for c in e.checks if c.kind != "pytest"}


def test_an_answer_judged_before_is_not_judged_again(tmp_path, judgings):
    warm = _warm(replays=True)
    first = _yaml_results(_solutions(tmp_path), warm)
    again = _yaml_results(_solutions(tmp_path / "b"), warm)
    assert again == first and judgings[0] > 0 and judgings[1] == 0
    wrong = _yaml_results(_solutions(tmp_path / "c", temperature=("/ T\n", "* T\n")), warm)
    alone = _yaml_results(_solutions(tmp_path / "d", temperature=("/ T\n", "* T\n")), _warm())
    assert wrong == alone and 0 < judgings[2] < judgings[0]


def test_what_a_call_printed_is_part_of_an_answer_judged_before(tmp_path, judgings):
    """A visible check shows what the call printed: the student's own, never another's."""
    warm = _warm(replays=True)
    _yaml_results(_solutions(tmp_path), warm, only=("growth",))
    noisy = _solutions(tmp_path / "b", growth=("    return n * n\n",
                                               "    print('mine')\n    return n * n + 1\n"))
    results = _yaml_results(noisy, warm, only=("growth",))
    printed = {out for passed, _, _, out in results.values() if not passed}
    assert any("mine" in out for out in printed) and judgings[1] > 0


def test_a_course_updated_under_a_warm_process_is_judged_by_its_new_files(tmp_path,
                                                                          monkeypatch):
    """A watch loop or worker keeps reference and judged answers per copy of an exercise;
    a course pulled while it runs (a check's comparison changed) is another copy."""
    from conftest import GOOD, make_course

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    make_course(tmp_path / "course", GOOD)
    course = Course(tmp_path / "course")
    student = tmp_path / "student"
    student.mkdir()
    (student / "demo.py").write_text("def double(x):\n    return 2 * x + 1e-9\n")
    warm = _warm(replays=True)

    def passed():
        run = grade_set(loader.load_set(course, "demo"), student, engine_level(), warm=warm)
        return [c.passed for e in run.exercises for c in e.checks]

    assert passed() == [False]   # exact
    spec = course.root / "exercises" / "demo" / "demo.yaml"
    spec.write_text(spec.read_text().replace("compare: exact",
                                             "compare: {kind: number, rtol: 1.0e-6}"))
    assert passed() == [True], "the same answer judged again by the old comparison"


def test_a_pytest_fork_killed_midway_leaves_no_folder_behind(tmp_path, monkeypatch):
    """A hidden-test fork ended early (an overrun, Ctrl-C) leaves no temporary folder."""
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    exercise_set = loader.load_set(Course(ROOT), "day3")
    session = hidden.Session([e for e in exercise_set.exercises if e.test_files][:1],
                             ExerciseProcesses(), budget=30)
    try:
        next(session.fork)   # pytest runs: its first event
    finally:
        session.close()      # the fork is killed
    assert list(scratch.iterdir()) == []


def test_plain_answers_are_judged_here_and_the_rest_in_a_fork():
    """Judging plain data of a comparison that calls no sympy needs no fork (a size in
    units is read from a table, a sympy number where numbers are compared in floats);
    a formula, a large or deep answer, or an unknown type does."""
    from types import SimpleNamespace as NS

    import numpy as np

    from grader import wire
    from grader.judge.jobs import PLAIN_ITEMS, JudgeJob, judged_here

    def job(kind, value, expected=1.0, wrong=(), ok=True, each=None, pick=None):
        spec = NS(kind=kind, params={"each": each} if each else {})
        return JudgeJob(NS(compare=spec, pick=pick), None, NS(ok=ok, value=value), expected,
                        [(None, w) for w in wrong])

    def tree(*node):
        return wire.decode({"$t": "sympy", "tree": list(node)}, lazy=True)

    third = tree("Pow", ["Integer", "3"], ["Integer", "-1"])

    assert judged_here(job("number", 2.0, wrong=[0.5]))
    assert judged_here(job("array", np.zeros((4, 8)), np.ones((4, 8))))
    assert judged_here(job("dict", {"a": [1, 2]}, {"a": [1, 2]}, each=NS(kind="exact")))
    assert judged_here(job("formula", None, ok=False))   # no answer: nothing compared
    assert not judged_here(job("formula", 2.0))
    assert judged_here(job("bytes", "512 KiB", "512 KiB"))
    assert judged_here(job("dict", {"a": "1 KiB"}, {"a": "1 KiB"}, each=NS(kind="bytes")))
    assert judged_here(job("array", [third, 0.5], [0.25, 0.5]))
    assert not judged_here(job("exact", third, 1))                  # read by sympy
    assert not judged_here(job("array", [third], [0.3], pick=0))    # naming it may need sympy
    assert not judged_here(job("number", tree("Symbol", "n", {})))
    assert not judged_here(job("number", tree("factorial", ["Integer", "3"])))
    assert not judged_here(job("array", np.zeros(PLAIN_ITEMS + 1)))
    assert not judged_here(job("exact", [[[[[[[[[[1]]]]]]]]]]))
    assert not judged_here(job("number", 10 ** 100))
    # ints of one hash (i * (2**61 - 1)): a set of them is built in quadratic time
    assert not judged_here(job("set", [i * ((1 << 61) - 1) for i in range(1, 4)], [1]))
    assert judged_here(job("set", [1, 2, -(1 << 59)], [1]))
    assert judged_here(job("set", {"k", "v"}, frozenset(["k", "v"])))
    assert not judged_here(job("set", {i * ((1 << 61) - 1) for i in range(1, 4)}, [1]))
    assert not judged_here(job("exact", "x" * 5000))
    assert not judged_here(job("number", object()))
    assert not judged_here(job("array", np.array(["a", "b"])))


def test_a_run_staged_as_it_started_is_not_synced_again_but_a_kept_one_is(tmp_path,
                                                                          monkeypatch):
    """start_run stages the submission while the set loads; its grading does not walk
    it again. A folder kept for the next grading (a watch loop) is brought up to date."""
    from grader.grading import start_run
    from grader.run import staging

    synced = []
    real = staging.sync_tree
    monkeypatch.setattr(staging, "sync_tree", lambda *a: synced.append(a[0]) or real(*a))
    submission = _solutions(tmp_path)
    course = Course(ROOT)
    exercise_set = loader.load_set(course, "day3")
    warm = start_run(course, "day3", submission, engine_level(), only={"temperature"},
                     zygote=session_zygote())
    try:
        grade_set(exercise_set, submission, engine_level(), only={"temperature"}, warm=warm)
        assert synced == []
        (submission / "temperature.py").write_text("def softmax(x, T=1.0):\n    return x\n")
        run = grade_set(exercise_set, submission, engine_level(), only={"temperature"}, warm=warm)
        assert synced and not run.all_passed   # the saved file is the one graded
    finally:
        warm.close()


def test_a_formula_that_is_the_expected_tree_is_judged_here_and_another_in_a_fork():
    """The very tree of the expected formula passes without sympy (compare.compare):
    no fork; a different tree, or a check that picks an item, goes to the fork."""
    from types import SimpleNamespace as NS

    import sympy

    from grader import wire
    from grader.judge.jobs import JudgeJob, judged_here

    n = sympy.Symbol("n", positive=True)

    def lazy(expr):
        return wire.decode(wire.encode(expr), lazy=True)

    def job(answer, expected, pick=None):
        return JudgeJob(NS(compare=NS(kind="formula", params={}), pick=pick), None,
                        NS(ok=True, value=answer), expected, [])

    assert judged_here(job(lazy(2 * n * n), lazy(2 * n * n)))
    assert not judged_here(job(lazy(n * n * 2 + 0 * n + n - n + 1), lazy(2 * n * n)))
    assert not judged_here(job(lazy(n ** 2), lazy(n * n + 1)))
    assert not judged_here(job(lazy(2 * n * n), lazy(2 * n * n), pick=0))
