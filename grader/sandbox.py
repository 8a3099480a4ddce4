"""How the student process is started: the one place isolation is decided.

Levels, weakest to strongest:
  none        a plain child process in its own session (killable as a group)
  process     plus resource limits, and an unprivileged user when run as root
              and the interpreter is reachable by one
  bubblewrap  plus a private file system view (Python read-only, submission
              read-only, a writable work folder, nothing else), no network,
              its own PID namespace
"""

import functools
import math
import os
import resource
import shutil
import signal
import sys
import sysconfig

LEVELS = ("none", "process", "bubblewrap")
NOBODY = 65534
CHILD_ENV_PASSTHROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/alternatives")
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def strongest_available():
    """The default level: bubblewrap where it works, else process limits."""
    return "bubblewrap" if bubblewrap_works() else "process"


@functools.cache
def bubblewrap_works():
    """bwrap is installed and may create namespaces here (checked once)."""
    import subprocess

    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    try:
        probe = subprocess.run(
            [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", "true"],
            capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _namespace_flags():
    return ["--unshare-all", "--die-with-parent", "--new-session",
            "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--cap-drop", "ALL"]


@functools.cache
def library_paths():
    """Folders the child needs on sys.path for numpy and sympy (found, not imported)."""
    import importlib.util

    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    for name in ("numpy", "sympy", "mpmath"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            paths.add(os.path.dirname(os.path.dirname(os.path.abspath(spec.origin))))
    return [p for p in sorted(paths) if os.path.isdir(p)]


def child_env(workdir):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir,
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    env.update({k: "1" for k in ONE_THREAD})
    env.update({k: os.environ[k] for k in CHILD_ENV_PASSTHROUGH if k in os.environ})
    return env


def interpreter():
    return os.path.realpath(sys.executable)


def command(level, script, workdir, submission, runtime_dir, public=()):
    """argv that runs the child ``script`` at the given isolation level.

    ``public``: folders the child may read besides its submission (the set's
    exercises/ folder: stubs, visible checks and data files, nothing secret).
    """
    python = [interpreter(), "-I", "-X", "utf8", script]
    if level != "bubblewrap":
        return python
    binds = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            binds += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            binds += ["--ro-bind", path, path]
    for path in _readonly_roots(submission, runtime_dir, *public):
        binds += ["--ro-bind", path, path]
    return ["bwrap", *_namespace_flags(), "--tmpfs", "/tmp", "--proc", "/proc",
            "--dev", "/dev", *binds, "--bind", workdir, workdir,
            "--chdir", workdir, "--", *python]


def _readonly_roots(submission, runtime_dir, *public):
    roots = [sys.base_prefix, sys.prefix, *library_paths(), submission, runtime_dir, *public]
    seen = []
    for path in map(os.path.realpath, roots):
        covered = any(path == s or path.startswith(s + os.sep) for s in [*SYSTEM_DIRS, *seen])
        if os.path.exists(path) and not covered:
            seen.append(path)
    return seen


def unprivileged_user_can_reach(*extra):
    """Whether 'nobody' can reach the interpreter, its libraries and ``extra``."""
    for path in [interpreter(), *library_paths(), *extra]:
        parts = os.path.realpath(path).split(os.sep)
        for i in range(2, len(parts) + 1):
            mode = os.stat(os.sep.join(parts[:i]) or "/").st_mode
            if not mode & 0o001:
                return False
    return True


def drop_privileges(level, submission):
    """Whether the child should switch to 'nobody' (root, level process)."""
    return (level == "process" and os.geteuid() == 0
            and unprivileged_user_can_reach(submission))


def describe(level, submission):
    """The isolation string the report states."""
    if level == "process" and os.geteuid() == 0 and not drop_privileges(level, submission):
        return "process (as root: Python or the submission not reachable by 'nobody')"
    return level


def preexec(level, limits, drop):
    """A function run in the child before exec: resource limits, user switch."""

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if level == "none":
            return
        _set_limit(resource.RLIMIT_AS, limits.memory)
        cpu = max(1, math.ceil(limits.cpu))
        _set_limit(resource.RLIMIT_CPU, cpu, cpu + 2)   # SIGXCPU first, SIGKILL later
        _set_limit(resource.RLIMIT_FSIZE, limits.answer + 4 * limits.output + (1 << 20))
        _set_limit(resource.RLIMIT_CORE, 0)
        if drop:
            _set_limit(resource.RLIMIT_NPROC, limits.processes)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)

    return apply


def _set_limit(which, soft, hard=None):
    _, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


# ------------------------------------------------------------ stray processes

PR_SET_CHILD_SUBREAPER = 36
_subreaper = False


def become_subreaper():
    """Make orphans of student processes re-parent to the grader (Linux).

    A student may fork and setsid() to leave the child's process group; as a
    subreaper the grader still finds such processes and kills them.  bubblewrap
    does not need this: its PID namespace dies with it.
    """
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False


def reap_strays(keep):
    """Kill and reap processes re-parented to the grader that it did not start."""
    if not _subreaper:
        return
    me = os.getpid()
    for _ in range(20):
        strays = [pid for pid in _children_of(me) if pid not in keep]
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


def _children_of(parent):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(parent):
            found.append(int(entry))
    return found
