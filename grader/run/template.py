"""The run's warm template, seen from the grader: one sandbox, a fork per exercise.

Starting bubblewrap, Python and numpy costs far more than a check, so a run
starts one sandboxed template (``inside.forks``) and asks it over a Unix
socket for a fresh fork per student process.  Each fork gets its own
session, work folder, limits and pipes (passed as descriptors), so one
exercise's child cannot leave anything in the next one's.

The template runs as the student's uid: what it reports (a fork, an exit
status) is believed only about that student's own children, every wait has
a deadline, and a template that stops answering is killed with its whole
sandbox; the next start gets a new one.
"""

import dataclasses
import enum
import json
import os
import select
import socket
import time
from pathlib import Path
from typing import IO, Any

from ..course.limits import Limits
from . import bubblewrap, sandbox
from .child import Child, diagnose
from .identity import kill_processes_of
from .outcome import Crash
from .zygote import Zygote

ANSWER_SECONDS = 5.0        # for a fork or a kill; the template does nothing else
# The process limit counts a uid's processes; the template is one of them but
# not the student's: every limit it and its children get allows one more.
OWN_PROCESSES = 1
MESSAGE_BYTES = 4096


class State(enum.Enum):
    """Where a template is in its life (``retire``: a zygote's template that ends and
    leaves its sandbox to the next one)."""

    LIVE = "live"                 # forks children for the run
    RETIRING = "retiring"         # asked to end; not yet said it has cleaned up
    ENDED = "ended"               # said it killed what its children left; ends next
    RETIRED = "retired"           # ended as asked: its sandbox runs on, for the next
    HANDED_OVER = "handed over"   # its sandbox is the next template's
    STOPPED = "stopped"           # killed, with its sandbox


class TemplateGone(Exception):
    """The template died or stopped answering; its children are gone with it."""


def widest(*limits: Limits) -> Limits:
    """Field by field the largest of several limits: what a template must allow."""
    fields = [f.name for f in dataclasses.fields(Limits)]
    return Limits(**{name: max(getattr(lim, name) for lim in limits) for name in fields})


# the limits a template passes on to its children (wall time is the grader's to keep)
INHERITED = ("memory", "cpu", "processes", "tmp", "answer", "output")


def fits(limits: Limits, within: Limits) -> bool:
    """Whether a template started with ``within`` can give a child ``limits``."""
    return all(getattr(limits, name) <= getattr(within, name) for name in INHERITED)


class Template:
    """One sandboxed template process of a run: it sees the run's staged folders."""

    def __init__(self, folder: Any, limits: Limits, preload: tuple[str, ...] = (),
                 companions: int = 0, after: "Template | None" = None):
        """``after``: a retired template of the zygote's, whose sandbox this one takes
        over (``retire``)."""
        self.folder, self.limits = folder, limits
        # the uid's processes that are not the student's: this template and the
        # run's other templates alive beside it
        self.own_processes = OWN_PROCESSES + companions
        self.preloaded = {"numpy", *preload}
        self.exits: dict[str, int] = {}
        self._killing: set[str] = set()   # told to kill, exit not yet seen
        self._replies: dict[str, dict[str, Any]] = {}
        self.state = State.LIVE
        self.holder: int | None = None   # the pid 1 of the sandbox a zygote entered
        self._count = 0
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        own = dataclasses.replace(limits, processes=limits.processes + self.own_processes)
        zygote = getattr(folder, "zygote", None)
        try:
            with open(folder.root / "template.log", "ab") as console:
                if zygote is not None and zygote.serves(folder.plan, preload):
                    self.preloaded.update(zygote.modules_for(preload))
                    self._enter(zygote, own, theirs, console, after)
                else:
                    self._start(own, theirs, console)
        except BaseException:   # a Ctrl-C too: a sandbox it started goes with it
            if hasattr(self, "process"):
                self.stop()
            ours.close()
            raise
        finally:
            theirs.close()

    def _start(self, own: Limits, theirs: socket.socket, console: IO[bytes]) -> None:
        """A sandbox of its own: bubblewrap (or the process level) starts Python."""
        folder = self.folder
        own_uid = folder.plan.level == "process" and folder.plan.identity is not None
        settings = {"library_paths": sandbox.library_paths(), "control_fd": theirs.fileno(),
                    "preload": sorted(self.preloaded),
                    # kill(-1) in the template reaches the run's processes alone
                    "kill_all": folder.plan.level == "bubblewrap" or own_uid,
                    # the process level switched uid before Python started (preexec)
                    "own_keyrings": own_uid,
                    "seccomp": bubblewrap.encoded_filter(folder.plan.seccomp)}
        # a new file in runtime/, which no child may write (work/ a child may, where
        # its uid is the grader's user's: a link planted there would be written through)
        path = folder.write_new_shared("template-", json.dumps(settings).encode())
        argv = bubblewrap.command(folder.plan, str(folder.runtime / bubblewrap.CHILD),
                               str(folder.work), str(folder.files), str(folder.runtime),
                               own) + ["--settings", str(path)]
        self._launch(argv, own, console, (theirs.fileno(),))

    def _launch(self, argv: list[str], own: Limits | None, console: IO[bytes],
                fds: tuple[int, ...]) -> None:
        """The template's sandbox process, with the template's own limits (no CPU
        limit), in the run's work folder; or (``own`` None) a holder's, which runs no
        student code and so needs none: without a function to run before exec,
        Python starts it with vfork, not a copy of this process."""
        folder = self.folder
        self.process = Child.start(
            argv, folder.work, console, sandbox.child_env(str(folder.work)),
            None if own is None else bubblewrap.preexec(folder.plan, own, cpu=False), fds,
            folder.plan.level, self.limits, folder.reaper)

    def _enter(self, zygote: "Zygote", own: Limits, theirs: socket.socket,
               console: IO[bytes], after: "Template | None") -> None:
        """The same sandbox, held by a bubblewrap that runs nothing; the zygote forks
        the template into it (no Python start, no imports).  ``after``: the holder of
        a retired template's, taken over instead of starting one."""
        folder = self.folder
        if after is not None:
            self.process, holder = after.hand_over()
        else:
            holder = self._hold(own, console)
        self.holder = holder
        identity = folder.plan.identity
        settings = {"env": sandbox.child_env(str(folder.work)),
                    "rlimits": bubblewrap.rlimits(own, cpu=False),
                    "nice": bubblewrap.STUDENT_NICENESS, "kill_all": True,
                    # the zygote's CPUs are all of them: a pinned worker's sandbox runs
                    # where it does, as one it starts itself would (batch.pin_cpus)
                    "cpus": sorted(os.sched_getaffinity(0)) if hasattr(
                        os, "sched_getaffinity") else None,
                    "argv": ["--nproc", str(own.processes),
                             "--user", f"{identity.uid}:{identity.gid}",
                             "--cwd", str(folder.work)],
                    "seccomp": bubblewrap.encoded_filter(folder.plan.seccomp)}
        entered = holder is not None and zygote.enter(holder, theirs.fileno(),
                                                      console.fileno(), settings,
                                                      sorted(self.preloaded))
        # bubblewrap outlives its pid 1: alive now, the pid entered was this sandbox's
        # (not a reused one) for the whole entry
        if not entered or self.process.exited():
            self.stop()
            folder.zygote = None   # this run's next template starts its own sandbox
            raise TemplateGone("the zygote could not enter the run's sandbox")

    def _hold(self, own: Limits, console: IO[bytes]) -> int | None:
        """Start the bubblewrap that holds the run's sandbox; its pid 1 once it runs
        inside the finished sandbox (None if it does not say so in time)."""
        folder = self.folder
        info_r, info_w = os.pipe()
        ready_r, ready_w = os.pipe()
        try:
            argv = bubblewrap.holder_command(folder.plan, str(folder.work), str(folder.files),
                                          str(folder.runtime), own, info_w, ready_w)
            self._launch(argv, None, console, (info_w, ready_w))
            os.close(info_w)
            os.close(ready_w)
            info_w = ready_w = -1
            return bubblewrap.holder_pid(info_r, ready_r,
                                         ANSWER_SECONDS + self.limits.import_time)
        finally:
            for fd in (info_r, ready_r, info_w, ready_w):
                if fd >= 0:
                    os.close(fd)

    @property
    def dead(self) -> bool:
        """Whether it has ended (its children with it), as asked or not."""
        return self.state in (State.RETIRED, State.HANDED_OVER, State.STOPPED)

    def alive(self) -> bool:
        return not self.dead and not self.process.exited()

    def idle(self) -> bool:
        """Whether every child it forked has ended or was told to end."""
        return all(str(n) in self.exits or str(n) in self._killing
                   for n in range(1, self._count + 1))

    def retire(self) -> bool:
        """End this template and leave its sandbox (a zygote's holder) running for the
        next one: two templates in one sandbox would kill each other with kill(-1).
        It reads the end of its requests after the kills it was sent, kills what its
        children left, says so, and exits; its socket's end says it has.  Whether it did
        all that in time (else its sandbox is stopped too: one whose template a stray
        stopped and then killed still holds the stray)."""
        self.state = State.RETIRING
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self._wait(lambda: self.dead, ANSWER_SECONDS)
        if self.state is State.RETIRED:
            return True
        self.stop()
        return False

    def hand_over(self) -> tuple[Any, int | None]:
        """A retired template's sandbox (its holder's process and pid 1), for the next
        template: no longer this one's to stop."""
        self.state = State.HANDED_OVER
        return self.process, self.holder

    def fork(self, workdir: Path, limits: Limits, preload: tuple[str, ...],
             stdin: int, answers: int, console: int, job: dict[str, Any]) -> "ForkedChild":
        """A new child in ``workdir`` for ``job`` (the module it imports at once, the id
        of that import's answer, its caps); TemplateGone if the template cannot make one.

        A fork the run's uid may not make (too many processes) comes back as a
        ForkedChild that has already crashed over the processes limit.
        """
        self._count += 1
        rid = str(self._count)
        request = {"op": "fork", "id": rid, "workdir": str(workdir), "job": job,
                   "preload": [name for name in preload if name not in self.preloaded],
                   "limits": None if self.folder.plan.level == "none" else {
                       "memory": limits.memory, "cpu": bubblewrap.cpu_seconds(limits),
                       "fsize": bubblewrap.file_size_cap(limits),
                       "processes": limits.processes + self.own_processes}}
        self.preloaded.update(preload)
        self._send(request, [stdin, answers, console])
        seconds = ANSWER_SECONDS + (limits.import_time if request["preload"] else 0)
        reply = self._wait(lambda: self._replies.get(rid), seconds)
        if reply is None:
            self.stop()
            raise TemplateGone("the template did not answer a fork")
        self._confirm_kills()   # it reported their exits before it forked
        child = ForkedChild(self, rid, limits)
        if reply.get("failed") == "processes":
            child.refused = Crash.over_limit("processes", limits.processes)
        elif "forked" not in reply:
            self.stop()
            raise TemplateGone("the template could not fork")
        return child

    def kill(self, rid: str, wait: bool = False) -> None:
        """Kill one child (its whole session).  ``wait``: until the template confirms
        (stopping it if it does not); otherwise the template reaps the child before
        it reads the next request, and the next fork checks that it did."""
        if self.dead or rid in self.exits:
            return
        try:
            self._send({"op": "kill", "id": rid})
        except TemplateGone:
            return
        self._killing.add(rid)
        if wait and self._wait(lambda: rid in self.exits, ANSWER_SECONDS) is None:
            self.stop()

    def _confirm_kills(self) -> None:
        """TemplateGone (after stopping it) if a child it was told to kill still lives."""
        if any(rid not in self.exits for rid in self._killing):
            self.stop()
            raise TemplateGone("the template did not end a child it was told to kill")
        self._killing.clear()

    def stop(self) -> None:
        """Kill the template and everything in its sandbox (a retired one's sandbox
        too, unless the next template took it over)."""
        if self.state is State.RETIRED:
            self.state = State.STOPPED
            self.process.kill()
        if not self.dead:
            self.state = State.STOPPED
            self.process.kill()
            self.sock.close()
            identity = self.folder.plan.identity
            if self.folder.plan.level == "process" and identity is not None:
                # no PID namespace ends with it: what its children started (a chain
                # that outlives a sweep, one that killed the template) dies here
                kill_processes_of(identity.uid)

    # ------------------------------------------------------------ messages
    def poll(self) -> None:
        """Read whatever the template has said; notice its death."""
        if self.dead:
            return
        while True:
            try:
                data = self.sock.recv(MESSAGE_BYTES, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                if self.state is State.ENDED:   # as asked: its sandbox is the next one's
                    self.state = State.RETIRED
                    self.sock.close()
                else:
                    self.stop()
                return
            self._take(data)

    def _take(self, data: bytes) -> None:
        """One message: only an id it was given and a small integer are kept."""
        try:
            message = json.loads(data)
            if message == {"ended": True}:   # retire(); never believed unasked
                if self.state is State.RETIRING:
                    self.state = State.ENDED
                return
            rid = message["id"]
        except (ValueError, TypeError, KeyError, RecursionError):
            return
        if not isinstance(rid, str) or not rid.isdigit() or int(rid) > self._count:
            return
        code = message.get("exited")
        if type(code) is int and -64 < code < 256:
            self.exits[rid] = code
        elif "exited" not in message:
            self._replies[rid] = {k: v for k, v in message.items() if k in ("forked", "failed")}

    def _send(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        try:
            socket.send_fds(self.sock, [json.dumps(message).encode()], fds or [])
        except OSError:
            self.stop()
            raise TemplateGone("the template is gone") from None

    def _wait(self, done, seconds: float):
        """``done()`` once true, or None after ``seconds`` or the template's death."""
        deadline = time.monotonic() + seconds
        while True:
            self.poll()
            result = done()
            if result or self.dead:
                return result or None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            select.select([self.sock], [], [], min(remaining, 0.05))


class ForkedChild:
    """One child forked by the template: what StudentProcess needs of a process."""

    def __init__(self, template: Template, rid: str, limits: Limits):
        self.template, self.rid, self.limits = template, rid, limits
        self.refused: Crash | None = None
        self.stdin: IO[bytes] | None = None

    def exited(self) -> bool:
        if self.refused is not None:
            return True
        self.template.poll()
        return self.rid in self.template.exits or self.template.dead

    def kill(self, wait: bool = False) -> None:
        if self.refused is None:
            self.template.kill(self.rid, wait)

    def crash(self) -> Crash:
        """Why the child died: its exit status as the template saw it."""
        if self.refused is not None:
            return self.refused
        self.template._wait(lambda: self.rid in self.template.exits, ANSWER_SECONDS)
        code = self.template.exits.get(self.rid)
        if code is None:   # the sandbox itself ended (or was ended)
            return Crash.by_signal("SIGKILL")
        return diagnose(code, "process", self.limits)

