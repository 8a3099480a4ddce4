"""The zygote, inside: Python with what a template imports already imported, that
forks each run's template into the run's own sandbox.

A class's grading worker starts one zygote: this package, as root, outside any
sandbox.  For each run it forks a process that enters the run's sandbox (the
namespaces and root of a bubblewrap that only holds them), switches to the run's
uid and becomes its template (``forks.ForkServer``): a student's sandbox without a
Python start and numpy and sympy imports of its own.  The grader's side of it is
``grader.run.zygote``.
"""

import contextlib
import gc
import json
import os
import select
import signal
import socket
import traceback
from typing import Any

from . import EXIT_OUT_OF_MEMORY
from .calls import import_all, warm_up
from .confine import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    apply_filter,
    drop_privileges,
    libc,
    lower_limit,
    prctl,
)
from .forks import ChildExits, ForkServer

NAMESPACES = ("cgroup", "ipc", "uts", "net", "mnt")   # pid: joined before the fork
OPTIONAL_NAMESPACES = ("cgroup",)   # bubblewrap's --unshare-cgroup-try


def start_zygote(control: socket.socket, layers: list[list[str]]) -> None:
    """Import the first layer of modules and serve; each later layer is a deeper
    zygote, forked before it imports (numpy's pages stay shared), to which requests
    that need its modules are passed.  A numpy-only template's forks have a third of
    the memory to copy and free of those of one that also holds sympy."""
    modules: set[str] = set()
    deeper = None
    _end_with_starter()
    for depth, layer in enumerate(layers):
        if depth:
            link, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            if os.fork():
                theirs.close()
                deeper = link
                break
            _end_with_starter()
            link.close()
            control.close()
            control = theirs   # its only grader: the zygote one layer up
        import_all(layer)
        modules.update(layer)
        warm_up()
        # what it imported is never collected: a child's collector skips it instead
        # of touching (and so copying) every page of it
        gc.freeze()
    serve_zygote(control, modules, deeper)


def _end_with_starter() -> None:
    """Die with the process that started this one, from now on: before its imports, so a
    grading that ends while numpy or sympy is still importing is not kept waiting (its
    caller reads the grader's stderr, which the zygote holds, to its end)."""
    starter = os.getppid()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != starter:   # it ended before the line above
        os._exit(0)


def serve_zygote(control: socket.socket, modules: set[str],
           deeper: socket.socket | None = None) -> None:
    """Serve requests until its starter closes ``control``: {"holder": pid, "settings":
    {...}, "preload": [...]} with two descriptors (the template's control socket, its
    console), answered on the socket they came on; and, from its starter, {"adopt":
    true} with one socket: another grader's (a class's workers share one zygote).
    A request for modules it lacks goes to ``deeper`` (a zygote that has them)."""
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)   # it ends with its starter, however that ends
    _OWN_PID_NAMESPACE[:] = [os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)]
    # the templates it forks come back to it when their forker ends (not to the grader)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the worker's Ctrl-C is the worker's
    # an ended template is collected at once: its run's uid is released only after
    wakeup = ChildExits()
    server = ZygoteServer(control, modules, deeper, wakeup)
    while True:
        _reap_templates()
        watched = [*server.graders, wakeup.fd]
        if server.deeper is not None:
            watched.append(server.deeper.fileno())
        ready = select.select(watched, [], [])[0]
        if wakeup.fd in ready:
            wakeup.drain()
        for fd in ready:
            if server.deeper is not None and fd == server.deeper.fileno():
                server.relay()
            elif fd in server.graders:
                if not server.serve_one(server.graders[fd]):
                    if server.graders[fd] is control:
                        return
                    server.graders.pop(fd).close()


class ZygoteServer:
    """A zygote's state: its graders' sockets, its modules, the deeper zygote and
    the requests passed to it, not yet answered."""

    def __init__(self, control: socket.socket, modules: set[str],
                 deeper: socket.socket | None, wakeup: "ChildExits"):
        self.control, self.modules, self.wakeup = control, modules, wakeup
        self.deeper: socket.socket | None = deeper
        self.graders = {control.fileno(): control}
        self.passed: dict[str, tuple[socket.socket, Any]] = {}
        self._count = 0

    def serve_one(self, asker: socket.socket) -> bool:
        """One request from ``asker``; False once it has closed its end."""
        try:
            data, fds, _, _ = socket.recv_fds(asker, 65536, 2)
        except OSError:
            data, fds = b"", []
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        request = json.loads(data)
        if request.get("adopt") is True:
            for fd in fds:   # only its starter hands it graders
                if asker is self.control:
                    self.graders[fd] = socket.socket(fileno=fd)
                else:
                    os.close(fd)
            return True
        if not set(request.get("preload", ())) <= self.modules:
            self._pass(asker, request, fds)
            return True
        try:
            entered = self.enter(int(request["holder"]), fds, request["settings"])
        finally:
            for fd in fds:
                os.close(fd)
        _answer(asker, request.get("id"), entered)
        return True

    def enter(self, holder: int, fds: list[int], settings: dict[str, Any]) -> bool:
        """Fork the run's template straight into the PID namespace of ``holder``'s
        sandbox (this process's children go there while it points them there; then
        back home, or it ends); the template joins the other namespaces and the root
        itself, says so, and becomes the template.  Whether it did, within ANSWER
        seconds.  (A fork that joined them all and then forked the template cost a
        fork and an exit of a zygote-sized process more.)"""
        try:
            theirs = _namespace_of(holder, "pid")
        except OSError:
            return False
        ready_r, ready_w = os.pipe()
        pid = -1
        try:
            _setns(theirs, "pid")
            try:
                pid = os.fork()
            finally:
                if pid != 0:
                    _home_pid_namespace()
        except OSError:
            os.close(ready_r)
            os.close(ready_w)
            return False
        finally:
            os.close(theirs)
        if pid == 0:
            code = 1
            try:
                os.close(ready_r)
                self.wakeup.forget()
                # no grader's socket goes into a sandbox
                for other in [*self.graders.values(), self.deeper]:
                    if other is not None:
                        other.close()
                enter_sandbox(holder)
                os.write(ready_w, b"1")
                os.close(ready_w)
                become_template(fds, settings)
            except MemoryError:
                code = EXIT_OUT_OF_MEMORY
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(ready_w)
        try:
            said = select.select([ready_r], [], [], ENTER_SECONDS)[0] and os.read(ready_r, 1)
        finally:
            os.close(ready_r)
        if said != b"1":
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)   # collected by _reap_templates
            return False
        return True

    def _pass(self, asker, request, fds) -> None:
        """To the deeper zygote, under an id of this zygote's (each grader counts its
        own); refused at once if there is none."""
        try:
            if self.deeper is None:
                raise OSError("no deeper zygote")
            self._count += 1
            key = str(self._count)
            socket.send_fds(self.deeper, [json.dumps({**request, "id": key}).encode()], fds)
            self.passed[key] = (asker, request.get("id"))
        except OSError:
            _answer(asker, request.get("id"), False)
        finally:
            for fd in fds:
                os.close(fd)

    def relay(self) -> None:
        """The deeper zygote's answer, to the grader that asked; if it has ended,
        every request passed to it is refused."""
        deeper = self.deeper
        assert deeper is not None
        try:
            reply = json.loads(deeper.recv(4096))
        except (OSError, ValueError):
            reply = None
        if not isinstance(reply, dict):
            deeper.close()
            self.deeper = None
            for asker, rid in self.passed.values():
                _answer(asker, rid, False)
            self.passed.clear()
            return
        passed = self.passed.pop(str(reply.get("id")), None)
        if passed is not None and passed[0].fileno() >= 0:   # that grader is still here
            _answer(passed[0], passed[1], reply.get("entered") is True)


def _answer(asker: socket.socket, rid: Any, entered: bool) -> None:
    try:
        asker.send(json.dumps({"id": rid, "entered": entered}).encode())
    except OSError:
        pass   # that grader is gone


def _reap_templates() -> None:
    """Collect the templates that ended (their sandboxes were closed)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


ENTER_SECONDS = 5.0   # for a fork to join a sandbox and say so
CLONE_NEWPID = 0x20000000
_OWN_PID_NAMESPACE: list[int] = []   # a descriptor of the zygote's own, opened at its start


def _setns(fd: int, name: str) -> None:
    import ctypes

    if libc().setns(fd, CLONE_NEWPID if name == "pid" else 0) != 0:
        raise OSError(ctypes.get_errno(), f"setns {name}")


def _namespace_of(holder: int, name: str) -> int:
    """A descriptor of ``holder``'s namespace ``name``; OSError if it has none of its
    own: a holder that died (or a pid reused) must never leave the template in the
    host's pid or network namespace."""
    try:
        fd = os.open(f"/proc/{holder}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise OSError(f"the holder has no {name} namespace") from None
    if os.fstat(fd).st_ino == os.stat(f"/proc/self/ns/{name}").st_ino:
        os.close(fd)
        raise OSError(f"the holder has no {name} namespace of its own")
    return fd


def _home_pid_namespace() -> None:
    """Point this process's next children at its own PID namespace again; a zygote
    that cannot ends at once (no later run may land in this run's sandbox)."""
    try:
        _setns(_OWN_PID_NAMESPACE[0], "pid")
        home = os.stat("/proc/self/ns/pid").st_ino
        if os.stat("/proc/self/ns/pid_for_children").st_ino == home:
            return
    except (OSError, IndexError):
        pass
    os._exit(1)


def enter_sandbox(holder: int) -> None:
    """In a fork of the zygote already in the holder's PID namespace: join its other
    namespaces and its root."""
    host = os.stat("/")
    root = os.open(f"/proc/{holder}/root", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for name in NAMESPACES:   # mnt last: it hides /proc/N
        try:
            fd = _namespace_of(holder, name)
        except OSError:
            if name in OPTIONAL_NAMESPACES:
                continue   # not unshared (--unshare-cgroup-try)
            raise
        try:
            _setns(fd, name)
        finally:
            os.close(fd)
    os.fchdir(root)
    os.chroot(".")
    os.close(root)
    os.chdir("/")
    inside = os.stat("/")
    if (inside.st_dev, inside.st_ino) == (host.st_dev, host.st_ino):
        raise OSError("the holder's root is the host's: its sandbox is not built")


def become_template(fds: list[int], settings: dict[str, Any]) -> None:
    """Inside the run's sandbox, still root: what bubblewrap and the Python it
    starts would have done (a session, the console, limits, the run's uid, no
    capabilities, no new privileges), then the template's loop."""
    control_fd, console = fds
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.dup2(console, 1)
    os.dup2(console, 2)
    os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
    # nothing of the zygote's (or the grader's) world comes along
    os.closerange(3, control_fd)
    os.closerange(control_fd + 1, os.sysconf("SC_OPEN_MAX"))
    os.environ.clear()
    os.environ.update(settings["env"])
    for which, soft, hard in settings["rlimits"]:
        lower_limit(which, soft, hard)
    os.nice(settings["nice"])
    if settings.get("cpus"):   # a pinned worker's: its CPUs, which no child may leave
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, settings["cpus"])
    drop_privileges(settings["argv"])
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    apply_filter(settings)
    ForkServer(socket.socket(fileno=control_fd), settings.get("kill_all", False)).run()
