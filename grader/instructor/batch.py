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

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..run import syscalls
from . import forked_worker
from .worker_process import IMPORT_GRADER, Job, RunOutput, Worker, grader_argv

__all__ = ["IMPORT_GRADER", "Job", "Pool", "RunOutput", "Worker", "grader_argv", "pin_cpus",
           "run_in_workers"]

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
        run = _Run(self, commands, on_done, timeout)
        ends = [threading.Event() for _ in self.workers]
        threads = [threading.Thread(target=run.work, args=(n, ended))
                   for n, ended in enumerate(ends)]
        self._threads = list(zip(threads, ends))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if run.failed:
            raise run.failed[0]
        return [run.results[i] for i in sorted(run.results)]

    def _send(self, n: int, job: Job) -> "Worker | None":
        """Send ``job`` to worker ``n``, started again if it died; None once closed."""
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
            worker.send(job)
            return worker

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


class _Run:
    """One ``Pool.run``: a thread per worker (``work``), each taking the next job as its
    worker is free; the jobs are advanced under one lock, one ahead of the workers."""

    def __init__(self, pool: Pool, commands: Iterable[Job],
                 on_done: Callable[[int, RunOutput], object] | None, timeout: float):
        self.pool, self.on_done, self.timeout = pool, on_done, timeout
        self.source = enumerate(commands)
        self.ahead: list[tuple[int, Job]] = []   # prepared, not yet taken
        self.results: dict[int, RunOutput] = {}
        self.failed: list[BaseException] = []
        self.lock = threading.Lock()

    def work(self, n: int, ended: threading.Event) -> None:
        try:
            self.serve(n)
        except BaseException as exc:   # a worker that could not be replaced (or a
            with self.lock:            # row not written): raised again by run()
                self.failed.append(exc)
        finally:
            ended.set()

    def advance(self) -> tuple[int, Job] | None:
        """The next command (under ``lock``), or None: none left, a failure, Ctrl-C."""
        if self.pool.closed or self.failed:
            return None
        if self.ahead:
            return self.ahead.pop()
        try:
            i, job = next(self.source, (None, None))
        except BaseException as exc:   # raised again by run(), not lost here
            self.failed.append(exc)
            return None
        return None if i is None or job is None else (i, job)

    def start_next(self, n: int) -> tuple[int, Worker] | None:
        """(index, worker) of the next command, sent to worker ``n``; None when
        there is none.  The command after it is prepared meanwhile."""
        with self.lock:
            job = self.advance()
            if job is None:
                return None
            worker = self.pool._send(n, job[1])
            if worker is None:
                return None
            following = self.advance()
            if following is not None:
                self.ahead.append(following)
        return job[0], worker

    def serve(self, n: int) -> None:
        job = self.start_next(n)
        while job is not None:
            i, worker = job
            result = worker.receive(self.timeout)
            try:
                job = self.start_next(n)
            finally:   # its row, even when the next student could not be started
                with self.lock:
                    if not self.pool.closed:   # interrupted: no row, graded on resume
                        self.results[i] = result
                        if self.on_done:
                            self.on_done(i, result)
            if self.pool.closed:
                return


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
    from ..run import zygote

    if workers > 1 and zygote.Zygote.possible():
        return zygote.Zygote()   # the one grader.entry started early, if it did
    zygote.drop_early()
    return None
