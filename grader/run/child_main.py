"""The student's side: a warm template that forks one child per exercise.

Runs as a script in the run's sandbox, beside a copy of the wire module,
never inside the grader.  The template drops its privileges, imports numpy
(and, when asked, sympy) once, and waits on a control socket; for each fork
request (a work folder, limits, and three descriptors: the request pipe, the
answer pipe, the console) it forks a child that starts a session of its own,
lowers its limits and imports one submission module.  Children never return
into the template, so one exercise's monkeypatching cannot reach the next.

A child imports its module at once and answers that as its first call; then it
reads request ids on stdin, with their requests after a tab on the same line, or
in ``req-ID.json`` when they are large (of the line's first id: one request, or the
list of several written ahead), runs each call and sends its answer on the
answer pipe (``ID LENGTH``, then the JSON).  Nothing it prints is read as a
result: the grader reads that pipe only, and decodes it with the same strict wire
module.  The template reports each child's exit status; the grader believes it
only about that child.
"""

import contextlib
import errno
import functools
import gc
import importlib
import importlib.util
import io
import json
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

wire: Any = None   # the wire module, imported once the library paths are known (main)
# The exit code of a child that ran out of memory outside any call (a MemoryError
# a call raises is that call's error answer); the grader reads it as the memory limit.
EXIT_OUT_OF_MEMORY = 86


def drop_privileges(argv: list[str]) -> None:
    """``--nproc N`` and ``--user UID:GID`` (bubblewrap as root): limit, then switch.

    Runs before anything else, so no student code ever runs with the grader's
    uid or capabilities; the kernel counts RLIMIT_NPROC for the new uid.
    """
    args = dict(zip(argv[::2], argv[1::2]))
    if "--nproc" in args:
        n = int(args["--nproc"])
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    if "--user" in args:
        uid, gid = map(int, args["--user"].split(":"))
        drop_bounding_set()
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        _own_keyrings()
        if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (uid, uid, gid, gid) \
                or os.getgroups() or _capabilities():
            raise SystemExit("attn-grade child: could not switch user")
    if "--cwd" in args:
        os.chdir(args["--cwd"])


KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}   # keyctl(2)'s syscall number
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_THREAD_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -1, -4, -5


def _own_keyrings(join: bool = True) -> None:
    """After the uid switch: a new session keyring (``join``), and the uid's own keyrings
    emptied.

    The kernel's keyrings are neither files nor processes: no sandbox hides them.  The
    session keyring survives setuid (a root login's, from pam_keyinit: what root keeps
    there its possessor may read whatever its uid), and the uid's user keyrings and its
    persistent keyring (kept for days) outlive its processes: an earlier run of the same
    uid, another student's, would leave keys for this one.  The grader clears them too
    when it claims and releases a uid (``sandbox.forget_kernel_state_of``: ``join``
    False, in a thread of its own that alone runs as the uid).
    """
    import ctypes
    import platform

    number = KEYCTL.get(platform.machine())
    if number is None:
        return
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    calls = [(KEYCTL_JOIN_SESSION_KEYRING, None)] if join else []
    for args in (*calls, (KEYCTL_CLEAR, ctypes.c_long(KEY_SPEC_USER_KEYRING)),
                 (KEYCTL_CLEAR, ctypes.c_long(KEY_SPEC_USER_SESSION_KEYRING))):
        if libc.syscall(number, *args) < 0 and ctypes.get_errno() not in (
                errno.ENOSYS, errno.EPERM):   # no keys in this kernel, or none allowed
            raise SystemExit("attn-grade child: could not replace the keyrings: "
                             + os.strerror(ctypes.get_errno()))
    # linked into this thread's own keyring (which ends with it) to be cleared; a kernel
    # without persistent keyrings (EOPNOTSUPP) has none to clear
    persistent = libc.syscall(number, KEYCTL_GET_PERSISTENT, ctypes.c_long(-1),
                              ctypes.c_long(KEY_SPEC_THREAD_KEYRING))
    if persistent > 0 and libc.syscall(number, KEYCTL_CLEAR, ctypes.c_long(persistent)) < 0:
        raise SystemExit("attn-grade child: could not clear the persistent keyring: "
                         + os.strerror(ctypes.get_errno()))


def _capabilities():
    """Whether this process still holds any capability (permitted, effective, ambient,
    or in its bounding set: what an exec could ever give back)."""
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith((b"CapPrm:", b"CapEff:", b"CapAmb:", b"CapBnd:")) \
                    and int(line.split()[1], 16):
                return True
    return False


PR_CAPBSET_DROP = 24


def drop_bounding_set() -> None:
    """Empty the capability bounding set, while this process may (CAP_SETPCAP, as root
    before the uid switch): no later exec can gain a capability back.  Also run by the
    process level's start (``sandbox.preexec``)."""
    with open("/proc/sys/kernel/cap_last_cap", "rb") as f:
        last = int(f.read())
    libc = _libc()
    for cap in range(last + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            import ctypes

            raise SystemExit("attn-grade child: could not drop the capability bounding set: "
                             + os.strerror(ctypes.get_errno()))


def import_wire(library_paths: list[str]) -> None:
    """The wire module beside this script; numpy from ``library_paths`` (a venv's too)."""
    global wire
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [here] + sys.path + [p for p in library_paths if p not in sys.path]
    wire = importlib.import_module("_attn_grade_wire")
    del sys.path[0]


class CappedText(io.TextIOBase):
    """Keeps the first ``limit`` characters printed during a call."""

    def __init__(self, limit):
        self.limit, self.parts, self.kept, self.dropped = limit, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = max(0, self.limit - self.kept)
        self.parts.append(text[:room])
        self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - room)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def student_frame(tb_or_exc: BaseException, submission: str) -> dict[str, Any]:
    """The innermost traceback entry inside the submission folder."""
    if isinstance(tb_or_exc, SyntaxError) and tb_or_exc.filename:
        exc = tb_or_exc
        return {"file": os.path.basename(str(exc.filename)), "line": exc.lineno,
                "code": (exc.text or "").rstrip("\n"), "offset": exc.offset}
    found = None
    for frame in traceback.extract_tb(tb_or_exc.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith(submission + os.sep):
            found = {"file": os.path.relpath(path, submission), "line": frame.lineno,
                     "code": (frame.line or "").strip()}
    return found or {}


def error_answer(exc: BaseException, submission: str) -> dict[str, Any]:
    return {"status": "error", "error": {
        "type": type(exc).__name__, "message": str(exc)[:2000],
        **student_frame(exc, submission)}}


class Child:
    def __init__(self, job):
        self.job = job
        self.submission = os.path.realpath(job["submission"])
        self.module = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        capture = CappedText(self.job["output_limit"])
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        try:
            answer = self.dispatch(request)
        except BaseException as exc:  # the student's code may raise anything
            answer = error_answer(exc, self.submission)
        finally:
            sys.stdout, sys.stderr = saved
        answer["output"] = capture.text()
        answer["output_dropped"] = capture.dropped
        return answer

    def dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "load":
            self.module = import_student(self.job["module"], self.job["submission"])
            return {"status": "ok"}
        func = getattr(self.module, request["function"], None)
        if func is None or not callable(func):
            return {"status": "missing", "function": request["function"]}
        args = wire.decode(request["args"])
        kwargs = wire.decode(request["kwargs"])
        before: list[tuple[Any, Any]] = []
        _snapshot((args, kwargs), before)
        value = func(*args, **kwargs)
        sent = request.get("digest") if not _changed(before) else None
        return self.value_answer(value, args, kwargs, sent)

    def value_answer(self, value: Any, args: Any, kwargs: Any,
                     sent: str | None = None) -> dict[str, Any]:
        """``sent``: the digest of the arguments as the grader sent them, when the call
        left them as they came (else they are encoded again for the grader to compare)."""
        size = _array_bytes(value)
        if size > self.job["answer_limit"]:   # refused before spending seconds encoding it
            return {"status": "too_large", "size": size}
        try:
            encoded = wire.encode(value)
        except wire.WireError as exc:
            return {"status": "unsupported", "type_name": exc.type_name or str(exc),
                    "where": exc.where}
        text = json.dumps(encoded, allow_nan=False)
        if len(text) > self.job["answer_limit"]:
            return {"status": "too_large", "size": len(text)}
        try:   # the grader compares this with what it sent
            inputs = sent if isinstance(sent, str) else \
                wire.digest(wire.encode(args), wire.encode(kwargs))
        except (wire.WireError, ValueError):
            inputs = "unreadable"
        return {"status": "ok", "value": encoded, "inputs_digest": inputs}


def import_student(name: str, folder: str) -> Any:
    """The student's file ``folder/name.py`` itself, imported as ``name``: a search of
    ``sys.path`` (a finder for the new folder, its listing) was a fifth of a fresh
    fork's import, and could find a module of that name elsewhere."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, name + ".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # as an import would: the module may import itself
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return sys.modules.get(name, module)   # a module may put another object in its place


def _snapshot(value: Any, seen: list[tuple[Any, Any]]) -> None:
    """What a call could change in place in its arguments: each array's shape, type and
    bytes, each list's, dict's and set's items (by identity).  Far cheaper than
    encoding them again (about a third of a call's own cost in a child)."""
    kind = type(value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and kind is numpy.ndarray:
        seen.append((value, (value.shape, value.dtype.str, value.tobytes())))
    elif kind is list or kind is tuple:
        if kind is list:
            seen.append((value, list(value)))
        for item in value:
            _snapshot(item, seen)
    elif kind is dict:
        seen.append((value, list(value.items())))
        for item in value.values():
            _snapshot(item, seen)
    elif kind is set:
        seen.append((value, set(value)))


def _changed(seen: list[tuple[Any, Any]]) -> bool:
    """Whether anything ``_snapshot`` saw differs now (a call that wrote the same
    values back counts as a change here: the encoding then decides, as before)."""
    for value, before in seen:
        kind = type(value)
        if kind is list:
            if len(value) != len(before) or any(a is not b for a, b in zip(value, before)):
                return True
        elif kind is dict:   # the same keys, in the same order, each with the same value
            if list(value) != [key for key, _ in before] or any(
                    value[key] is not item for key, item in before):
                return True
        elif kind is set:
            if value != before:
                return True
        elif (value.shape, value.dtype.str, value.tobytes()) != before:
            return True
    return False


def _array_bytes(value: Any) -> int:
    """The encoded size of the numpy arrays in an answer (at its top, or one level
    down in a tuple or list), without encoding them: base64 takes 4 bytes per 3."""
    items = value if type(value) in (tuple, list) else (value,)
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return 0
    return sum(v.nbytes * 4 // 3 for v in items[:1000] if type(v) is numpy.ndarray)


def write_answer(answers: int, rid: str, answer: dict[str, Any]) -> None:
    """One frame on the answer pipe: ``ID LENGTH``, a newline, the JSON."""
    text = json.dumps(answer, allow_nan=False).encode()   # dumps: C-encoded, unlike dump
    frame = memoryview(b"%s %d\n" % (rid.encode("ascii"), len(text)) + text)
    while frame:
        frame = frame[os.write(answers, frame):]


def serve(workdir: str, answers: int, job: dict[str, Any]) -> None:
    """Import the module, then answer requests until stdin closes (a forked child's
    whole life)."""
    requests = os.fdopen(0, "rb", closefd=False)
    sys.stdin = io.StringIO("")
    sys.path[:] = [job["submission"]] + sys.path
    child = Child(job)
    write_answer(answers, job["load"], child.handle({"op": "load"}))
    for line in requests:   # ids, then a tab and their requests, or ids of a request file
        ids, tab, inline = line.partition(b"\t")
        rids = ids.decode("ascii").split()
        if tab:
            batch = json.loads(inline)
        else:
            with open(os.path.join(workdir, f"req-{rids[0]}.json"), "rb") as f:
                batch = json.loads(f.read())
        for rid, request in zip(rids, batch if len(rids) > 1 else [batch]):
            write_answer(answers, rid, child.handle(request))


def apply_limits(limits: dict[str, int] | None) -> None:
    """Lower this child's own limits (a fork starts its CPU count at zero)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if not limits:
        return
    for which, soft, hard in ((resource.RLIMIT_AS, limits["memory"], limits["memory"]),
                              (resource.RLIMIT_CPU, limits["cpu"], limits["cpu"] + 2),
                              (resource.RLIMIT_FSIZE, limits["fsize"], limits["fsize"]),
                              (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
                              (resource.RLIMIT_CORE, 0, 0)):
        _lower(which, soft, hard)


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the hard limit already in place."""
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


def forked_child(request: dict[str, Any], fds: list[int], control: socket.socket) -> None:
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


PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
POLL_SECONDS = 0.05
KILL_SECONDS = 2.0   # a SIGKILLed child is gone long before (unless stuck in the kernel)


@functools.cache
def _libc() -> Any:
    """The C library, through ctypes (imported only by who calls into it), made once."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    try:
        _libc().prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


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


class Template:
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
        _prctl(PR_SET_DUMPABLE, 0)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
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
        then may a zygote's next template take its sandbox over (Template.retire)."""
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
            forked_child(request, fds, self.control)
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


def import_all(names: Sequence[str]) -> None:
    """Import ``names`` with the collector off: an import makes few cycles, and the
    collector walked its new objects again and again (about a sixth of numpy's and
    sympy's import time).  What a template imports is then frozen, never collected."""
    gc.disable()
    try:
        for name in names:
            importlib.import_module(name)
    finally:
        gc.enable()


def warm_up() -> None:
    """Take one call's path (wire, digest, answer JSON, an error's frame) once here,
    so the lazy imports and caches it fills are the template's, shared by every fork
    (a child that filled them itself paid about 8 ms on its first call)."""
    child = Child({"submission": "/", "output_limit": 100, "answer_limit": 1 << 20})
    values = [1, 2.5, "a", (1,), {"k": [True, None]}]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        values.append(numpy.arange(3.0))
    sympy = sys.modules.get("sympy")
    if sympy is not None:   # its first product imports 16 more modules: ~50 ms a child
        n = sympy.Symbol("n", positive=True)
        values.append(2 * n * n + n / 3)
    encoded = wire.encode(values)
    json.dumps(child.value_answer(wire.decode(encoded), [encoded], {}), allow_nan=False)
    try:
        raise ValueError("warm-up")
    except ValueError as exc:
        error_answer(exc, "/")


# ------------------------------------------------------------ the zygote
# A class's grading worker starts one zygote: this script, as root, outside any
# sandbox, with what a template imports already imported.  For each run it forks
# a process that enters the run's sandbox (the namespaces and root of a bubblewrap
# that only holds them), switches to the run's uid and becomes its template: a
# student's sandbox without a Python start and numpy and sympy imports of its own.

NAMESPACES = ("cgroup", "ipc", "uts", "net", "mnt")   # pid: joined before the fork
OPTIONAL_NAMESPACES = ("cgroup",)   # bubblewrap's --unshare-cgroup-try
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38


def start_zygote(control: socket.socket, layers: list[list[str]]) -> None:
    """Import the first layer of modules and serve; each later layer is a deeper
    zygote, forked before it imports (numpy's pages stay shared), to which requests
    that need its modules are passed.  A numpy-only template's forks have a third of
    the memory to copy and free of those of one that also holds sympy."""
    modules: set[str] = set()
    deeper = None
    for depth, layer in enumerate(layers):
        if depth:
            link, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            if os.fork():
                theirs.close()
                deeper = link
                break
            link.close()
            control.close()
            control = theirs   # its only grader: the zygote one layer up
        import_all(layer)
        modules.update(layer)
        warm_up()
        # what it imported is never collected: a child's collector skips it instead
        # of touching (and so copying) every page of it
        gc.freeze()
    zygote(control, modules, deeper)


def zygote(control: socket.socket, modules: set[str],
           deeper: socket.socket | None = None) -> None:
    """Serve requests until its starter closes ``control``: {"holder": pid, "settings":
    {...}, "preload": [...]} with two descriptors (the template's control socket, its
    console), answered on the socket they came on; and, from its starter, {"adopt":
    true} with one socket: another grader's (a class's workers share one zygote).
    A request for modules it lacks goes to ``deeper`` (a zygote that has them)."""
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)   # it ends with its starter, however that ends
    _OWN_PID_NAMESPACE[:] = [os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)]
    # the templates it forks come back to it when their forker ends (not to the grader)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the worker's Ctrl-C is the worker's
    # an ended template is collected at once: its run's uid is released only after
    wakeup = ChildExits()
    server = _Zygote(control, modules, deeper, wakeup)
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


class _Zygote:
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

    if _libc().setns(fd, CLONE_NEWPID if name == "pid" else 0) != 0:
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
        _lower(which, soft, hard)
    os.nice(settings["nice"])
    if settings.get("cpus"):   # a pinned worker's: its CPUs, which no child may leave
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, settings["cpus"])
    drop_privileges(settings["argv"])
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    apply_filter(settings)
    Template(socket.socket(fileno=control_fd), settings.get("kill_all", False)).run()


PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


def install_filter(program: bytes) -> None:
    """Install the syscall filter compiled on the trusted side (``run.syscalls``) for this
    process and all it starts; a template that cannot ends before any student code runs."""
    import ctypes

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(program, len(program))
    _prctl(PR_SET_NO_NEW_PRIVS, 1)   # as a filter needs, without privileges
    fprog = Program(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    if _libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise SystemExit("attn-grade child: could not install the syscall filter: "
                         + os.strerror(ctypes.get_errno()))


def apply_filter(settings: dict[str, Any]) -> None:
    """The settings' filter (base64), if they have one (none at the level 'none', or where
    the trusted side could not build one: its report says so)."""
    if settings.get("seccomp"):
        import base64

        install_filter(base64.b64decode(settings["seccomp"]))


def main() -> None:
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    as_zygote = "--zygote" in args
    if as_zygote:   # Ctrl-C in grade-all is grade-all's: no traceback from its imports here
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})   # its starter's block
    else:
        drop_privileges(sys.argv[1:])
    with open(args["--settings"], encoding="utf-8") as f:
        settings = json.load(f)
    if settings.get("own_keyrings"):
        _own_keyrings()
    if not as_zygote:   # before any import: the filter is the template's and its children's
        apply_filter(settings)
    import_wire(settings["library_paths"])
    sys.stdin = io.StringIO("")
    control = socket.socket(fileno=settings["control_fd"])
    if as_zygote:
        # its files are read: the folder goes now, whatever ends the worker later
        import shutil

        shutil.rmtree(os.path.dirname(os.path.abspath(__file__)), ignore_errors=True)
        start_zygote(control, settings["layers"])
        return
    import_all(settings.get("preload", ()))
    warm_up()
    # what the template imported is never collected: a child's collector skips it
    # instead of touching (and so copying) every page of it
    gc.freeze()
    Template(control, settings.get("kill_all", False)).run()


if __name__ == "__main__":
    try:
        main()
    except MemoryError:   # no traceback: printing it may need memory too
        os._exit(EXIT_OUT_OF_MEMORY)
