"""The fork loop: a warm template that forks one child per exercise.

The template has imported numpy (and, when asked, sympy) once, and waits on a
control socket; for each fork request (a work folder, limits, and three
descriptors: the request pipe, the answer pipe, the console) it forks a child
that starts a session of its own, lowers its limits and serves its calls
(``calls``).  Children never return into the template, so one exercise's
monkeypatching cannot reach the next.  The template reports each child's exit
status; the grader believes it only about that child.
"""

import contextlib
import errno
import gc
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

from . import EXIT_OUT_OF_MEMORY
from .calls import import_all, serve
from .confine import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, apply_limits, prctl

POLL_SECONDS = 0.05
KILL_SECONDS = 2.0   # a SIGKILLed child is gone long before (unless stuck in the kernel)


def become_child(request: dict[str, Any], fds: list[int], control: socket.socket) -> None:
    """In a fresh fork of the template: become one exercise's child; never returns."""
    code = 0
    try:
        control.close()
        os.setsid()
        stdin_fd, answers_fd, console_fd = fds
        os.dup2(stdin_fd, 0)
        os.dup2(console_fd, 1)
        os.dup2(console_fd, 2)
        os.close(stdin_fd)
        os.close(console_fd)
        apply_limits(request.get("limits"))
        workdir = request["workdir"]
        os.chdir(workdir)
        os.environ.update(HOME=workdir, TMPDIR=workdir)
        if "tempfile" in sys.modules:   # numpy imported it: forget the template's folder
            sys.modules["tempfile"].tempdir = None  # type: ignore[attr-defined]
        serve(workdir, answers_fd, request["job"])
    except MemoryError:   # no traceback: printing it may need memory too
        code = EXIT_OUT_OF_MEMORY
    except BaseException:  # the grader sees the exit status; the console shows why
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


class ChildExits:
    """A pipe SIGCHLD writes to, so that a child's exit wakes a select() at once."""

    def __init__(self) -> None:
        self.fd, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(self._write)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def drain(self) -> None:
        try:
            os.read(self.fd, 4096)
        except BlockingIOError:
            pass

    def forget(self) -> None:
        """In a fork: its children's exits are not the fork's, nor is the pipe."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(self.fd)
        os.close(self._write)


class ForkServer:
    """Forks children on request, reaps them, reports their exits, kills strays.

    Not dumpable: a child (same uid) can neither trace it nor read its memory.
    A subreaper: what a child detaches comes back here and is killed.
    """

    def __init__(self, control: socket.socket, kill_all: bool = False):
        self.control = control
        # kill(-1) reaches only the run's own processes (a PID namespace of its own, or a
        # uid of its own): with no child alive, it ends every stray at once, and no fork
        # escapes it, unlike a sweep, which a chain of sessions that respawn outlives
        self.kill_all = kill_all
        self.control_fd = control.fileno()
        self.children: dict[int, str] = {}   # pid -> request id
        self.workdirs: dict[int, str] = {}   # pid -> its work folder
        self.finished: list[str] = []   # the work folders of children reaped since a fork
        prctl(PR_SET_DUMPABLE, 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.wakeup = ChildExits()

    def run(self) -> None:
        while True:
            readable, _, _ = select.select([self.control_fd, self.wakeup.fd], [], [],
                                           POLL_SECONDS)
            if self.wakeup.fd in readable:
                self.wakeup.drain()
            self.reap()
            if self.control_fd in readable:
                try:
                    data, fds, _, _ = socket.recv_fds(self.control, 65536, 4)
                except OSError:
                    data, fds = b"", []
                if not data:
                    self.end()
                    return   # the grader is gone, or asked it to end
                self.handle(json.loads(data), fds)

    def end(self) -> None:
        """With kill_all, kill what its children left before it ends, and say so: only
        then may a zygote's next template take its sandbox over (template.Template.retire)."""
        if not self.kill_all:
            return
        _kill_everything_else()   # its children too, each reaped
        self.children.clear()
        try:
            self.control.send(json.dumps({"ended": True}).encode())
        except OSError:
            pass

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.control.send(json.dumps(message).encode())
        except OSError:
            os._exit(0)

    def handle(self, request: dict[str, Any], fds: list[int]) -> None:
        if request["op"] == "kill":
            pid = next((p for p, i in self.children.items() if i == request["id"]), None)
            if pid is not None:
                watch = _pidfd(pid)   # before the kill: the pid is still this child's
                try:
                    _kill_group(pid)
                    self.reap_dead(pid, watch)
                finally:
                    if watch is not None:
                        os.close(watch)
            return
        if request.get("preload"):
            import_all(request["preload"])   # once, here: the children share it
            gc.freeze()
        if self.kill_all and not self.children:   # nothing a previous child left meets this one
            _kill_everything_else()
            empty_scratch_folders(self.finished, os.path.dirname(request["workdir"]))
            self.finished.clear()
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            self.send({"id": request["id"],
                       "failed": "processes" if exc.errno == errno.EAGAIN else "fork"})
            return
        if pid == 0:
            self.wakeup.forget()
            become_child(request, fds, self.control)
        for fd in fds:
            os.close(fd)
        self.children[pid] = request["id"]
        self.workdirs[pid] = request["workdir"]
        self.send({"id": request["id"], "forked": True})

    def reap_dead(self, pid: int, watch: int | None) -> None:
        """Reap a child just killed before the next request (a fork): the grader does
        not wait for the kill, and a fork must find no child alive (kill_all).
        ``watch``: a pidfd of it, readable once it has ended (else it is polled)."""
        deadline = time.monotonic() + KILL_SECONDS
        while pid in self.children and time.monotonic() < deadline:
            self.reap()
            if pid in self.children:
                if watch is None:
                    time.sleep(0.0002)
                elif select.select([watch], [], [], max(0.0, deadline - time.monotonic()))[0]:
                    # it ended: reaped at the next look, unless a tracer of its own holds
                    # its exit (then the pidfd stays readable: looked for between sleeps)
                    watch = None

    def reap(self) -> None:
        ended, exits = False, []
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            rid = self.children.pop(pid, None)
            workdir = self.workdirs.pop(pid, None)
            if workdir is not None:
                self.finished.append(workdir)
            if rid is not None:
                _kill_group(pid)   # what it left in its session
                exits.append((rid, os.waitstatus_to_exitcode(status)))
            ended = True
        if ended:
            self.kill_strays()
        for rid, code in exits:   # once its strays are gone: the grader may clean up now
            self.send({"id": rid, "exited": code})

    def kill_strays(self) -> None:
        """Kill this process's children that are not the children it forked."""
        if self.kill_all and not self.children:
            _kill_everything_else()
            return
        me = str(os.getpid())
        for _ in range(20):
            strays = [pid for pid in _children_of(me) if pid not in self.children]
            if not strays:
                return
            for pid in strays:
                _kill_group(pid)
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass


def _kill_everything_else() -> None:
    """SIGKILL every process this one may signal, in one call, and reap what comes back."""
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:   # none left
        pass
    while True:   # no child of its own is alive: every child is a stray, now killed
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


SCRATCH_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")


def empty_scratch_folders(workdirs: Sequence[str] = (), keep: str = "/") -> None:
    """Remove what this uid has at the top of the scratch folders a child may write (in
    bubblewrap the sandbox's own /tmp and /dev/shm; at the process level the system's,
    where only this run's uid's entries are its), and the ``workdirs`` of children that
    ended (the grader removes them too, once it has heard of their end: after the next
    fork): each child starts with none of what an earlier exercise's code left (a log of
    its calls' inputs, say).  Only with no child alive (``kill_all``): the run's
    children run one at a time.  Never the folders on the way to ``keep`` (the run's
    work folder, which bubblewrap binds under a /tmp of its own), and never across a
    mount: a bound folder is the grader's."""
    for workdir in workdirs:
        with contextlib.suppress(OSError):
            _remove(workdir, os.lstat(workdir).st_dev)
    on_the_way = {keep}
    while keep not in ("/", ""):
        keep = os.path.dirname(keep)
        on_the_way.add(keep)
    me = os.getuid()
    for top in SCRATCH_FOLDERS:
        try:
            device = os.stat(top).st_dev
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if info.st_uid == me and info.st_dev == device and entry.path not in on_the_way:
                    _remove(entry.path, device)


def _remove(path: str, device: int) -> None:
    """Remove a file or a whole tree of this uid's, whatever modes it gave its folders,
    never crossing into another file system (a mount point is left, with its folder)."""
    info = os.lstat(path)
    if info.st_dev != device:
        return
    if not os.path.isdir(path) or os.path.islink(path):
        os.unlink(path)
        return
    os.chmod(path, 0o700)
    for entry in os.scandir(path):
        with contextlib.suppress(OSError):
            _remove(entry.path, device)
    os.rmdir(path)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when child ``pid`` ends (Linux 5.3), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _children_of(parent: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read().decode("ascii", "replace")
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if len(fields) > 1 and fields[1] == parent:
                found.append(int(entry))
    return found
