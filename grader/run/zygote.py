"""A class's zygote, the grader's side: its process (started with nothing of the
grader's but ``sandbox`` and ``bubblewrap``, so that grade-all can start it before its
own imports, grader.entry, which take a quarter of a second on one core; the zygote's
numpy and sympy imports run on another meanwhile) and ``Zygote``, which asks it to
fork a run's template into the run's sandbox.  Its inside is ``inside.zygote``.
"""

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from . import bubblewrap, sandbox

ANSWER_SECONDS = 5.0   # for a template's entry, once the zygote has imported
STARTUP_SECONDS = 20.0   # the first request waits for its imports
MESSAGE_BYTES = 4096
# what each layer adds: a template gets the fewest layers that hold what it needs
LAYERS = (("numpy",), ("sympy",))
class Started(NamedTuple):
    process: subprocess.Popen
    sock: socket.socket
    folder: Path
    modules: tuple[str, ...]   # what its layers import


def possible() -> bool:
    """Only as root with bubblewrap: entering another process's namespaces and
    switching uid needs root."""
    return os.geteuid() == 0 and hasattr(socket, "send_fds") and sandbox.bubblewrap_works()


def start(layers: Sequence[Sequence[str]] = LAYERS) -> Started:
    """A zygote importing ``layers`` (a deeper zygote for each layer after the first)."""
    folder = Path(tempfile.mkdtemp(prefix="attn-grade-zygote-"))
    bubblewrap.copy_runtime(folder)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    settings = folder / "settings.json"
    settings.write_text(json.dumps({"library_paths": sandbox.library_paths(),
                                    "control_fd": theirs.fileno(),
                                    "layers": [list(layer) for layer in layers]}))
    # its output goes to its starter's stderr (a worker's: worker-N.log); it removes
    # its folder itself once it has read it, so a killed starter leaves none behind.
    # It starts with SIGINT blocked (kept through exec), until its main() ignores it: a
    # Ctrl-C of the grader's, which reaches it too, ended it before, its folder left
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process = subprocess.Popen(
            [sandbox.interpreter(), "-I", "-S", "-X", "utf8",
             str(folder / bubblewrap.CHILD), "--zygote", "1", "--settings",
             str(settings)],
            cwd="/", stdin=subprocess.DEVNULL, stdout=2,
            # in the grader's session: not a stray for the grader's reaper
            pass_fds=(theirs.fileno(),), env=sandbox.child_env("/"))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    theirs.close()
    return Started(process, ours, folder, tuple(name for layer in layers for name in layer))


_early: Started | None = None


def start_early(layers: Sequence[Sequence[str]] = LAYERS) -> None:
    """Start the zygote grade-all will share among its workers (or a cold grading's,
    with the ``layers`` its exercises need) now, where it can (``take_early`` hands it
    over); it ends with this process if nobody takes it.  bubblewrap's probe runs
    meanwhile: a zygote is no sandbox and runs no student code, and if bubblewrap turns
    out not to work here, no run asks it for one."""
    global _early
    if _early is None and os.geteuid() == 0 and hasattr(socket, "send_fds") \
            and sandbox.bwrap_path():
        sandbox.probe_early()
        _early = start(layers)


def take_early() -> Started | None:
    """The zygote ``start_early`` started, once; None if there is none (or it died)."""
    global _early
    started, _early = _early, None
    if started is not None and started.process.poll() is not None:
        started.sock.close()
        return None
    return started


def started_early() -> bool:
    """Whether ``start_early`` started a zygote nobody took yet."""
    return _early is not None


def drop_early() -> None:
    """Stop an early zygote nobody took (one worker: it starts its own)."""
    started = take_early()
    if started is not None:
        started.sock.close()
        started.process.kill()
        started.process.wait()
        shutil.rmtree(started.folder, ignore_errors=True)   # if it had not read it yet


os.register_at_fork(after_in_child=lambda: globals().update(_early=None))   # its starter's


class Zygote:
    """A class's zygote (a worker's, or grade-all's for all its workers): Python with
    numpy imported, outside any sandbox, that forks each run's template into the run's
    own bubblewrap sandbox (inside.zygote), and a deeper one of its own that also
    has sympy, for the templates that need it.  A class's students then pay no Python
    start and no imports, and most of their children are forks of a Python a third
    the size of one with sympy.

    Only as root with bubblewrap and a uid per run: entering another process's
    namespaces and switching uid needs root; elsewhere each run starts its own
    template as before (``serves``).  It never holds anything of a course: it is
    started before any is loaded, as a fresh interpreter.

    A class's workers share one: grade-all starts it and hands each worker a socket
    of its own (``adopt``); a worker uses it through ``attached``.
    """

    LAYERS = LAYERS
    preload = tuple(name for layer in LAYERS for name in layer)
    SHARED = "ATTN_GRADE_ZYGOTE_FD"   # the variable that gives a worker its socket's number
    process: subprocess.Popen | None

    def __init__(self):
        # grade-all's may have started before its imports (grader.entry)
        started = take_early() or start(self.LAYERS)
        self.process, self.sock, self.folder, self.preload = started
        self._count = 0

    @classmethod
    def possible(cls) -> bool:
        return possible()

    @classmethod
    def attached(cls, fd: int) -> "Zygote":
        """A zygote another process started, through the socket ``fd`` it adopted (never
        inherited further: a sandbox must not reach a process outside every sandbox)."""
        zygote = cls.__new__(cls)
        zygote.sock, zygote._count = socket.socket(fileno=fd), 0
        zygote.sock.set_inheritable(False)
        zygote.process = zygote.folder = None
        return zygote

    def adopt(self) -> socket.socket:
        """A socket of its own for another grader (a worker), to pass on as its
        ``attached`` descriptor; its other end goes to the zygote."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self.sock, [json.dumps({"adopt": True}).encode()],
                            [theirs.fileno()])
        finally:
            theirs.close()
        return ours

    def alive(self) -> bool:
        if self.sock.fileno() < 0:
            return False
        return self.process is None or self.process.poll() is None

    def serves(self, plan: Any, preload: tuple[str, ...] = ()) -> bool:
        return (plan.level == "bubblewrap" and plan.identity is not None
                and set(preload) <= set(self.preload) and self.alive())

    @classmethod
    def modules_for(cls, preload: tuple[str, ...]) -> tuple[str, ...]:
        """What the template that has ``preload`` imported will hold: its layers'."""
        held: list[str] = []
        for layer in cls.LAYERS:
            if set(preload) <= set(held):
                break
            held.extend(layer)
        return tuple(held)

    def enter(self, holder: int, control: int, console: int, settings: dict[str, Any],
              preload: Sequence[str] = ()) -> bool:
        """Fork a template that has ``preload`` imported into the sandbox ``holder``
        holds; whether it went in."""
        self._count += 1
        rid = str(self._count)
        try:
            socket.send_fds(self.sock, [json.dumps({"id": rid, "holder": holder,
                                                    "settings": settings,
                                                    "preload": list(preload)}).encode()],
                            [control, console])
        except OSError:
            return False
        deadline = time.monotonic() + ANSWER_SECONDS + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if not select.select([self.sock], [], [], deadline - time.monotonic())[0]:
                break
            try:
                reply = json.loads(self.sock.recv(MESSAGE_BYTES))
            except (OSError, ValueError):
                break
            if isinstance(reply, dict) and reply.get("id") == rid:
                return reply.get("entered") is True
        self.close()   # silent or confused: no later run trusts it
        return False

    def close(self) -> None:
        """Close our socket; the zygote we started ends with it (an attached one
        goes on serving the others)."""
        self.sock.close()
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
