"""A class graded by a few worker processes, each student in a sandbox of their own.

A worker is ``attn-grade grade-worker``: it reads one job at a time, a student's
``grade_job.GradeJob`` (or, for tests and benchmarks, an ``attn-grade`` command
line), grades it in-process and answers with its exit code, JSON document and
error text.  So a worker loads the course,
imports pytest and sympy and computes the reference answers once, for all
the students it grades; each student still gets a run folder, a uid and a
sandbox of their own (grade_set), so students never share a process or a
writable folder.  A worker that dies or overruns costs the student it was
grading, and is replaced for the rest.  grade-all's first workers are forks of
grade-all itself (``forked_worker``); a replacement is a new Python.
"""

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..run import syscalls
from . import forked_worker

# the folder that holds this grader package (a worktree, a course, site-packages)
# One grading's (exit code or None on a timeout, its JSON document or None, stderr).
RunOutput = tuple[int | None, Any, str]
# What a worker is given: a GradeJob's plain data, or an ``attn-grade`` command line
# (its arguments, without the program)
Job = Mapping[str, Any] | Sequence[str]

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
    zygote (run.template.Zygote), of which the worker gets a socket of its own.
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


def pin_cpus(jobs: int) -> list[set[int]] | None:
    """The CPUs each of a class's workers runs on (worker n: the n-th set), or None: one
    worker, more workers than CPUs (two sharing a CPU would each get half of it while
    another CPU could sit idle), one CPU, or no way to keep a sandbox's children on its
    CPUs (no syscall filter to refuse them ``sched_setaffinity``: ``run.syscalls``).
    The CPUs the class may use are dealt out like cards: two workers on two CPUs get
    one each, on four CPUs two each.  A worker, its sandboxes' templates and their
    children then wake each other on the same CPUs, and find their caches warm: on this
    project's 2-core virtual machine, where a wake-up on another CPU is an interrupt
    between virtual CPUs, a class took 7–9 % less time.  Students still go to whichever
    worker is free, so a worker whose CPU is busy with something else grades fewer."""
    if jobs < 2 or not hasattr(os, "sched_getaffinity") or \
            syscalls.program() is None:   # no child could be kept there
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if jobs > len(cpus):
        return None
    return [set(cpus[n::jobs]) for n in range(jobs)]


class Pool:
    """Up to ``jobs`` workers (and, as root with bubblewrap, their shared zygote),
    ``start`` of them at once and the others as ``add`` asks: their start-up (the
    zygote's numpy and sympy) runs on the other core while the caller prepares the
    class.  The first workers are forks of this process, which imports what they need
    once (``forked_worker``); a replacement, started from a thread, is a new Python.
    ``serve``: the CLI's grade-worker, which a fork runs (without it every worker is a
    new Python).  Close it."""

    def __init__(self, jobs: int, cwd: str | Path | None = None,
                 serve: Callable[[], object] | None = None, start: int | None = None,
                 scratch: str | Path | None = None):
        self.cwd, self.jobs, self.serve = cwd, max(1, jobs), serve
        self.scratch = scratch   # where the workers' run folders go (Worker)
        self.zygote = _shared_zygote(self.jobs)
        self.cpus = pin_cpus(self.jobs)
        self.workers: list[Worker | None] = []
        self._preloaded = self._closed = False
        self._starting = threading.Lock()   # close() vs a thread replacing a worker
        # run's threads, each with the event it sets on its end (not Thread.join: on
        # Python 3.11 a join interrupted by Ctrl-C marks the thread ended, and a later
        # join returns at once while it still runs)
        self._threads: list[tuple[threading.Thread, threading.Event]] = []
        try:
            for _ in range(self.jobs if start is None else min(start, self.jobs)):
                self.add()
        except BaseException:
            self.close(graceful=False)
            raise

    def add(self) -> None:
        """Start one more worker, unless ``jobs`` run already."""
        if len(self.workers) >= self.jobs:
            return
        fork = self.serve if self.serve is not None and forked_worker.possible() else None
        if fork and not self._preloaded:
            forked_worker.preload()
            self._preloaded = True
        n = len(self.workers)
        self.workers.append(Worker(self.cwd, self._log(n), self.zygote, fork, self._cpus(n),
                                   self.scratch))

    def _cpus(self, n: int) -> set[int] | None:
        return self.cpus[n % len(self.cpus)] if self.cpus else None

    def _log(self, n: int) -> Path:
        return Path(self.cwd or ".") / f"worker-{n}.log"

    def run(self, commands: Iterable[Job],
            on_done: Callable[[int, RunOutput], object] | None = None,
            timeout: float = 3600) -> list[RunOutput]:
        """Run jobs (GradeJobs' plain data, or command lines) in the workers.

        Results in order, each (exit code, parsed JSON document or None, stderr);
        ``on_done(i, result)`` as each finishes.  A worker that died is replaced.
        ``commands`` may be a generator: the caller prepares the rest of a class while
        the first students are graded.  It is advanced under the lock ``on_done`` runs
        under, one command ahead of the free workers: a worker that finishes gets its
        next command at once, before its result is written (``on_done``) and the
        command after is prepared.  An exception it raises ends the run and is raised
        here.
        """
        source = enumerate(commands)
        ahead: list[tuple[int, Job]] = []   # prepared, not yet taken
        results: dict[int, RunOutput] = {}
        failed: list[BaseException] = []
        lock = threading.Lock()

        def work(n, ended):
            try:
                serve(n)
            except BaseException as exc:   # a worker that could not be replaced (or a
                with lock:                 # row not written): raised again by run()
                    failed.append(exc)
            finally:
                ended.set()

        def advance():
            """The next command (under ``lock``), or None: none left, a failure, Ctrl-C."""
            if self._closed or failed:
                return None
            if ahead:
                return ahead.pop()
            try:
                i, argv = next(source, (None, None))
            except BaseException as exc:   # raised again by run(), not lost here
                failed.append(exc)
                return None
            return None if i is None else (i, argv)

        def start_next(n):
            """(index, worker) of the next command, sent to worker ``n``; None when
            there is none.  The command after it is prepared meanwhile."""
            with lock:
                job = advance()
                if job is None:
                    return None
                with self._starting:   # closed while the command was prepared: the
                    if self._closed:   # workers are gone, none is started again
                        return None
                    worker = self.workers[n]
                    if worker is None or not worker.alive():   # one adoption at a time
                        if worker is not None:                  # on the zygote's socket
                            worker.stop(graceful=False)
                        worker = self.workers[n] = Worker(
                            self.cwd, self._log(n), self.zygote, cpus=self._cpus(n),
                            scratch=self.scratch)
                    worker.send(job[1])
                following = advance()
                if following is not None:
                    ahead.append(following)
            return job[0], worker

        def serve(n):
            job = start_next(n)
            while job is not None:
                i, worker = job
                result = worker.receive(timeout)
                try:
                    job = start_next(n)
                finally:   # its row, even when the next student could not be started
                    with lock:
                        if not self._closed:   # interrupted: no row, graded on resume
                            results[i] = result
                            if on_done:
                                on_done(i, result)
                if self._closed:
                    return

        ends = [threading.Event() for _ in self.workers]
        threads = [threading.Thread(target=work, args=(n, ended)) for n, ended in enumerate(ends)]
        self._threads = list(zip(threads, ends))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failed:
            raise failed[0]
        return [results[i] for i in sorted(results)]

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called: a generator given to ``run`` may stop early."""
        return self._closed

    def close(self, graceful: bool = True) -> None:
        """Stop the workers (each closes its own folders), then the zygote; a thread
        of ``run`` still grading takes nothing more and replaces no worker.  Returns
        once those threads have ended (Ctrl-C while one prepares the next command: the
        caller then removes the folder it prepares into)."""
        with self._starting:
            self._closed = True
        try:
            for worker in self.workers:
                if worker is not None:
                    worker.stop(graceful)
            for thread, ended in self._threads:
                if thread is not threading.current_thread() and thread.ident is not None:
                    ended.wait()
        finally:
            self.workers = []
            if self.zygote is not None:
                self.zygote.close()
                self.zygote = None

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_in_workers(commands: Sequence[Job], jobs: int,
                   on_done: Callable[[int, RunOutput], object] | None = None,
                   timeout: float = 3600, cwd: str | Path | None = None) -> list[RunOutput]:
    """``Pool(...).run(...)`` with no more workers than commands.  Give a ``cwd``
    the caller trusts."""
    if not commands:
        return []
    with Pool(min(jobs, len(commands)), cwd) as pool:
        return pool.run(commands, on_done, timeout)


def _shared_zygote(workers: int) -> Any:
    """One zygote for all the workers (as root with bubblewrap, for more than one):
    its start (numpy and sympy) is paid once, not once per worker."""
    from ..run import zygote_process
    from ..run.template import Zygote

    if workers > 1 and Zygote.possible():
        return Zygote()   # the one grader.entry started early, if it did
    zygote_process.drop_early()
    return None
