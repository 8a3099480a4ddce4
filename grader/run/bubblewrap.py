"""How a sandboxed process is started: bubblewrap's arguments (the run's namespaces
and binds), the Python command inside, and what runs before exec (resource limits,
the uid switch) at the process level.  ``sandbox`` decides which of these a run gets.
"""

import contextlib
import functools
import json
import math
import os
import resource
import select
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..course.limits import Limits
from . import processes, sandbox
from .inside import confine
from .sandbox import Plan

# the sandbox's side (the package ``inside``), copied whole beside each run (and each
# zygote) into a folder of this name, which marks its processes' command lines; the
# wire module beside it under the name the package imports it by
CHILD = "_attn_grade_child"
WIRE_COPY = "_attn_grade_wire.py"
INSIDE = Path(__file__).with_name("inside")
WIRE = Path(__file__).parents[1] / "wire.py"


@functools.cache
def _inside_files() -> tuple[Path, ...]:
    return tuple(sorted(INSIDE.glob("*.py")))


def copy_runtime(folder: Path) -> list[Path]:
    """The sandbox's side into ``folder``: the package's files (no bytecode: the
    sandbox compiles them, as it compiled the one script before) and the wire module;
    what it made, folders first."""
    package = folder / CHILD
    package.mkdir()
    made = [package]
    for source in _inside_files():
        shutil.copyfile(source, package / source.name)
        made.append(package / source.name)
    shutil.copyfile(WIRE, folder / WIRE_COPY)
    return [*made, folder / WIRE_COPY]


def command(run_plan: Plan, script: str, workdir: str, submission: str | Path,
            runtime_dir: str | Path, limits: Limits,
            public: Sequence[str | Path] = ()) -> list[str]:
    """argv that runs the child ``script`` as ``run_plan`` says.

    ``public``: folders the child may read besides its submission (the set's
    exercises/ folder: stubs, visible checks and data files, nothing secret).
    """
    # -S: no site module (its .pth files cost tens of ms); the child adds the library
    # folders it needs itself (inside.calls.import_wire)
    python = [sandbox.interpreter(), "-I", "-S", "-X", "utf8", script]
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


def encoded_filter(program: bytes | None) -> str | None:
    """A compiled syscall filter as the template's settings carry it (JSON: base64)."""
    import base64

    return None if program is None else base64.b64encode(program).decode("ascii")


def holder_pid(info_fd: int, ready_fd: int, seconds: float) -> int | None:
    """The sandbox's pid 1 once the holder runs inside the finished sandbox; None if
    the holder does not say so within ``seconds`` (see bubblewrap.holder_command)."""
    deadline = time.monotonic() + seconds
    ready = b""
    while b"\n" not in ready:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([ready_fd], [], [], remaining)[0]:
            return None
        chunk = os.read(ready_fd, 64)
        if not chunk:
            return None
        ready += chunk
    if ready != b"ready\n":
        return None
    try:   # written before the sandbox was built, and so long since complete
        pid = json.loads(os.read(info_fd, 4096))["child-pid"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if type(pid) is int and pid > 1 else None


def _bubblewrap(workdir, submission, runtime_dir, limits, public, chdir, setuid=True,
                extra=()):
    """bubblewrap's argv up to and with ``--``: the run's namespaces and binds."""
    binds = []
    for path in sandbox.SYSTEM_DIRS:
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
            if not any(folder == s or folder.startswith(s + os.sep) for s in sandbox.SYSTEM_DIRS):
                binds += ["--perms", "0755", "--dir", folder]
    for path in roots:
        binds += ["--ro-bind", path, path]
    return [sandbox.bwrap_path() or "bwrap", *sandbox.namespace_flags(setuid), *extra,
            "--perms", "1777", "--size", str(limits.tmp), "--tmpfs", "/tmp",
            "--proc", "/proc", "--dev", "/dev", *binds, "--bind", workdir, workdir,
            "--chdir", chdir, "--"]


def _readonly_roots(submission, runtime_dir, *public):
    python_home = os.path.dirname(os.path.dirname(os.path.abspath(sandbox.interpreter())))
    venv = [python_home] if os.path.exists(os.path.join(python_home, "pyvenv.cfg")) else []
    roots = [sys.base_prefix, sys.prefix, os.path.dirname(sandbox.interpreter()), *venv,
             *sandbox.library_paths(), submission, runtime_dir, *public]
    seen: list[str] = []
    for path in map(os.path.realpath, roots):
        covered = any(path == s or path.startswith(s + os.sep)
                      for s in [*sandbox.SYSTEM_DIRS, *seen])
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
            processes.set_limit(which, soft, hard)
        if identity is not None:
            processes.set_limit(resource.RLIMIT_NPROC, limits.processes)
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
