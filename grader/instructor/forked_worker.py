"""A grade-worker forked from grade-all itself, not started as a new Python.

A fresh worker pays a Python start and the grader's imports (numpy, pytest, click:
about a quarter of a second of CPU); a fork of grade-all, which has imported them
once, pays neither.  Only a process with no other thread may fork (a lock held by
another thread would stay held in the child), so grade-all forks its first workers
before any thread starts and starts replacements as new Pythons (``batch.Worker``).

The fork keeps nothing of grade-all's but what a new worker would have: its
descriptors are closed (the pipes of the other workers, the zygote's control
socket), the current folder leaves ``sys.path`` (a class folder holding a student's
``sympy/`` must not be imported on the trusted side: ``batch.IMPORT_GRADER``), and
the objects it inherits are never collected, so that no inherited file object
closes a descriptor number the worker has since reused.
"""

import contextlib
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..run import processes


def possible() -> bool:
    """Whether this process may fork a worker now (no other thread runs)."""
    return hasattr(os, "fork") and threading.active_count() == 1


def preload() -> None:
    """What every worker imports, imported once here before the forks share it; and
    all of it left to the collector no more: a collection writes into every object it
    scans, which would copy each shared page into this process (grade-all, which
    ends with the class).  Imported without the current folder on ``sys.path``, as a
    fork would: grade-all run from a class folder must not import a student's
    ``_pytest/`` or ``pdb/`` for its workers to inherit."""
    with current_folder_off_path():
        from .. import grading  # noqa: F401
        from ..judge import hidden

        hidden.preload()
    gc.freeze()


def trusted_path(path: list[str], cwd: str) -> list[str]:
    """``sys.path`` without the current folder, however Python put it there
    (``''`` for ``-c``, the folder itself for ``-m``)."""
    here = os.path.realpath(cwd)
    return [p for p in path if p and os.path.realpath(p) != here]


@contextlib.contextmanager
def current_folder_off_path() -> Iterator[None]:
    """Import nothing from the current folder meanwhile (grade-all run as ``python -m``
    from a class folder: a student's ``sympy/`` there is not the library)."""
    saved = sys.path[:]
    sys.path[:] = trusted_path(sys.path, os.getcwd())
    try:
        yield
    finally:
        sys.path[:] = saved


class ForkedProcess:
    """The parent's handle on a forked worker: what ``batch.Worker`` uses of a Popen."""

    def __init__(self, pid: int, stdin_fd: int, stdout_fd: int):
        self.pid = pid
        self.stdin = os.fdopen(stdin_fd, "wb")
        self.stdout = os.fdopen(stdout_fd, "rb")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("grade-worker", timeout or 0)
            time.sleep(0.005)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            processes.kill(self.pid)


def start(serve: Callable[[], object], cwd: str | Path, log: Path, keep_fd: int | None = None,
          env: dict[str, str] | None = None) -> ForkedProcess:
    """Fork a worker that runs ``serve`` (the CLI's ``grade-worker``) on its stdin, its
    stderr appended to ``log``, in ``cwd``; ``keep_fd`` stays open in it (its zygote's
    socket), ``env`` is added to its environment."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    for stream in (sys.stdout, sys.stderr):   # nothing buffered is written twice
        stream.flush()

    def work():   # pragma: no cover - runs in the fork; its traceback goes to the log
        _become_worker(cwd, log, stdin_r, stdout_w, keep_fd, env or {})
        serve()

    pid = processes.fork_call(work, stdio=True)
    os.close(stdin_r)
    os.close(stdout_w)
    return ForkedProcess(pid, stdin_w, stdout_r)


def _become_worker(cwd, log, stdin_r, stdout_w, keep_fd, env):
    gc.freeze()   # what was grade-all's is never collected (see the module's docstring)
    os.dup2(stdin_r, 0)
    os.dup2(stdout_w, 1)
    err = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.dup2(err, 2)
    kept = sorted({0, 1, 2} | ({keep_fd} if keep_fd is not None else set()))
    for low, high in zip(kept, [*kept[1:], os.sysconf("SC_OPEN_MAX")]):
        os.closerange(low + 1, high)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    sys.path[:] = trusted_path(sys.path, os.getcwd())
    os.chdir(cwd)
    os.environ.update(env)
    # $TMPDIR (where run folders go) as ``env`` has it, not as grade-all found it
    tempfile.tempdir = None
    from ..run import sandbox

    sandbox.scratch_folder.cache_clear()
