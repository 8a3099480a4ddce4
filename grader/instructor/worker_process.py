"""A grade-worker process as grade-all sees it (``Worker``): started as a new Python
that imports exactly this grader package (``grader_argv``), or forked from grade-all
itself (``forked_worker``); a job sent as a line of JSON, its answer read back within a
deadline; a worker that died or overran is a failed row.
"""

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import forked_worker

# One grading's (exit code or None on a timeout, its JSON document or None, stderr).
RunOutput = tuple[int | None, Any, str]
# What a worker is given: a GradeJob's plain data, or an ``attn-grade`` command line
# (its arguments, without the program)
Job = Mapping[str, Any] | Sequence[str]

# the folder that holds this grader package (a worktree, a course, site-packages)
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])

# How a child imports the grader: ``-m grader`` would put the current folder
# first on sys.path, and run from a class folder that imports a student's
# folder named grader/ (or numpy/, yaml/) on the trusted side. So the child
# drops the current-folder entry, imports exactly this package, and then
# takes PACKAGE_ROOT off sys.path again (the package's own modules load
# through its __path__).
IMPORT_GRADER = (
    "import sys; sys.path[:] = [p for p in sys.path if p]; "
    f"sys.path.insert(0, {PACKAGE_ROOT!r}); import grader.cli; del sys.path[0]")


def grader_argv(*args: object) -> list[str]:
    """argv that runs ``attn-grade ARGS`` with this very grader package, in Python's
    isolated mode (``-I``: no current folder or script folder on ``sys.path``, no
    ``PYTHON*`` variable), so that no folder a student controls is on its import path;
    this user's own site-packages, which ``-I`` leaves out, come along if this process
    uses them (numpy installed with ``pip install --user``)."""
    import site

    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    keep = f"; sys.path.append({user_site!r})" if user_site in sys.path else ""
    return [sys.executable, "-I", "-c",
            IMPORT_GRADER + keep + "; grader.cli.main(prog_name='attn-grade')",
            *map(str, args)]


STOP_SECONDS = 3.0


class Worker:
    """One ``grade-worker`` process and the pipes to it; ``zygote``: the class's shared
    zygote (run.zygote.Zygote), of which the worker gets a socket of its own.
    ``fork``: the CLI's grade-worker, run in a fork of this process (``forked_worker``)
    instead of a new Python."""

    def __init__(self, cwd: str | Path | None, log: Path, zygote: Any = None,
                 fork: Callable[[], object] | None = None, cpus: set[int] | None = None,
                 scratch: str | Path | None = None):
        """``cpus``: the CPUs it (and what it starts: its students' sandboxes) runs on
        (``pin_cpus``); ``scratch``: the folder its run folders go in ($TMPDIR)."""
        self.log = log
        shared = zygote.adopt() if zygote is not None and zygote.alive() else None
        env = {} if shared is None else {zygote.SHARED: str(shared.fileno())}
        if scratch is not None:
            env["TMPDIR"] = str(scratch)
        self.proc: Any
        try:
            if fork:
                self.proc = forked_worker.start(fork, cwd or ".", log,
                                                shared and shared.fileno(), env)
            else:
                with open(log, "ab") as err:
                    self.proc = subprocess.Popen(
                        grader_argv("grade-worker"), stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, stderr=err, cwd=cwd, env={**os.environ, **env},
                        pass_fds=() if shared is None else (shared.fileno(),))
        finally:
            if shared is not None:
                shared.close()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if cpus:   # before its first command: its sandboxes take its CPUs
            with contextlib.suppress(OSError):
                os.sched_setaffinity(self.proc.pid, cpus)
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self._buffer = b""
        self.ended = False   # its output ended: the worker died (or is dying)

    def grade(self, job: Job, timeout: float) -> RunOutput:
        """Grade one job; a dead or overrunning worker is a failed row."""
        self.send(job)
        return self.receive(timeout)

    def send(self, job: Job) -> None:
        """Give it a job (``receive`` its result); a worker it cannot reach has
        ``ended``."""
        line = json.dumps(dict(job) if isinstance(job, Mapping) else list(job))
        try:
            self.stdin.write(line.encode() + b"\n")
            self.stdin.flush()
        except (OSError, ValueError):   # ValueError: the pool closed its pipes (Ctrl-C)
            self.ended = True

    def receive(self, timeout: float) -> RunOutput:
        """The result of the job sent; a dead or overrunning worker is a
        failed row."""
        try:
            line = None if self.ended else self._read_line(time.monotonic() + timeout)
        except (OSError, ValueError):
            line, self.ended = None, True
        if line is None:
            # its pipes close a moment before a killed process can be waited for: its
            # output's end says it died, whatever poll() says yet
            dead = self.ended or self.proc.poll() is not None
            why = ("the grading worker died:\n" + self._log_tail() if dead
                   else f"grading took longer than {timeout:g} s")
            self.stop(graceful=False)
            return None, None, why
        answer = json.loads(line)
        return answer["code"], answer["document"], answer["stderr"]

    def _read_line(self, deadline: float) -> bytes | None:
        """The worker's next line; None at the deadline, or at the end of its output
        (``ended``: it died)."""
        fd = self.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.ended = True
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _log_tail(self) -> str:
        try:
            return self.log.read_bytes()[-2000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, graceful: bool = True) -> None:
        """End the worker: on its stdin's end it closes its zygote and folders itself;
        one that does not within a few seconds, or a stuck one (not ``graceful``), is
        killed."""
        try:
            self.stdin.close()
            if graceful:
                self.proc.wait(timeout=STOP_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.stdin, self.stdout):
            try:
                pipe.close()
            except OSError:
                pass
