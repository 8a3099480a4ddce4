"""One student module running in a child process, called through files.

``RunFolder`` (``run_folder``) is one grading run's private folder, its sandboxed
template and its live processes; ``StudentProcess`` calls into one submission module:
it has the template fork its child lazily (or ahead, ``prestart``), forks
again after a hang or crash, and turns each call into a ``CallOutcome``.
The pieces under it:

  run_folder  the run's folder, its templates, its children's work folders
  staging     the copies of the student's folders the children see
  outcome   Status, Crash, CallOutcome; validation of an answer file
  channel   the request files in the child's folder, its answer pipe, the
            folder's disk cap
  template  the run's one sandbox: a warm process that forks the children
  child     start/kill/wait the template's process; why a process died

A hang, crash or limit kills the whole process group; the next call starts a
fresh child, so one bad call costs only its own check.  The child's exit code
and console output are never results.
"""

import dataclasses
import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import wire
from ..course.limits import Limits
from . import bubblewrap
from .channel import Channel, Waited
from .outcome import FOLDER_TAMPERED, REQUESTS_UNREAD, CallOutcome, Crash, Status
from .run_folder import RunFolder, open_run_folder
from .template import ForkedChild, Template, TemplateGone

__all__ = ["CallOutcome", "Crash", "RunFolder", "Status", "StudentProcess",
           "open_run_folder"]

MAX_RESTARTS = 3
# requests written ahead of the child's answers, in bytes: request files count
# against the child's disk cap, so the window stays a small share of any cap
PIPELINE_BYTES = 256 * 1024
# and in requests: each id written ahead waits in the child's stdin pipe, which the
# child may shrink to one page (F_SETPIPE_SZ) before it hangs in a call.  256 ids of up
# to 8 bytes fit in 4 KiB; a line that does not fit (the last one was left unread)
# breaks the stream (Channel.send): the grader's write never blocks.
PIPELINE_REQUESTS = 256


@dataclasses.dataclass(frozen=True)
class Request:
    """One call as it is sent: its JSON and the fingerprint of its inputs, made once
    (a class sends the same calls to every student)."""

    data: bytes
    digest: str


def request(function: str, args: Sequence[Any] = (),
            kwargs: dict[str, Any] | None = None) -> Request:
    return wire_request(function, wire.encode(list(args)), wire.encode(dict(kwargs or {})))


def wire_request(function: str, args: Any, kwargs: Any) -> Request:
    """A Request of arguments already in wire form (a list, a dict): a hidden test's,
    as its fork sent them, need not be decoded to be encoded again."""
    digest = wire.digest(args, kwargs)   # the child returns it when they stay as sent
    encoded = {"op": "call", "function": function, "args": args, "kwargs": kwargs,
               "digest": digest}
    return Request(json.dumps(encoded, allow_nan=False).encode(), digest)


def _judged_inputs(outcome, sent):
    """Whether the call changed its inputs, judged here from what was sent (not by
    the child's own verdict)."""
    mutated = outcome.inputs_digest != sent.digest
    if not outcome.ok or mutated == outcome.mutated_args:   # a copy only to change it
        return outcome
    return dataclasses.replace(outcome, mutated_args=mutated)



class StudentProcess:
    """Calls into one submission module, restarting its child when needed."""

    def __init__(self, folder, submission, module, limits: Limits, level=None, public=(),
                 preload=()):
        self.folder, self.module, self.limits = folder, module, limits
        self.plan = folder.plan
        self.level = level or self.plan.level
        if self.level != self.plan.level:
            raise ValueError(f"level {self.level!r} differs from the run's {self.plan.level!r}")
        self.public = tuple(str(p) for p in public)
        self.preload = tuple(preload)
        self.submission = os.path.realpath(submission)
        self.child: ForkedChild | None = None   # while a child runs
        self.channel: Channel | None = None
        self.template: Template | None = None
        self.workdir: Path | None = None
        self.restarts = 0
        self.load_failure = None
        self._next_id = 0
        self._loading = ""   # the id of the running child's import
        self._pending_load: CallOutcome | str | None = None
        if not (Path(self.submission) / f"{module}.py").is_file():
            self.load_failure = CallOutcome(Status.MISSING_FILE, detail=f"{module}.py")

    @property
    def proc(self) -> subprocess.Popen | None:
        """While a child runs, the Popen of the sandboxed template it was forked from."""
        if self.child is None or self.template is None:
            return None
        return self.template.process.popen

    # ------------------------------------------------------------ lifecycle
    def _start(self):
        submission, *_ = self.folder.stage(self.submission, *self.public)
        try:
            return self._fork(submission)
        except TemplateGone:   # killed by an earlier child: not this one's failure
            return self._fork(submission)

    def _fork(self, submission):
        self.template = self.folder.template(self.limits, self.preload)
        self.workdir = self.folder.new_workdir()
        disk_cap = None if self.level == "none" else \
            self.limits.tmp + bubblewrap.file_size_cap(self.limits)
        # without a uid of its own the child may write in work/ beside its folder: count it
        channel = Channel(self.workdir, self.folder.identity, disk_cap,
                          self.folder.work if self.folder.identity is None else None)
        stdin_r, stdin_w = os.pipe()
        self._next_id += 1   # the id of its import's answer: it imports as it starts
        self._loading = f"{self._next_id:06d}"
        try:
            job = {"submission": submission, "module": self.module, "load": self._loading,
                   "output_limit": self.limits.output, "answer_limit": self.limits.answer}
            console = os.open(self.workdir / "console.log",
                              os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                self.child = self.template.fork(self.workdir, self.limits, self.preload,
                                                stdin_r, channel.answers_w, console, job)
                self.folder.remove_retired()   # the fork confirmed their children's deaths
            finally:
                os.close(console)
                os.close(stdin_r)
        except BaseException:
            os.close(stdin_w)
            channel.close()
            self.folder.remove_workdir(self.workdir)
            raise
        self.child.stdin = os.fdopen(stdin_w, "wb")
        channel.attach(self.child.stdin)
        self.channel = channel

    def close(self, wait: bool = False) -> None:
        """Kill the child and everything it started; delete its work folder.

        ``wait``: now, once the kill is confirmed (a child that failed: what it
        wrote goes at once); otherwise by the next fork, which confirms it.
        """
        if self.child is None:
            return
        child, self.child = self.child, None
        child.kill(wait)
        if self.channel is not None:
            self.channel.close()
        self.channel = None
        if self.workdir is not None:
            self.folder.retire_workdir(self.workdir, child)
            if wait:
                self.folder.remove_retired()

    # ------------------------------------------------------------ calls
    def call(self, function: str, args: Sequence[Any] = (),
             kwargs: dict[str, Any] | None = None) -> CallOutcome:
        """Run ``module.function(*args, **kwargs)`` in the child."""
        return self.call_many([(function, args, kwargs)])[0]

    def call_many(self, calls: Sequence[tuple[str, Sequence[Any], dict[str, Any] | None]
                                        | Request]) -> list[CallOutcome]:
        """Each (function, args, kwargs) in turn, as ``call`` would, with the requests
        written ahead (up to PIPELINE_BYTES and PIPELINE_REQUESTS): the child starts the
        next call as soon as it answers one.  Each call has its own time limit, from its
        predecessor's answer; after a call that kills or hangs the child, the rest go to a
        fresh one.  A call may come as a ``Request`` made before."""
        requests = [c if isinstance(c, Request) else request(*c) for c in calls]
        outcomes: list[CallOutcome] = []
        while len(outcomes) < len(requests):
            ready = self._ensure_loaded()
            if ready is not None:
                return outcomes + [ready] * (len(requests) - len(outcomes))
            for rid, sent in self._send_ahead(requests[len(outcomes):]):
                outcome = rid if isinstance(rid, CallOutcome) else \
                    self._await(rid, time.monotonic() + self.limits.time)
                outcomes.append(_judged_inputs(outcome, sent))
                if outcome.status in (Status.TIMEOUT, Status.CRASHED, Status.BAD_ANSWER) \
                        or (self.channel is not None and self.channel.broken):
                    self.close(wait=True)
                    break
        return outcomes

    def _send_ahead(self, requests):
        """(id or CallOutcome, request) for the first requests that fit the window, all
        in one file; a send that fails ends it (the child is gone: its outcome says so)."""
        window, size = [], 0
        for one in requests:
            size += len(one.data)
            if window and (size > PIPELINE_BYTES or len(window) >= PIPELINE_REQUESTS):
                break
            window.append(one)
        if len(window) == 1:
            return [(self._send(window[0].data), window[0])]
        rids = self._send(b"[" + b",".join(one.data for one in window) + b"]", len(window))
        if isinstance(rids, CallOutcome):
            return [(rids, window[0])]
        return list(zip(rids, window))

    def prestart(self) -> None:
        """Start the child and its import now, to overlap with other work."""
        if self.load_failure is None and self.child is None:
            try:
                self._start()
            except BlockingIOError:   # RLIMIT_NPROC: the run's uid has too many processes
                self._pending_load = CallOutcome.crashed(
                    Crash.over_limit("processes", self.limits.processes))
                return
            except TemplateGone:      # killed by the student: the next start makes a new one
                self._pending_load = CallOutcome.crashed(Crash.by_signal("SIGKILL"))
                return
            self._pending_load = self._loading

    def _ensure_loaded(self):
        if self.load_failure is not None:
            return self.load_failure
        if self.child is not None and self._pending_load is None:
            return None
        if self.child is None:
            if self.restarts >= MAX_RESTARTS:
                return CallOutcome(Status.SKIPPED,
                                   detail=f"restarted {MAX_RESTARTS} times")
            if self._next_id:
                self.restarts += 1
            self.prestart()
        rid, self._pending_load = self._pending_load, None
        loaded = rid if isinstance(rid, CallOutcome) else self._await(
            rid, time.monotonic() + self.limits.import_time, self.limits.import_time)
        if loaded.ok:
            return None
        self.close(wait=True)
        self.load_failure = loaded
        return loaded

    def _send(self, request, count=None):
        """Write a request and wake the child; its id, or a CallOutcome if it died.
        ``count``: ``request`` is the JSON list of that many; their ids."""
        first = self._next_id + 1
        self._next_id += count or 1
        rids = [f"{n:06d}" for n in range(first, self._next_id + 1)]
        try:
            if not self.channel.send(rids[0], request, rids[1:]):   # a file or link planted
                return CallOutcome(Status.BAD_ANSWER, detail=(
                    REQUESTS_UNREAD if self.channel.broken else FOLDER_TAMPERED))
        except (BrokenPipeError, OSError):
            return self._crashed()
        return rids if count else rids[0]

    def _await(self, rid, deadline, seconds=None):
        limit = self.limits.answer + 2 * self.limits.output + 65536
        waited = self.channel.wait(deadline, self.child.exited, limit)
        if waited is Waited.ANSWER:
            return self._unstaged(self.channel.read_answer(rid, limit))
        if waited is Waited.EXITED:
            return self._crashed()
        if waited is Waited.DISK:
            return CallOutcome.crashed(Crash.over_limit("disk", self.limits.tmp))
        return CallOutcome(Status.TIMEOUT, detail=f"{seconds or self.limits.time:g} s")

    def _crashed(self):
        """The outcome of a child that died: its Crash, and for a signal or an exit of
        its own, the end of its console (shown to whoever reads the log, never judged)."""
        crash = self.child.crash()
        output = self.channel.console_tail() if crash.kind in ("signal", "exit") else ""
        return self._unstaged(CallOutcome.crashed(crash, output=output))

    def _unstaged(self, outcome: CallOutcome) -> CallOutcome:
        """The student's own paths where the child printed (or raised with) the paths of
        the staged copy it runs (``.../files/home/ana/day3/attention.py``)."""
        staged = str(self.folder.files)
        message = outcome.error.get("message") if outcome.error else None
        if staged not in outcome.output and not (isinstance(message, str) and staged in message):
            return outcome
        error = dict(outcome.error)
        if isinstance(message, str):
            error["message"] = message.replace(staged, "")
        return dataclasses.replace(outcome, output=outcome.output.replace(staged, ""),
                                   error=error)
