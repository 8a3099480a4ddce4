"""The child-process boundary: value-or-exception, limits, nothing trusted."""

import contextlib
import os
import signal
import stat
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import engine_level, session_zygote

from grader.course.limits import Limits
from grader.run import sandbox
from grader.run.inside import calls, forks
from grader.run.student import RunFolder, StudentProcess

CODE = '''
import numpy as np

def double(x):
    print("noise " * 1000)
    return np.asarray(x) * 2

def boom(x):
    y = [1, 2]
    return y[x]

def hang():
    import time; time.sleep(3600)   # a hang that costs no core

def leave():
    import os
    os._exit(0)

def liar():
    class Liar:
        def __eq__(self, other):
            return True
    return Liar()

def mutate(a):
    a[0] = 99.0
    return 1

def huge():
    return np.zeros(1_000_000)
'''


@pytest.fixture(params=["none", "process"] + (["bubblewrap"] if sandbox.bubblewrap_works()
                                               else []))
def level(request):
    return request.param


@pytest.fixture
def child(tmp_path, level, request):
    if level == "process" and os.geteuid() == 0:
        request.getfixturevalue("reachable_python")   # as root: a Python its uid can start
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mod.py").write_text(CODE, encoding="utf-8")
    # in bubblewrap, its template a fork of this process's zygote where it has one, as
    # in a class (test_template starts templates in sandboxes of their own)
    folder = RunFolder(sandbox.plan(level), session_zygote() if level == "bubblewrap" else None)
    process = StudentProcess(folder, tmp_path / "sub", "mod",
                             Limits(time=0.4, answer=1_000_000, output=100), level)
    yield process
    process.close()
    folder.close()


def engine_folder():
    """A run folder for a test of the child's protocol, where isolation is not the point:
    at conftest's engine level, its templates are forks of this process's zygote."""
    return RunFolder(sandbox.plan(engine_level()), session_zygote())


def test_values_come_back_as_plain_data(child):
    outcome = child.call("double", [np.array([1.0, 2.0])])
    assert outcome.ok and np.array_equal(outcome.value, [2.0, 4.0])
    assert len(outcome.output) == 100 and outcome.output_dropped > 0


def test_student_exception_has_their_file_and_line(child):
    outcome = child.call("boom", [5])
    assert outcome.status == "error"
    assert outcome.error["type"] == "IndexError"
    assert outcome.error["file"] == "mod.py" and outcome.error["line"] == 10
    assert outcome.error["code"] == "return y[x]"


def test_hang_times_out_and_the_next_call_gets_a_fresh_child(child):
    assert child.call("hang").status == "timeout"
    assert child.call("double", [[1]]).ok


def test_exit_before_answering_is_a_crash_not_a_result(child):
    outcome = child.call("leave")
    assert outcome.status == "crashed" and outcome.detail == "exit:0"


def test_objects_are_refused_by_type_name(child):
    outcome = child.call("liar")
    assert outcome.status == "unsupported" and outcome.detail == "Liar"


def test_mutated_arguments_are_noticed(child):
    assert child.call("mutate", [np.zeros(3)]).mutated_args
    assert not child.call("double", [np.zeros(3)]).mutated_args


def test_answer_size_is_capped(child):
    assert child.call("huge").status == "too_large"


def test_missing_function(child):
    outcome = child.call("nope")
    assert outcome.status == "missing" and outcome.detail == "nope"


def test_the_child_imports_the_students_file_even_under_a_name_it_already_knows(tmp_path):
    """The exercise's file itself, not a module of that name the child runtime has
    imported (``json``); a sibling it imports is found beside it."""
    (tmp_path / "json.py").write_text("from helper import twice\n")
    (tmp_path / "helper.py").write_text("def twice(x):\n    return 2 * x\n")
    folder = engine_folder()
    process = StudentProcess(folder, tmp_path, "json", Limits(time=2.0), folder.plan.level)
    try:
        outcome = process.call("twice", [21])
        assert outcome.ok and outcome.value == 42
    finally:
        process.close()
        folder.close()


def test_syntax_error_is_reported_once_with_line(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n    pass\n")
    folder = engine_folder()
    process = StudentProcess(folder, tmp_path, "bad", Limits(time=2.0), folder.plan.level)
    try:
        first = process.call("f")
        assert first.status == "error" and first.error["type"] == "SyntaxError"
        assert first.error["file"] == "bad.py" and first.error["line"] == 1
        assert process.call("f") is first
    finally:
        process.close()
        folder.close()


def test_slow_import_costs_one_timeout(tmp_path):
    (tmp_path / "slow.py").write_text(textwrap.dedent("""\
        import time
        time.sleep(30)
        def f():
            return 1
        """))
    folder = engine_folder()
    process = StudentProcess(folder, tmp_path, "slow", Limits(time=0.25, import_time=0.25),
                             folder.plan.level)
    try:
        assert process.call("f").status == "timeout"
        assert process.call("f").status == "timeout"
        assert process.restarts == 0
    finally:
        process.close()
        folder.close()


class Stuck(Exception):   # not an OSError: the grader's send would take that for a crash
    pass


def _calls_of_f(submission, count, limits):
    """``mod.f(i)`` for i below ``count``, written ahead, in one child at the process
    level; a write to its stdin that blocks fails the test instead of hanging it."""
    folder = RunFolder(sandbox.plan("none"))
    process = StudentProcess(folder, submission, "mod", limits, "none")
    try:
        with _no_write_that_blocks():
            return process.call_many([("f", (i,), None) for i in range(count)])
    finally:
        process.close(wait=True)
        folder.close()


@contextlib.contextmanager
def _no_write_that_blocks(seconds=30):
    """Fail the test, not hang it, when the grader's write to a child's stdin blocks."""
    def stuck(*_):
        raise Stuck("the grader's write to the child's stdin blocked")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_requests_written_ahead_never_fill_a_shrunken_stdin(tmp_path):
    # the child shrinks its stdin pipe to one page, then hangs in the first call:
    # ids written ahead past a page would block the grader's write for good
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mod.py").write_text(textwrap.dedent('''
        import fcntl, time
        fcntl.fcntl(0, 1031, 4096)   # F_SETPIPE_SZ
        def f(x):
            if x == 0:
                time.sleep(60)
            return x
    '''), encoding="utf-8")
    outcomes = _calls_of_f(tmp_path / "sub", 1500, Limits(time=0.3))
    assert outcomes[0].status.value == "timeout"
    assert [o.value for o in outcomes[1:]] == list(range(1, 1500))


def test_calls_written_ahead_in_one_file_go_on_in_a_fresh_child_after_a_crash(child):
    """A window of calls is one request file; the calls after the one that killed the
    child, and after one that hung it, are asked again of the next child, in order."""
    calls = [("double", ([1.0],), None), ("leave", (), None), ("double", ([2.0],), None),
             ("hang", (), None), ("double", ([3.0],), None), ("boom", (0,), None)]
    outcomes = child.call_many(calls)
    assert [o.status.value for o in outcomes] == ["ok", "crashed", "ok", "timeout", "ok", "ok"]
    assert [list(outcomes[i].value) for i in (0, 2, 4)] == [[2.0], [4.0], [6.0]]
    assert outcomes[5].value == 1 and child.restarts == 2


@pytest.mark.parametrize("level", ["none", "process"])
def test_a_staged_copy_keeps_links_and_times_leaves_pipes_out_and_is_the_runs(tmp_path, level,
                                                                          request):
    if level == "process" and os.geteuid() != 0:
        pytest.skip("a uid of the run's own needs root")
    if level == "process":
        request.getfixturevalue("reachable_python")
    sub = tmp_path / "sub"
    (sub / "models").mkdir(parents=True)
    (sub / "mod.py").write_text("x = 1\n")
    os.chmod(sub / "mod.py", 0o664)
    (sub / "alias.py").symlink_to("mod.py")
    (sub / "models" / "m.json").write_text("{}")
    os.mkfifo(sub / "pipe")
    folder = RunFolder(sandbox.plan(level))
    try:
        staged, = map(Path, folder.stage(sub))
        assert sorted(p.name for p in staged.iterdir()) == ["alias.py", "mod.py", "models"]
        assert os.readlink(staged / "alias.py") == "mod.py"
        copy, original = (staged / "mod.py").stat(), (sub / "mod.py").stat()
        assert copy.st_mtime_ns == original.st_mtime_ns and copy.st_ino != original.st_ino
        if level == "none":
            assert stat.S_IMODE(copy.st_mode) == 0o664
        else:   # root's, readable by the run's group alone, never writable by it
            gid = folder.identity.gid
            for path in (staged, staged / "mod.py", staged / "models" / "m.json"):
                info = path.stat()
                assert (info.st_uid, info.st_gid) == (0, gid)
                assert stat.S_IMODE(info.st_mode) == (0o750 if path.is_dir() else 0o640)
        (sub / "mod.py").write_text("x = 22\n")
        folder.stage(sub, refresh=True)
        assert (staged / "mod.py").read_text() == "x = 22\n"
    finally:
        folder.close()


def test_a_template_imports_with_the_collector_off_and_turns_it_back_on(monkeypatch):
    import gc
    import importlib

    seen = []

    def fake_import(name):
        seen.append((name, gc.isenabled()))
        if name == "broken":
            raise ImportError(name)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    calls.import_all(["numpy", "sympy"])
    assert seen == [("numpy", False), ("sympy", False)] and gc.isenabled()
    with pytest.raises(ImportError):
        calls.import_all(["broken"])
    assert gc.isenabled()


MUTATES = '''
def writes(a):
    a[0] = 99.0

def reshapes(a):
    a.shape = (3, 1)

def appends(items):
    items.append(1)

def replaces(config):
    config["k"] = [2]

def reorders(config):
    config["k"] = config.pop("k")

def adds(tags):
    tags.add(3)

def nested(pair):
    pair[1]["w"][0] = 5.0

def same_back(a):
    a[0] = a[0] + 0.0

def reads(a, items, config, tags, pair):
    return float(a.sum()) + len(items) + len(config) + len(tags) + len(pair)
'''


@pytest.mark.parametrize("function, args, mutated", [
    ("writes", [np.zeros(3)], True), ("reshapes", [np.zeros(3)], True),
    ("appends", [[0]], True), ("replaces", [{"k": [1]}], True),
    ("reorders", [{"k": 1, "j": 2}], True), ("adds", [{1, 2}], True),
    ("nested", [(1, {"w": np.zeros(2)})], True), ("same_back", [np.ones(3)], False),
    ("reads", [np.ones(3), [1], {"k": 1}, {1}, (1, {"w": np.zeros(2)})], False)])
def test_each_way_of_changing_an_argument_in_place_is_noticed(tmp_path, function, args,
                                                                  mutated):
    """The child returns the grader's own digest only for arguments it saw unchanged;
    any change makes it encode them again, and the grader compares (writing the same
    values back is no change)."""
    (tmp_path / "mutates.py").write_text(MUTATES)
    folder = engine_folder()
    process = StudentProcess(folder, tmp_path, "mutates", Limits(time=2.0), folder.plan.level)
    try:
        outcome = process.call(function, args)
        assert outcome.ok and outcome.mutated_args is mutated
    finally:
        process.close()
        folder.close()


def test_a_child_that_answers_ids_it_never_read_cannot_block_the_grader(tmp_path):
    """The ids are guessable: a child that shrinks its stdin and answers ids it never
    read lets the lines pile up there; the line that does not fit is a bad answer,
    never a write that blocks for good."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mod.py").write_text(textwrap.dedent('''
        import fcntl, json, os, time
        fcntl.fcntl(0, 1031, 4096)   # F_SETPIPE_SZ

        def pipes():
            for fd in os.listdir("/proc/self/fd"):
                try:
                    if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                        yield int(fd)
                except OSError:
                    pass

        def f(x):
            answers = max(pipes())   # stdin is 0
            for n in range(2, 1200):
                body = json.dumps({"status": "ok", "value": n - 2}).encode()
                os.write(answers, b"%06d %d\\n" % (n, len(body)) + body)
            time.sleep(60)
    '''), encoding="utf-8")
    outcomes = _calls_of_f(tmp_path / "sub", 1100, Limits(time=5.0))
    unread = next(o for o in outcomes if not o.ok)
    assert unread.status.value == "bad_answer" and "unread" in unread.detail


def _reaping(pid):
    """What reap_dead uses of a forks.ForkServer with one child, ``pid``: its children,
    and a reap that counts its looks."""
    class Template:
        children = {pid: "1"}
        looks = 0

        def reap(self):
            self.looks += 1
            if os.waitpid(pid, os.WNOHANG)[0]:
                self.children.pop(pid)

    return Template()


def test_a_killed_child_is_reaped_as_its_pidfd_says_it_ended_not_by_polling(monkeypatch):
    """The template waits for a child it killed on a pidfd (the next fork must find
    none alive): woken by its end, with no sleeps between looks.  (This child ends by
    itself a moment later, as a killed one still unmapping its memory would.)"""
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child
        try:
            time.sleep(0.3)
        finally:
            os._exit(0)
    watch = forks._pidfd(pid)
    if watch is None:
        os.waitpid(pid, 0)
        pytest.skip("no pidfd_open on this kernel")

    template = _reaping(pid)
    monkeypatch.setattr(forks.time, "sleep", lambda _: pytest.fail("polled"))
    try:
        forks.ForkServer.reap_dead(template, pid, watch)  # type: ignore[arg-type]
    finally:
        os.close(watch)
    assert pid not in template.children and template.looks == 2


def test_a_killed_child_whose_exit_a_tracer_holds_is_not_waited_for_in_a_busy_loop(
        monkeypatch):
    """A child can let a grandchild of its own (out of its process group) trace it: once
    killed it has ended, so its pidfd stays readable, but it cannot be reaped while the
    tracer holds its exit.  The template then looks for it between sleeps, as without a
    pidfd, not in a loop that spins on the readable pidfd until KILL_SECONDS."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child, then its tracer
        try:
            os.setsid()
            parent = os.getpid()
            if os.fork() == 0:
                os.setsid()   # beyond the kill of the child's group
                attached = libc.ptrace(16, parent, None, None) == 0   # PTRACE_ATTACH
                os.write(ready_w, b"%d %d\n" % (os.getpid(), attached))
                time.sleep(30)   # never waits for its tracee
            else:
                time.sleep(30)
        finally:
            os._exit(0)
    os.close(ready_w)
    tracer, attached = map(int, os.read(ready_r, 100).split())
    os.close(ready_r)
    try:
        watch = forks._pidfd(pid)
        if not attached or watch is None:
            pytest.skip("no ptrace or no pidfd_open here")

        template = _reaping(pid)
        time.sleep(0.1)   # attached and stopped
        monkeypatch.setattr(forks, "KILL_SECONDS", 0.5)
        forks._kill_group(pid)
        try:
            forks.ForkServer.reap_dead(template, pid, watch)  # type: ignore[arg-type]
        finally:
            os.close(watch)
        assert pid in template.children   # held by its tracer until the deadline
        assert template.looks < 5000, template.looks   # spinning: hundreds of thousands
    finally:
        os.kill(tracer, signal.SIGKILL)
        os.waitpid(pid, 0)
