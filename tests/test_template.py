"""The run's warm template: one sandbox per run, a fresh fork per student process.

In-process, at the level that needs no privileges; the hostile suite runs the
same attacks through the CLI in bubblewrap.
"""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT

from grader.course.limits import Limits
from grader.run import bubblewrap, sandbox
from grader.run.outcome import Status
from grader.run.student import RunFolder, StudentProcess
from grader.run.template import fits, widest

PATCHES = '''
import math
import numpy as np

np.dot = lambda *args, **kwargs: 42.0
np.sum = lambda *args, **kwargs: -7.0
math.sqrt = lambda x: -1.0

def patched():
    return float(np.dot([1.0, 2.0], [3.0, 4.0]))
'''

CLEAN = '''
import math
import numpy as np

def clean():
    return [float(np.dot([1.0, 2.0], [3.0, 4.0])), math.sqrt(16.0),
            float(np.sum([1.0, 2.0]))]

def hang():
    import time
    time.sleep(3600)

def template_cpu_limit():
    """The soft CPU limit of the process that forked this child: its template."""
    import os
    with open(f"/proc/{os.getppid()}/limits") as f:
        return next(line for line in f if line.startswith("Max cpu time")).split()[3]

def die():
    import os
    os._exit(3)

def fill_the_work_folder():
    """Write beside this child's own folder, where a cap on that folder does not look."""
    import os, time
    for i in range(8):   # files under the size limit, 8 MiB in all
        with open(os.path.join(os.path.dirname(os.getcwd()), f"junk{i}"), "wb") as f:
            f.write(b"x" * (1 << 20))
    time.sleep(1.5)   # the grader looks at the disk while it waits
    return 0

def busy_template():
    """Keep the template busy (SIGCHLD after SIGCHLD) until this child's CPU runs out."""
    import os, signal
    template = os.getppid()
    while True:
        try:
            os.kill(template, signal.SIGCHLD)
        except OSError:   # gone
            pass
'''


@contextlib.contextmanager
def run_folder(level, submission, zygote=None):
    """(a run folder, a maker of its student processes); all closed at the end."""
    folder = RunFolder(sandbox.plan(level), zygote)
    made = []

    def process(module, **limits):
        made.append(StudentProcess(folder, submission, module, Limits(**limits), level))
        return made[-1]

    try:
        yield folder, process
    finally:
        for p in made:
            p.close()
        folder.close()


@pytest.fixture
def run(tmp_path):
    (tmp_path / "patches.py").write_text(PATCHES)
    (tmp_path / "clean.py").write_text(CLEAN)
    with run_folder("none", tmp_path) as made:
        yield made


def test_monkeypatching_numpy_in_one_exercise_does_not_reach_the_next(run):
    folder, process = run
    patched, clean = process("patches"), process("clean")
    assert patched.call("patched").value == 42.0
    assert clean.call("clean").value == [11.0, 4.0, 3.0]
    assert clean.proc.pid == patched.proc.pid     # both forks of the run's one template


def test_a_hung_or_dead_child_is_replaced_by_a_fork_not_a_new_sandbox(run):
    folder, process = run
    child = process("clean", time=0.25)
    assert child.call("clean").ok
    template = child.proc.pid
    assert child.call("hang").status is Status.TIMEOUT
    assert child.call("die").status is Status.CRASHED
    assert child.call("clean").value == [11.0, 4.0, 3.0]
    assert child.proc.pid == template and folder.reaper.live == {template}


def test_a_link_planted_in_the_work_folder_is_never_written_through(run, tmp_path):
    """The work folder holds every child's folder; where a child may write in it (its
    uid is the grader's user's, as in bubblewrap without root), a link it plants must
    neither lead the grader to write elsewhere nor give the next template its settings."""
    folder, process = run
    precious = tmp_path / "precious.txt"
    precious.write_text("the grader's user's file")
    for name in ("template.json", "template.log", "job.json"):
        (folder.work / name).symlink_to(precious)
    assert process("clean").call("clean").value == [11.0, 4.0, 3.0]
    assert precious.read_text() == "the grader's user's file"


def test_a_template_serves_only_limits_it_can_pass_on():
    small, large = Limits(memory=256 * 1024 ** 2), Limits(memory=2 * 1024 ** 3, time=60)
    assert fits(small, large) and not fits(large, small)
    assert fits(Limits(time=60), Limits(time=1))   # wall time is the grader's, not its
    assert widest(small, large).memory == large.memory


def test_a_process_that_needs_wider_limits_gets_a_template_of_its_own(run):
    folder, process = run
    narrow = process("clean", memory=512 * 1024 ** 2)
    wide = process("clean", memory=2 * 1024 ** 3)
    assert narrow.call("clean").ok and wide.call("clean").ok
    assert narrow.proc.pid != wide.proc.pid
    assert folder.reaper.live == {narrow.proc.pid, wide.proc.pid}


RESPAWNING = '''
import os, time

def leave_a_chain():
    """Sessions that respawn one another: a sweep of /proc kills one per pass."""
    if os.fork() == 0:
        os.setsid()
        while True:
            try:
                if os.fork() == 0:
                    os.setsid()
                    continue
                os.wait()
            except OSError:
                time.sleep(0.001)
    time.sleep(0.3)

def others():
    """The processes of this uid besides this one and the template."""
    mine = (os.getpid(), os.getppid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in mine:
            try:
                status = open(f"/proc/{entry}/status").read()
            except OSError:
                continue
            if f"Uid:\\t{os.getuid()}\\t" in status and "State:\\tZ" not in status:
                found.append(int(entry))
    return found
'''


@pytest.fixture
def sandboxed(tmp_path, monkeypatch):
    """Like ``run``, in bubblewrap (the run folder where the run's uid reaches it)."""
    if not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is not available here")
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tmp_path.chmod(0o755)
    sub = tmp_path / "sub"
    sub.mkdir(mode=0o755)
    for name, text in (("respawning", RESPAWNING), ("clean", CLEAN)):
        (sub / f"{name}.py").write_text(text)
    with run_folder("bubblewrap", sub) as made:
        yield made


@pytest.mark.skipif(os.geteuid() != 0, reason="as root: a uid of the run's own")
def test_a_chain_a_child_leaves_is_gone_before_the_next_fork(sandboxed):
    _, process = sandboxed
    first = process("respawning")
    assert first.call("leave_a_chain").ok
    first.close()
    assert process("respawning").call("others").value == []


def test_the_template_spends_no_childs_cpu_limit(sandboxed):
    """Its CPU time adds up over every child it serves (each can keep it busy): a limit
    of its own would end it, with whatever child is alive then, in a later exercise."""
    _, process = sandboxed
    busy = process("clean", cpu=1, time=10)
    template = busy.proc if busy.call("clean").ok else None
    for _ in range(2):
        assert busy.call("busy_template").status is Status.CRASHED
    later = process("clean", cpu=1)
    assert later.call("clean").ok and later.proc is template


@pytest.mark.skipif(not sandbox.bubblewrap_works(), reason="bubblewrap is not available here")
def test_what_a_child_writes_beside_its_folder_counts_and_is_gone_for_the_next(tmp_path,
                                                                             monkeypatch):
    """In bubblewrap without root the child's uid owns work/ (as the grader's user does):
    what it writes there counts against its disk cap and is removed before the next fork."""
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "clean.py").write_text(CLEAN)
    # as root: bubblewrap with no uid of the run's own, the child owning work/ likewise
    plan = sandbox.plan("bubblewrap") if os.geteuid() else sandbox.Plan(
        "bubblewrap", "bubblewrap", "bubblewrap")
    folder = RunFolder(plan)
    small = Limits(tmp=1 << 20, answer=1 << 20, output=4096, time=10)
    try:
        filler = StudentProcess(folder, tmp_path / "sub", "clean", small, "bubblewrap")
        outcome = filler.call("fill_the_work_folder")
        assert outcome.status is Status.CRASHED and outcome.crash.kind == "limit", outcome
        filler.close()
        later = StudentProcess(folder, tmp_path / "sub", "clean", small, "bubblewrap")
        assert later.call("clean").value == [11.0, 4.0, 3.0]
        assert sorted(p.name for p in folder.work.iterdir()) == [later.workdir.name]
        later.close()
    finally:
        folder.close()


NICENESS = '''
import os

def niceness():
    return os.nice(0)

def raise_priority():
    try:
        return os.nice(-5)
    except OSError:
        return "refused"
'''


@pytest.mark.parametrize("level", ["none", pytest.param("bubblewrap", marks=pytest.mark.skipif(
    sandbox.bubblewrap_works() is False, reason="bubblewrap is not available here"))])
def test_a_child_runs_below_the_graders_priority_and_cannot_raise_it(tmp_path, level):
    """Burners a child spawns compete with the trusted side's forks (the hidden-test
    session runs beside the child): they get the smaller share of the CPU."""
    (tmp_path / "nice.py").write_text(NICENESS)
    with run_folder(level, tmp_path) as (_, process):
        child = process("nice")
        assert child.call("niceness").value == os.nice(0) + bubblewrap.STUDENT_NICENESS
        if os.geteuid() != 0 or level == "bubblewrap":
            assert child.call("raise_priority").value == "refused"


# ------------------------------------------------------------ a worker's zygote

INSIDE = '''
import os

def inside():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    caps = {k: int(status[k], 16) for k in ("CapPrm", "CapEff", "CapAmb", "CapInh")}
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return {"uid": os.getuid(), "euid": os.geteuid(), "caps": caps, "fds": fds,
            "no_new_privs": int(status["NoNewPrivs"]), "root": sorted(os.listdir("/")),
            "pid": os.getpid(), "seen": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
'''

ZYGOTE = pytest.mark.skipif(os.geteuid() != 0 or not sandbox.bubblewrap_works(),
                            reason="a zygote needs root and bubblewrap")


@pytest.fixture
def zygote():
    """This test process's zygote (conftest), which its other gradings share."""
    from conftest import session_zygote

    return session_zygote()


@pytest.mark.skipif(not sandbox.bubblewrap_works(), reason="bubblewrap is not available here")
@pytest.mark.parametrize("from_zygote", [False, pytest.param(True, marks=ZYGOTE)])
def test_no_template_has_a_cpu_limit_whichever_way_it_started(from_zygote, tmp_path, request,
                                                              monkeypatch):
    """Started in its own sandbox or forked into one by the zygote, a template carries
    no CPU limit (its children each get theirs): see the busy-template test above."""
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tmp_path.chmod(0o755)
    (tmp_path / "sub").mkdir(mode=0o755)
    (tmp_path / "sub" / "clean.py").write_text(CLEAN)
    zygote = request.getfixturevalue("zygote") if from_zygote else None
    with run_folder("bubblewrap", tmp_path / "sub", zygote) as (_, process):
        child = process("clean", cpu=1)
        assert child.call("template_cpu_limit").value == "unlimited"


@ZYGOTE
def test_a_template_from_the_zygote_is_a_sandbox_like_any_other(zygote, tmp_path):
    """The zygote forks each run's template into that run's own bubblewrap sandbox: its
    children run as the run's uid, with no capability and no new privileges, see the
    sandbox's root and processes only, and hold no descriptor of the world outside."""
    (tmp_path / "inside.py").write_text(INSIDE)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, process):
        child = process("inside")
        seen = child.call("inside").value
        assert child.template.process.popen.args[-3:-1] == ["sh", "-c"]   # held, not started
        assert seen["uid"] == seen["euid"] == folder.plan.identity.uid
        assert seen["caps"] == {"CapPrm": 0, "CapEff": 0, "CapAmb": 0, "CapInh": 0}
        assert seen["no_new_privs"] == 1
        # not the host's /: its folders only where Python lives (a venv under /opt or
        # /home binds that folder's path, read-only)
        python_tops = {Path(os.path.realpath(p)).parts[1]
                       for p in (sys.prefix, sys.base_prefix, *sandbox.library_paths())}
        allowed = {"tmp", "usr", "bin", "lib", "lib64", "sbin", "dev", "proc", "etc", "root",
                   *python_tops}
        assert not ({"home", "work"} - python_tops) & set(seen["root"])
        assert not (set(os.listdir("/")) - allowed) & set(seen["root"])
        assert len(seen["seen"]) < 8   # the sandbox's few processes, not the machine's
        outside = [t for t in seen["fds"].values() if t.startswith("/") and not t.startswith(
            (str(folder.root), "/dev/null"))]
        assert outside == [], seen["fds"]


@ZYGOTE
def test_monkeypatching_stays_in_one_child_of_a_zygote_template(zygote, tmp_path):
    (tmp_path / "patches.py").write_text(PATCHES)
    (tmp_path / "clean.py").write_text(CLEAN)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, process):
        patched, clean = process("patches"), process("clean")
        assert patched.call("patched").value == 42.0
        assert clean.call("clean").value == [11.0, 4.0, 3.0]
        assert clean.proc.pid == patched.proc.pid
        hung = process("clean", time=0.5)
        assert hung.call("hang").status is Status.TIMEOUT
        assert hung.call("die").status is Status.CRASHED
        assert hung.call("clean").value == [11.0, 4.0, 3.0]
        assert hung.proc.pid == clean.proc.pid   # replaced by forks of the same template


@ZYGOTE
def test_a_zygote_template_runs_on_the_cpus_of_the_worker_that_asked(zygote, tmp_path):
    """A worker pinned to one CPU (batch.pin_cpus): the template the zygote forks into
    its sandbox, and so each child, runs on that CPU, not on all of the zygote's."""
    cpus = _cpus()
    assert _pinned_call(tmp_path, MOVE_CPUS, "where", "cpus", [cpus], cpus[-1], zygote) == \
        [[cpus[-1]], "PermissionError"]


def _cpus():
    """This process's CPUs, if there are two or more (else nothing is pinned: skip)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing is pinned")
    return cpus


def _pinned_call(tmp_path, source, module, function, args, cpu, zygote=None):
    """The value of ``module.function(*args)`` (``source``) in a bubblewrap run started
    while this process runs on ``cpu`` alone, as a pinned worker does."""
    (tmp_path / f"{module}.py").write_text(source)
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        with run_folder("bubblewrap", tmp_path, zygote) as (folder, process):
            return process(module).call(function, args).value
    finally:
        os.sched_setaffinity(0, cpus)


MOVE_CPUS = """
import os

def cpus(everywhere):
    try:   # a student's busy processes moving to the other worker's CPU
        os.sched_setaffinity(0, everywhere)
        refused = None
    except OSError as exc:
        refused = type(exc).__name__
    return [sorted(os.sched_getaffinity(0)), refused]
"""


@pytest.mark.skipif(not sandbox.bubblewrap_works(), reason="needs bubblewrap")
def test_no_child_of_a_pinned_sandbox_can_leave_its_cpus(tmp_path):
    """A sandbox a pinned worker starts itself (no zygote) keeps its children on the
    worker's CPUs too: a student's processes crowd their own grading only."""
    cpus = _cpus()
    assert _pinned_call(tmp_path, MOVE_CPUS, "where", "cpus", [cpus], cpus[0]) == \
        [[cpus[0]], "PermissionError"]


SQ_THREAD_ELSEWHERE = """
import ctypes, errno, os, time

def sq_thread(cpu):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    params = (ctypes.c_uint32 * 30)()   # struct io_uring_params
    params[2] = 1 << 1 | 1 << 2         # IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF
    params[3] = cpu                     # sq_thread_cpu
    params[4] = 1000                    # sq_thread_idle (ms): it busy-polls that long
    fd = libc.syscall(ctypes.c_long(425), 8, ctypes.byref(params))   # io_uring_setup
    if fd < 0:
        return errno.errorcode[ctypes.get_errno()]
    time.sleep(0.2)
    allowed = set()
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/status") as f:
            allowed |= {line.split()[1] for line in f if line.startswith("Cpus_allowed_list")}
    os.close(fd)
    return sorted(allowed)
"""


@pytest.mark.skipif(not sandbox.bubblewrap_works(), reason="needs bubblewrap")
def test_no_io_uring_thread_of_a_pinned_sandbox_runs_on_another_cpu(tmp_path):
    """io_uring's kernel threads belong to the student's process but take their CPUs from
    the ring's settings (an SQPOLL thread on any CPU of the cpuset: sq_thread_cpu), not
    from sched_setaffinity: a pinned sandbox's children cannot set up a ring at all."""
    cpus = _cpus()
    assert _pinned_call(tmp_path, SQ_THREAD_ELSEWHERE, "ring", "sq_thread", [cpus[-1]],
                        cpus[0]) == "EPERM"


@ZYGOTE
def test_without_its_zygote_a_run_starts_its_own_template(tmp_path):
    from conftest import session_zygote

    from grader.run.zygote import Zygote

    (tmp_path / "clean.py").write_text(CLEAN)
    gone = Zygote.attached(os.dup(session_zygote().adopt().detach()))   # a worker's
    gone.close()
    with run_folder("bubblewrap", tmp_path, gone) as (folder, process):
        child = process("clean")
        assert child.call("clean").value == [11.0, 4.0, 3.0]
        assert child.template.process.popen.args[-3:-1] != ["sh", "-c"]


@ZYGOTE
def test_the_zygote_enters_no_holder_that_shares_its_namespaces(zygote, tmp_path):
    """A holder whose root is its own but whose pid and net namespaces are the host's
    (not the run's sandbox: a bwrap that unshares less, a holder pid that died and was
    reused) is refused: the template would otherwise run in the host's namespaces."""
    import json
    import socket
    import subprocess

    folder = RunFolder(sandbox.plan("bubblewrap"))
    info_r, info_w = os.pipe()
    ready_r, ready_w = os.pipe()
    try:
        argv = bubblewrap.holder_command(folder.plan, str(folder.work), str(tmp_path),
                                      str(folder.runtime), Limits(), info_w, ready_w)
        argv = [a for a in argv if a not in ("--unshare-pid", "--unshare-net")]
        holder = subprocess.Popen(argv, pass_fds=(info_w, ready_w), stdout=subprocess.DEVNULL)
        os.close(info_w)
        os.close(ready_w)
        assert os.read(ready_r, 64) == b"ready\n"
        pid = json.loads(os.read(info_r, 4096))["child-pid"]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(os.devnull, "wb") as console:
            entered = zygote.enter(pid, theirs.fileno(), console.fileno(), {})
        theirs.close()
        assert not entered
        ours.close()
        holder.kill()
        holder.wait()
    finally:
        os.close(info_r)
        os.close(ready_r)
        folder.close()


KEYS = '''
import ctypes
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL = {"x86_64": 250, "aarch64": 219}[platform.machine()]

def _read(key):
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(KEYCTL, 11, ctypes.c_long(key), buf, 4096)   # KEYCTL_READ
    return buf.raw[:max(n, 0)]

def keys():
    """The payloads of the keys in the session, user and user-session keyrings."""
    found = []
    for ring in (-3, -4, -5):
        data = _read(ring)
        for i in range(0, len(data), 4):
            found.append(_read(int.from_bytes(data[i:i + 4], "little")).decode("latin-1"))
    return found
'''
SYSCALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}   # add_key, keyctl


def _add_key(ring, payload):
    """A user key in keyring ``ring`` (a KEY_SPEC), as this process; its serial."""
    import ctypes
    import platform

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    key = libc.syscall(SYSCALLS[platform.machine()][0], b"user", payload, payload,
                       len(payload), ctypes.c_long(ring))
    assert key > 0, os.strerror(ctypes.get_errno())
    return key


@pytest.mark.skipif(os.geteuid() != 0 or not sandbox.bubblewrap_works(), reason="as root")
@pytest.mark.skipif(__import__("platform").machine() not in SYSCALLS, reason="syscall numbers")
@pytest.mark.parametrize("level", ["bubblewrap", "zygote", "process"])
def test_a_child_sees_no_key_of_the_graders_session_nor_of_an_earlier_run(tmp_path, level,
                                                                          request):
    """Keyrings are no file and no process: the grader's session keyring (a root login's,
    pam_keyinit) would otherwise be the child's too, a key of root's readable to its
    possessor whatever its uid; the run uid's own keyrings outlive every earlier run."""
    import ctypes
    import platform

    (tmp_path / "keys.py").write_text(KEYS)
    keyctl = SYSCALLS[platform.machine()][1]
    zygote = None
    if level == "process":
        request.getfixturevalue("reachable_python")   # as root: a Python its uid can reach
    elif level == "zygote":
        zygote = request.getfixturevalue("zygote")
    pid = os.fork()
    if pid == 0:   # a session keyring of the grader's own, as a root login has
        code = 1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            assert libc.syscall(keyctl, 1, b"attn-test-session") > 0   # JOIN_SESSION_KEYRING
            _add_key(-3, b"root-session-secret")
            with run_folder("process" if level == "process" else "bubblewrap", tmp_path,
                            zygote) as (folder, process):
                uid = folder.plan.identity.uid
                earlier = os.fork()
                if earlier == 0:   # what an earlier run of this uid left
                    os.setresuid(uid, uid, uid)
                    _add_key(-4, b"left-in-user-keyring")
                    _add_key(-5, b"left-in-user-session-keyring")
                    os._exit(0)
                os.waitpid(earlier, 0)
                seen = process("keys").call("keys").value
                code = 0 if seen == [] else 3
                if code:
                    print("the child saw", seen)
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


@ZYGOTE
def test_a_run_the_zygote_fails_to_enter_starts_its_own_template(zygote, tmp_path,
                                                                  monkeypatch):
    """A zygote that cannot enter a run's sandbox costs that run a template start, not
    its exercise: the retry starts a sandbox of its own."""
    (tmp_path / "clean.py").write_text(CLEAN)
    monkeypatch.setattr(type(zygote), "enter", lambda *args: False)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, process):
        child = process("clean")
        assert child.call("clean").value == [11.0, 4.0, 3.0]
        assert child.template.process.popen.args[-3:-1] != ["sh", "-c"]
        assert folder.zygote is None


WHERE = '''
def where():
    print("I am", __file__)
    raise FileNotFoundError(__file__)
'''


def test_the_student_reads_their_own_paths_not_the_staged_copys(run, tmp_path):
    """A child runs a staged copy of the submission: what it prints or raises with names
    the student's own file, not a folder of the grader's."""
    folder, process = run
    (tmp_path / "where.py").write_text(WHERE)
    outcome = process("where").call("where")
    mine = str(tmp_path / "where.py")
    assert f"I am {mine}" in outcome.output and outcome.error["message"] == mine
    assert str(folder.root) not in outcome.output + outcome.error["message"]


@ZYGOTE
def test_workers_share_one_zygote_and_no_child_holds_a_graders_socket(tmp_path):
    """grade-all's workers each get a socket of their own to one zygote: a run entered
    through either works, no child holds any socket (not a grader's, not the zygote's),
    a worker that leaves ends nothing, and the zygote ends with its starter."""
    from grader.run.zygote import Zygote

    (tmp_path / "inside.py").write_text(INSIDE)
    starter = Zygote()
    workers = [Zygote.attached(os.dup(starter.adopt().detach())) for _ in range(2)]
    try:
        for worker in workers:
            with run_folder("bubblewrap", tmp_path, worker) as (folder, process):
                child = process("inside")
                seen = child.call("inside").value
                assert child.template.process.popen.args[-3:-1] == ["sh", "-c"]   # entered
                assert not [t for t in seen["fds"].values() if t.startswith("socket:")], \
                    seen["fds"]
        workers[0].close()
        with run_folder("bubblewrap", tmp_path, workers[1]) as (folder, process):
            assert process("inside").call("inside").ok
    finally:
        for worker in workers:
            worker.close()
        starter.close()
    assert starter.process.poll() is not None


LAYERS = INSIDE + '''
import sys


def modules():
    return sorted(name for name in ("numpy", "sympy") if name in sys.modules)


def leave_a_sleeper():
    import subprocess
    return subprocess.Popen(["sleep", "60"], start_new_session=True).pid


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def pid_namespace():
    return os.readlink("/proc/self/ns/pid")
'''


def _light_and_heavy(folder, submission):
    """Student processes of ``layers``: one for an exercise that needs numpy alone, one
    for an exercise that passes symbols (its children import sympy)."""
    return (StudentProcess(folder, submission, "layers", Limits(), "bubblewrap"),
            StudentProcess(folder, submission, "layers", Limits(), "bubblewrap",
                           preload=("sympy",)))


def _zygote_children(zygote, seconds=20.0):
    """The processes the zygote ``zygote`` started has forked (its deeper zygote), once
    there are any."""
    import time

    pid = zygote.process.pid
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            found = [int(p) for p in f.read().split()]
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("the zygote forked no deeper zygote")


def _gone(pid, seconds=5.0):
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@ZYGOTE
def test_a_zygote_template_holds_only_the_modules_its_exercise_needs(tmp_path):
    """A numpy-only exercise's child is a fork of a template without sympy (a third of
    the pages to copy and free per fork); one that needs sympy is forked by a deeper
    zygote's template, entered the same way (through a worker's socket too) and as bare
    of sockets.  Both zygotes end with their starter."""
    from grader.run.zygote import Zygote

    (tmp_path / "layers.py").write_text(LAYERS)
    starter = Zygote()
    worker = Zygote.attached(os.dup(starter.adopt().detach()))
    try:
        for zygote in (starter, worker):
            with run_folder("bubblewrap", tmp_path, zygote) as (folder, _):
                light, heavy = _light_and_heavy(folder, tmp_path)
                try:
                    assert light.call("modules").value == ["numpy"]
                    assert heavy.call("modules").value == ["numpy", "sympy"]
                    seen = heavy.call("inside").value
                    for child in (light, heavy):   # held by bubblewrap, entered by a zygote
                        assert child.template.process.popen.args[-3:-1] == ["sh", "-c"]
                    assert light.template is not heavy.template
                    assert seen["uid"] == folder.plan.identity.uid
                    assert seen["caps"]["CapEff"] == 0 and seen["no_new_privs"] == 1
                    assert not [t for t in seen["fds"].values() if t.startswith("socket:")], \
                        seen["fds"]
                finally:
                    light.close()
                    heavy.close()
        deeper = _zygote_children(starter)
    finally:
        worker.close()
        starter.close()
    assert all(_gone(pid) for pid in deeper)


@ZYGOTE
def test_without_its_deeper_zygote_a_run_that_needs_sympy_starts_its_own_template(tmp_path):
    """A deeper zygote that died costs the runs that need it a template start, not their
    exercises; the numpy-only templates are still entered."""
    import signal

    from grader.run.zygote import Zygote

    (tmp_path / "layers.py").write_text(LAYERS)
    starter = Zygote()
    try:
        for pid in _zygote_children(starter):
            os.kill(pid, signal.SIGKILL)
        with run_folder("bubblewrap", tmp_path, starter) as (folder, _):
            light = StudentProcess(folder, tmp_path, "layers", Limits(), "bubblewrap")
            assert light.call("modules").value == ["numpy"]
            assert light.template.process.popen.args[-3:-1] == ["sh", "-c"]
            heavy = StudentProcess(folder, tmp_path, "layers", Limits(), "bubblewrap",
                                   preload=("sympy",))
            try:
                assert heavy.call("modules").value == ["numpy", "sympy"]
                assert heavy.template.process.popen.args[-3:-1] != ["sh", "-c"]
            finally:
                light.close()
                heavy.close()
    finally:
        starter.close()


@ZYGOTE
def test_a_zygote_hands_one_sandbox_from_template_to_template(zygote, tmp_path):
    """Once none of its children runs, the numpy-only template ends and the deeper
    zygote's is entered into the same sandbox (one bubblewrap a student): it finds
    nothing the first one's children left, and the sandbox ends with the run."""
    (tmp_path / "layers.py").write_text(LAYERS)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, _):
        light = StudentProcess(folder, tmp_path, "layers", Limits(), "bubblewrap")
        sleeper = light.call("leave_a_sleeper").value
        namespace = light.call("pid_namespace").value
        first = light.template
        light.close()
        heavy = StudentProcess(folder, tmp_path, "layers", Limits(), "bubblewrap",
                               preload=("sympy",))
        try:
            assert heavy.call("modules").value == ["numpy", "sympy"]
            assert heavy.template is not first and first.dead
            assert heavy.template.process is first.process   # the same holder
            assert heavy.call("pid_namespace").value == namespace
            assert heavy.call("alive", [sleeper]).value is False
        finally:
            heavy.close()
    assert first.process.exited()


@ZYGOTE
def test_a_template_with_a_child_running_keeps_its_sandbox(zygote, tmp_path):
    """A template whose child still runs is not ended for another: the deeper zygote's
    template gets a sandbox of its own, and the first one goes on serving."""
    (tmp_path / "layers.py").write_text(LAYERS)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, _):
        light, heavy = _light_and_heavy(folder, tmp_path)
        try:
            assert light.call("modules").value == ["numpy"]
            assert heavy.call("modules").value == ["numpy", "sympy"]
            assert heavy.template.process is not light.template.process
            assert light.call("pid_namespace").value != heavy.call("pid_namespace").value
            assert light.call("modules").value == ["numpy"]
        finally:
            light.close()
            heavy.close()


@ZYGOTE
def test_a_sandbox_handed_to_a_template_that_fails_to_enter_is_stopped(zygote, tmp_path,
                                                                      monkeypatch):
    """If the deeper zygote cannot enter the sandbox it was handed, that sandbox ends
    (no holder is left behind) and the run starts a template of its own."""
    (tmp_path / "layers.py").write_text(LAYERS)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, _):
        light = StudentProcess(folder, tmp_path, "layers", Limits(), "bubblewrap")
        assert light.call("modules").value == ["numpy"]
        first = light.template
        light.close()
        monkeypatch.setattr(type(zygote), "enter", lambda *args, **kwargs: False)
        heavy = StudentProcess(folder, tmp_path, "layers", Limits(), "bubblewrap",
                               preload=("sympy",))
        try:
            assert heavy.call("modules").value == ["numpy", "sympy"]
            assert heavy.template.process.popen.args[-3:-1] != ["sh", "-c"]   # its own
            assert first.process.exited()
        finally:
            heavy.close()


STOPPER = INSIDE + '''
import signal
import time


def stop_then_kill_the_template():
    """A stray that stops the template, so that it neither kills this child when told to
    nor kills the stray, and kills it once the grader has asked it to end: its socket
    ends as if it had ended as asked."""
    template = os.getppid()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                os.kill(template, signal.SIGSTOP)
                time.sleep(1.0)
                os.kill(template, signal.SIGKILL)
                time.sleep(60)
            finally:
                os._exit(0)
        os._exit(0)
    time.sleep(0.3)
    return True


def pid_namespace():
    return os.readlink("/proc/self/ns/pid")
'''


@ZYGOTE
def test_a_template_killed_while_it_retires_does_not_hand_its_sandbox_over(zygote, tmp_path):
    """A template that ends without killing what its children left (a stray stopped, then
    killed it) has not ended as asked: its sandbox, with the stray in it, is stopped, and
    the next template gets a sandbox of its own."""
    (tmp_path / "stopper.py").write_text(STOPPER)
    with run_folder("bubblewrap", tmp_path, zygote) as (folder, _):
        light = StudentProcess(folder, tmp_path, "stopper", Limits(), "bubblewrap")
        namespace = light.call("pid_namespace").value
        assert light.call("stop_then_kill_the_template").value is True
        first = light.template
        light.close()
        heavy = StudentProcess(folder, tmp_path, "stopper", Limits(), "bubblewrap",
                               preload=("sympy",))
        try:
            assert heavy.call("pid_namespace").value != namespace
            assert heavy.template.process is not first.process
            assert _gone(first.process.popen.pid)
        finally:
            heavy.close()


@pytest.mark.parametrize("args, early", [
    (["grade-all", "day3", "class"], True), (["grade-all", "day3", "class", "-j", "1"], False),
    (["grade-all", "day3", "class", "--jobs=1"], False), (["grade-all", "-j2", "d", "c"], True),
    (["--lang", "zh", "grade-all", "--jobs", "3", "d", "c"], True), (["day3"], False)])
def test_the_entry_point_starts_a_zygote_early_only_for_a_class(args, early, monkeypatch):
    from grader import entry

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert entry._grades_a_class(args) is early


@pytest.mark.parametrize("args, early", [
    (["day3"], True), (["day3", "--json", "--submission", "x"], True), (["nothing"], False),
    (["grade-all", "day3", "c"], False), (["--lang", "zh", "day3"], False), ([], False),
    (["day3", "--course", "elsewhere"], False)])
def test_a_cold_grading_of_a_set_starts_its_zygote_early_too(args, early, monkeypatch):
    from grader import entry

    monkeypatch.chdir(ROOT)
    assert entry._grades_a_set(args) is early


def _cold_grading(exercise, submission, start, after):
    """``attn-grade day3 --json --exercise EXERCISE`` cold, in a Python of its own whose
    zygote ``start`` starts as grader.entry would; its document, and the last line:
    what ``after`` (an expression of ``early``, that zygote) printed at its end."""
    code = ("import sys; sys.argv = ['attn-grade', 'day3', '--json', '--exercise', "
            f"{exercise!r}, '--submission', {str(submission)!r}]\n"
            "from grader import entry\n"
            "from grader.run import zygote\n"
            f"{start}\n"
            "early = zygote._early\n"
            "from grader.cli import main\n"
            "try:\n    main.main(prog_name='attn-grade')\nexcept SystemExit:\n    pass\n"
            f"print({after})")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return json.JSONDecoder().raw_decode(out)[0], out.strip().splitlines()[-1]


@ZYGOTE
def test_a_cold_grading_forks_its_templates_from_the_zygote_started_before_its_imports():
    """``attn-grade SET`` takes the zygote grader.entry started (its templates fork
    from it, in the run's sandbox) and stops it at its end."""
    document, last = _cold_grading(
        "growth", "solutions/day3", "zygote.start_early()",
        "early is not None and zygote._early is None and early.process.poll() is not None")
    assert document["score"] == 6.0
    assert last == "True"


def test_a_cold_grading_asks_its_zygote_for_sympy_only_where_its_exercises_need_it(
        monkeypatch):
    """grader.entry reads the set's cache before the grader's imports: exercises that
    need no sympy get a zygote of numpy's layer alone (no third of a second of sympy on
    the other core); one that needs it, the whole set, or a cache that cannot tell, every
    layer."""
    from grader import entry
    from grader.course import loader
    from grader.course.spec import Course
    from grader.run.zygote import LAYERS

    loader.load_set(Course(ROOT), "day3")   # its cache entry, as any earlier run leaves it
    course = ["--course", str(ROOT)]
    assert entry._layers_asked(["day3", "--exercise", "attention", *course], LAYERS) \
        == LAYERS[:1] == (("numpy",),)
    assert entry._layers_asked(["day3", "--exercise=temperature", "--exercise", "attention",
                                *course], LAYERS) == LAYERS[:1]
    assert entry._layers_asked(["day3", "--exercise", "attention", "--exercise", "kv_cache",
                                *course], LAYERS) == LAYERS
    assert entry._layers_asked(["day3", *course], LAYERS) == LAYERS
    assert entry._layers_asked(["nosuchset", *course], LAYERS) == LAYERS
    # and none where the run asks for another level than bubblewrap's
    assert entry._grades_a_set(["day3", *course])
    assert entry._grades_a_set(["day3", "--isolation=bubblewrap", *course])
    assert not entry._grades_a_set(["day3", "--isolation", "process", *course])
    assert not entry._grades_a_set(["day3", "--isolation=none", f"--course={ROOT}"])
    monkeypatch.setenv("ATTN_GRADE_SPEC_CACHE", "off")
    assert entry._layers_asked(["day3", "--exercise", "attention", *course], LAYERS) == LAYERS


@ZYGOTE
def test_a_student_file_that_imports_sympy_is_graded_beside_a_zygote_without_it(tmp_path):
    """The zygote of a cold grading of attention has numpy's layer alone; a student's
    attention.py that imports sympy gets a template of its own, and every point."""
    import shutil

    shutil.copytree(ROOT / "solutions" / "day3", tmp_path / "work")
    path = tmp_path / "work" / "attention.py"
    path.write_text("import sympy\n" + path.read_text())
    document, last = _cold_grading(
        "attention", tmp_path / "work",
        "zygote.start_early(entry._layers_asked(sys.argv[1:], zygote.LAYERS))",
        "early.modules")
    assert document["score"] == document["max_score"] > 0, document["output"]
    assert last == "('numpy',)"


@ZYGOTE
def test_a_class_takes_the_zygote_started_before_its_imports(tmp_path, monkeypatch):
    """grader.entry starts it before the grader's imports; the class's Pool takes that
    one (no second zygote), and one that is not taken is stopped, its folder gone."""
    from grader.instructor.batch import _shared_zygote
    from grader.run import zygote as zygote_module

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    zygote_module.start_early()
    early = zygote_module._early.process
    shared = _shared_zygote(2)
    try:
        assert shared.process is early and zygote_module.take_early() is None
        assert shared.serves(sandbox.Plan("bubblewrap", "bubblewrap", "bubblewrap",
                                          sandbox.Identity(65000, 65000)))
    finally:
        shared.close()
    zygote_module.start_early()
    unused = zygote_module._early.process
    assert _shared_zygote(1) is None and unused.poll() is not None
    assert not list(tmp_path.iterdir())


NAMESPACE = '''
import os

def pid_namespace():
    return os.stat("/proc/self/ns/pid").st_ino
'''


@ZYGOTE
def test_each_run_from_the_zygote_lands_in_its_own_pid_namespace_and_the_zygote_at_home(
        zygote, tmp_path):
    """The zygote points its next fork at a run's PID namespace, then back at its own:
    three runs side by side, started one after another, each get their holder's."""
    (tmp_path / "where.py").write_text(NAMESPACE)

    def holders_namespace(process):
        return os.stat(f"/proc/{process.template.holder}/ns/pid").st_ino

    with run_folder("bubblewrap", tmp_path, zygote) as (_, first), \
            run_folder("bubblewrap", tmp_path, zygote) as (_, second):
        a, b = first("where"), second("where")
        seen = a.call("pid_namespace").value, b.call("pid_namespace").value
        assert seen == (holders_namespace(a), holders_namespace(b)) and seen[0] != seen[1]
        # while those live (a namespace's number may be reused once it is gone)
        with run_folder("bubblewrap", tmp_path, zygote) as (_, third):
            c = third("where")
            assert c.call("pid_namespace").value == holders_namespace(c) not in seen
    home = f"/proc/{zygote.process.pid}/ns"
    assert os.stat(f"{home}/pid_for_children").st_ino == os.stat(f"{home}/pid").st_ino


def test_a_ctrl_c_as_the_zygote_starts_does_not_end_it_before_it_removes_its_folder(
        tmp_path, monkeypatch):
    """grade-all's Ctrl-C reaches its process group, the zygote's too: one that came
    before the zygote's main() ignored it ended it with its folder still there."""
    import signal

    from grader.run import zygote as zygote_module

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    started = zygote_module.start([["json"]])
    os.kill(started.process.pid, signal.SIGINT)   # while its interpreter starts
    started.sock.close()   # its starter is gone: it ends once it has read its folder
    assert started.process.wait(20) == 0
    assert not list(tmp_path.iterdir())


@ZYGOTE
@pytest.mark.parametrize("where", ["_holder_pid", "Zygote.enter"])
def test_a_ctrl_c_while_a_run_enters_its_sandbox_leaves_no_bubblewrap_behind(
        zygote, tmp_path, monkeypatch, where):
    """A worker's Ctrl-C (or any exception) while it waits for the holder or the
    zygote: the bubblewrap it started is killed with the run, not left to outlive the
    worker (whose death leaves a half-built sandbox blocked for good)."""
    import signal

    from grader.run import template as template_module

    (tmp_path / "clean.py").write_text(CLEAN)

    def interrupted(*_):
        raise KeyboardInterrupt

    if where == "_holder_pid":   # the holder is still being built
        monkeypatch.setattr(bubblewrap, "holder_pid", interrupted)
    else:                        # it holds the finished sandbox
        monkeypatch.setattr(zygote, "enter", interrupted)
    started = set()
    start = template_module.Child.start

    def recorded(*args, **kwargs):
        child = start(*args, **kwargs)
        started.add(child.pid)
        return child

    monkeypatch.setattr(template_module.Child, "start", recorded)
    try:
        with run_folder("bubblewrap", tmp_path, zygote) as (_, process):
            with pytest.raises(KeyboardInterrupt):
                process("clean").call("clean")
            assert started and all(_gone(pid) for pid in started)
    finally:
        for pid in started:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
