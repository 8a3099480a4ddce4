"""Start, kill and wait for one sandboxed child process; say why it died.

``sandbox`` decides how a child is isolated, ``bubblewrap`` makes its command;
this module runs it in a session of its own, kills its whole process group,
and turns its exit status into a ``Crash`` from the exit status, the signal
and the limits alone (never from what the child printed).  Its ``reaper``
(``processes.Reaper``) holds the pids of a run's live children, so strays
re-parented to the grader (a student's double fork) can be told apart and killed.
"""

import signal
import subprocess
from collections.abc import Callable, Collection
from pathlib import Path
from typing import IO, Any

from ..course.limits import Limits
from . import processes
from .inside import EXIT_OUT_OF_MEMORY
from .outcome import Crash
from .processes import Reaper

BWRAP_SIGNAL_BASE = 128   # bwrap reports its child's signal N as exit 128 + N


class Child:
    """One running child process: a session (process group) of its own."""

    def __init__(self, popen, level, limits, reaper):
        self.popen, self.level, self.limits, self.reaper = popen, level, limits, reaper
        reaper.started(popen.pid)

    @classmethod
    def start(cls, argv: list[str], workdir: str | Path, console: IO[Any], env: dict[str, str],
              preexec: Callable[[], None] | None, pass_fds: Collection[int], level: str,
              limits: Limits, reaper: Reaper) -> "Child":
        """Start ``argv`` in ``workdir``; stdout and stderr go to the file ``console``.

        BlockingIOError when the run's uid may start no more processes.
        """
        popen = subprocess.Popen(
            argv, cwd=workdir, stdin=subprocess.PIPE, stdout=console,
            stderr=subprocess.STDOUT, pass_fds=pass_fds, env=env, start_new_session=True,
            preexec_fn=preexec)
        return cls(popen, level, limits, reaper)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def stdin(self) -> IO[bytes] | None:
        return self.popen.stdin

    def exited(self) -> bool:
        return self.popen.poll() is not None

    def kill(self) -> None:
        """Kill the child and its process group; reap it and any stray."""
        processes.kill(self.popen.pid, group=True)
        self.popen.kill()
        self.popen.wait()
        self.reaper.ended(self.popen.pid)

    def crash(self) -> Crash:
        """Why the child died (it has exited or is exiting): waits for it."""
        return diagnose(self.popen.wait(), self.level, self.limits)


def diagnose(code: int, level: str, limits: Limits) -> Crash:
    """The Crash of a child that ended with return code ``code`` (Popen's: -N for signal N)."""
    if level == "bubblewrap" and BWRAP_SIGNAL_BASE < code < BWRAP_SIGNAL_BASE + 65:
        code = BWRAP_SIGNAL_BASE - code
    if code < 0:
        sig = signal.Signals(-code)
        if sig == signal.SIGXCPU:
            return Crash.over_limit("cpu", limits.cpu)
        return Crash.by_signal(sig.name)
    if code == EXIT_OUT_OF_MEMORY:   # inside: a MemoryError outside any call
        return Crash.over_limit("memory", limits.memory)
    return Crash.exited(code)
