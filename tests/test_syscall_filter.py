"""The syscall filter of every sandboxed process (issue 28): what it refuses, read off
the compiled program by a small BPF interpreter, then tried by student code in a child
at each level, with what a student does need (threads, a subprocess, numpy) still
working."""

import errno
import os
import platform
import struct

import pytest
from conftest import HANG_GUARD

from grader.course.limits import Limits
from grader.run import sandbox, syscalls
from grader.run.student import RunFolder, StudentProcess

PROGRAM = syscalls.program()
pytestmark = pytest.mark.skipif(PROGRAM is None, reason="no libseccomp here: no filter")

AUDIT_X86_64, AUDIT_I386 = 0xC000003E, 0x40000003
X32 = 0x40000000
ALLOW, ERRNO, KILL_MASK = 0x7FFF0000, 0x00050000, 0xFFFF0000


def run_filter(program, nr, arch=AUDIT_X86_64, args=(0,) * 6):
    """What the classic BPF ``program`` returns for a call (seccomp_data: nr, arch,
    instruction pointer, six 64-bit arguments, little-endian)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    code = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    a = x = pc = 0
    memory = [0] * 16
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        kind, size_mode, source = op & 0x07, op & 0xF8, op & 0x08
        if kind == 0x00:     # BPF_LD
            a = struct.unpack_from("<I", data, k)[0] if size_mode == 0x20 else \
                memory[k] if size_mode == 0x60 else k
        elif kind == 0x01:   # BPF_LDX
            x = memory[k] if size_mode == 0x60 else k
        elif kind == 0x02:   # BPF_ST
            memory[k] = a
        elif kind == 0x03:   # BPF_STX
            memory[k] = x
        elif kind == 0x04:   # BPF_ALU
            operand = x if source else k
            a = {0x00: a + operand, 0x10: a - operand, 0x20: a * operand, 0x40: a | operand,
                 0x50: a & operand, 0x60: a << operand, 0x70: a >> operand,
                 0x80: -a}[op & 0xF0] & 0xFFFFFFFF
        elif kind == 0x05:   # BPF_JMP
            operand = x if source else k
            test = op & 0xF0
            if test == 0x00:
                pc += k
                continue
            taken = {0x10: a == operand, 0x20: a > operand, 0x30: a >= operand,
                     0x40: bool(a & operand)}[test]
            pc += jt if taken else jf
        elif kind == 0x06:   # BPF_RET
            return a if op & 0x10 else k
        elif kind == 0x07:   # BPF_MISC: TAX, TXA
            if op & 0xF8 == 0x00:
                x = a
            else:
                a = x


X86_64 = {"read": 0, "clone": 56, "keyctl": 250, "add_key": 248, "unshare": 272,
          "sched_setaffinity": 203, "clone3": 435, "shmget": 29, "mount": 165,
          "ptrace": 101, "bpf": 321, "io_uring_setup": 425, "getpid": 39}
X32_OWN = {"ptrace": 521}   # x32's own entry (101 is x86_64's alone there)
I386 = {"read": 3, "keyctl": 288, "unshare": 310, "sched_setaffinity": 241, "ipc": 117}
CLONE_NEWUSER, SIGCHLD = 0x10000000, 17


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64's numbers")
def test_the_compiled_filter_refuses_what_no_exercise_needs_on_every_abi():
    eperm, enosys = ERRNO | errno.EPERM, ERRNO | errno.ENOSYS
    for name in ("keyctl", "add_key", "unshare", "sched_setaffinity", "shmget", "mount",
                 "ptrace", "bpf", "io_uring_setup"):
        assert run_filter(PROGRAM, X86_64[name]) == eperm, name
        x32 = X32_OWN.get(name, X86_64[name])   # most numbers are x86_64's, with bit 30
        assert run_filter(PROGRAM, X32 | x32) == eperm, f"x32 {name}"
    for name in ("keyctl", "unshare", "sched_setaffinity", "ipc"):
        assert run_filter(PROGRAM, I386[name], AUDIT_I386) == eperm, f"i386 {name}"
    assert run_filter(PROGRAM, X86_64["clone3"]) == enosys
    assert run_filter(PROGRAM, X86_64["clone"], args=(CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0, 0)) \
        == eperm
    # what a student's code and the template need
    for name in ("read", "getpid"):
        assert run_filter(PROGRAM, X86_64[name]) == ALLOW
        assert run_filter(PROGRAM, I386.get(name, 20), AUDIT_I386) == ALLOW
    assert run_filter(PROGRAM, X86_64["clone"], args=(SIGCHLD, 0, 0, 0, 0, 0)) == ALLOW
    assert run_filter(PROGRAM, X86_64["clone"], args=(0x003D0F00, 0, 0, 0, 0, 0)) == ALLOW


TRIES = r'''
import ctypes, errno, os, subprocess, threading
import numpy as np

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def _errno(result):
    return 0 if result >= 0 else ctypes.get_errno()

def tries():
    """The errno of each refused call (0: it worked), the capability sets, and what
    must keep working."""
    out = {}
    out["keyctl"] = _errno(libc.syscall(250, 0, ctypes.c_long(-4), 0))   # GET_KEYRING_ID
    out["add_key"] = _errno(libc.syscall(248, b"user", b"k", b"v", 1, ctypes.c_long(-4)))
    out["unshare_user"] = _errno(libc.unshare(0x10000000))
    out["unshare_net"] = _errno(libc.unshare(0x40000000))
    out["unshare_mount"] = _errno(libc.unshare(0x00020000))
    out["shmget"] = _errno(libc.shmget(0, 4096, 0o1600))
    out["mq_open"] = _errno(libc.syscall(240, b"attn", 0o100 | 2, 0o600, None))
    out["ptrace"] = _errno(libc.ptrace(16, os.getppid(), None, None))    # PTRACE_ATTACH
    out["sched_setaffinity"] = _errno(libc.sched_setaffinity(0, 8, ctypes.byref(ctypes.c_ulong(1))))
    out["mount"] = _errno(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    out["caps"] = {k: int(status[k], 16) for k in ("CapPrm", "CapEff", "CapAmb", "CapBnd")}
    out["no_new_privs"] = int(status["NoNewPrivs"])
    seen = []
    worker = threading.Thread(target=lambda: seen.append(float(np.dot([1, 2], [3, 4]))))
    worker.start()
    worker.join()
    out["thread"] = seen
    out["subprocess"] = subprocess.run(["/bin/echo", "ok"], capture_output=True,
                                       text=True).stdout.strip()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return out
'''

REFUSED = {"keyctl", "add_key", "unshare_user", "unshare_net", "unshare_mount", "shmget",
           "mq_open", "ptrace", "sched_setaffinity", "mount"}
LEVELS = [
    pytest.param("process", marks=pytest.mark.skipif(
        os.geteuid() != 0, reason="the process level's filter is checked as root")),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(
        not sandbox.bubblewrap_works(), reason="bubblewrap is not available here")),
    pytest.param("zygote", marks=pytest.mark.skipif(
        os.geteuid() != 0 or not sandbox.bubblewrap_works(),
        reason="a zygote needs root and bubblewrap")),
]


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64's numbers")
@pytest.mark.parametrize("level", LEVELS)
def test_student_code_cannot_make_the_refused_calls_and_keeps_no_capability(
        tmp_path, level, request):
    if level == "process":
        request.getfixturevalue("reachable_python")   # as root: a Python its uid can reach
    zygote = None
    if level == "zygote":   # this test process's, which its other gradings share
        from conftest import session_zygote

        zygote = session_zygote()
    (tmp_path / "tries.py").write_text(TRIES)
    tmp_path.chmod(0o755)
    folder = RunFolder(sandbox.plan("bubblewrap" if level == "zygote" else level), zygote)
    try:
        process = StudentProcess(folder, tmp_path, "tries", Limits(time=HANG_GUARD),
                                 folder.plan.level)
        outcome = process.call("tries")
        process.close()
    finally:
        folder.close()
    assert outcome.ok, outcome
    seen = outcome.value
    assert {name: seen[name] for name in REFUSED} == {name: errno.EPERM for name in REFUSED}
    assert seen["caps"] == {"CapPrm": 0, "CapEff": 0, "CapAmb": 0, "CapBnd": 0}
    assert seen["no_new_privs"] == 1
    assert seen["thread"] == [11.0] and seen["subprocess"] == "ok" and seen["fork"] == 7


def test_a_machine_without_libseccomp_says_so_in_the_report(monkeypatch):
    monkeypatch.setattr(syscalls, "program", lambda: None)
    plan = sandbox.plan("none")
    assert plan.description == "none" and plan.seccomp is None
    if sandbox.bubblewrap_works():
        plan = sandbox.plan("bubblewrap")
        plan.release()
        assert plan.description == "bubblewrap (no syscall filter: libseccomp not found)"
        assert sandbox.rank(plan.description) == sandbox.rank("bubblewrap")
