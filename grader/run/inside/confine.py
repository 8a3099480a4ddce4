"""Confinement of the sandbox's processes, from the inside: the uid switch, the
keyrings, the capability bounding set, resource limits and the syscall filter.

Runs inside the sandbox (a template, a zygote's fork entering a run's sandbox) and,
for a few primitives, on the grader side too (``identity`` clears a uid's keyrings
with ``own_keyrings``; the process level's start empties the bounding set).
Imports nothing of the grader's.
"""

import errno
import functools
import os
import resource
import signal
from typing import Any

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_SECCOMP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 22, 36, 38
SECCOMP_MODE_FILTER = 2


def drop_privileges(argv: list[str]) -> None:
    """``--nproc N`` and ``--user UID:GID`` (bubblewrap as root): limit, then switch.

    Runs before anything else, so no student code ever runs with the grader's
    uid or capabilities; the kernel counts RLIMIT_NPROC for the new uid.
    """
    args = dict(zip(argv[::2], argv[1::2]))
    if "--nproc" in args:
        n = int(args["--nproc"])
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    if "--user" in args:
        uid, gid = map(int, args["--user"].split(":"))
        drop_bounding_set()
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        own_keyrings()
        if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (uid, uid, gid, gid) \
                or os.getgroups() or _capabilities():
            raise SystemExit("attn-grade child: could not switch user")
    if "--cwd" in args:
        os.chdir(args["--cwd"])


KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}   # keyctl(2)'s syscall number
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_THREAD_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -1, -4, -5


def own_keyrings(join: bool = True) -> None:
    """After the uid switch: a new session keyring (``join``), and the uid's own keyrings
    emptied.

    The kernel's keyrings are neither files nor processes: no sandbox hides them.  The
    session keyring survives setuid (a root login's, from pam_keyinit: what root keeps
    there its possessor may read whatever its uid), and the uid's user keyrings and its
    persistent keyring (kept for days) outlive its processes: an earlier run of the same
    uid, another student's, would leave keys for this one.  The grader clears them too
    when it claims and releases a uid (``identity.forget_kernel_state_of``: ``join``
    False, in a thread of its own that alone runs as the uid).
    """
    import ctypes
    import platform

    number = KEYCTL.get(platform.machine())
    if number is None:
        return
    c = libc()
    c.syscall.restype = ctypes.c_long
    calls = [(KEYCTL_JOIN_SESSION_KEYRING, None)] if join else []
    for args in (*calls, (KEYCTL_CLEAR, ctypes.c_long(KEY_SPEC_USER_KEYRING)),
                 (KEYCTL_CLEAR, ctypes.c_long(KEY_SPEC_USER_SESSION_KEYRING))):
        if c.syscall(number, *args) < 0 and ctypes.get_errno() not in (
                errno.ENOSYS, errno.EPERM):   # no keys in this kernel, or none allowed
            raise SystemExit("attn-grade child: could not replace the keyrings: "
                             + os.strerror(ctypes.get_errno()))
    # linked into this thread's own keyring (which ends with it) to be cleared; a kernel
    # without persistent keyrings (EOPNOTSUPP) has none to clear
    persistent = c.syscall(number, KEYCTL_GET_PERSISTENT, ctypes.c_long(-1),
                           ctypes.c_long(KEY_SPEC_THREAD_KEYRING))
    if persistent > 0 and c.syscall(number, KEYCTL_CLEAR, ctypes.c_long(persistent)) < 0:
        raise SystemExit("attn-grade child: could not clear the persistent keyring: "
                         + os.strerror(ctypes.get_errno()))


def _capabilities():
    """Whether this process still holds any capability (permitted, effective, ambient,
    or in its bounding set: what an exec could ever give back)."""
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith((b"CapPrm:", b"CapEff:", b"CapAmb:", b"CapBnd:")) \
                    and int(line.split()[1], 16):
                return True
    return False


def drop_bounding_set() -> None:
    """Empty the capability bounding set, while this process may (CAP_SETPCAP, as root
    before the uid switch): no later exec can gain a capability back.  Also run by the
    process level's start (``bubblewrap.preexec``)."""
    with open("/proc/sys/kernel/cap_last_cap", "rb") as f:
        last = int(f.read())
    c = libc()
    for cap in range(last + 1):
        if c.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            import ctypes

            raise SystemExit("attn-grade child: could not drop the capability bounding set: "
                             + os.strerror(ctypes.get_errno()))


def apply_limits(limits: dict[str, int] | None) -> None:
    """Lower this child's own limits (a fork starts its CPU count at zero)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if not limits:
        return
    for which, soft, hard in ((resource.RLIMIT_AS, limits["memory"], limits["memory"]),
                              (resource.RLIMIT_CPU, limits["cpu"], limits["cpu"] + 2),
                              (resource.RLIMIT_FSIZE, limits["fsize"], limits["fsize"]),
                              (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
                              (resource.RLIMIT_CORE, 0, 0)):
        lower_limit(which, soft, hard)


def lower_limit(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the hard limit already in place."""
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


@functools.cache
def libc() -> Any:
    """The C library, through ctypes (imported only by who calls into it), made once."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
    try:
        libc().prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def install_filter(program: bytes) -> None:
    """Install the syscall filter compiled on the trusted side (``run.syscalls``) for this
    process and all it starts; a template that cannot ends before any student code runs."""
    import ctypes

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(program, len(program))
    prctl(PR_SET_NO_NEW_PRIVS, 1)   # as a filter needs, without privileges
    fprog = Program(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    if libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise SystemExit("attn-grade child: could not install the syscall filter: "
                         + os.strerror(ctypes.get_errno()))


def apply_filter(settings: dict[str, Any]) -> None:
    """The settings' filter (base64), if they have one (none at the level 'none', or where
    the trusted side could not build one: its report says so)."""
    if settings.get("seccomp"):
        import base64

        install_filter(base64.b64decode(settings["seccomp"]))
