"""The zygote's process: started with nothing of the grader's but ``sandbox``, so that
grade-all can start it before its own imports (grader.entry), which take a quarter of
a second on one core; the zygote's numpy and sympy imports run on another meanwhile.
``template.Zygote`` talks to it.
"""

import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from . import sandbox

# what each layer adds: a template gets the fewest layers that hold what it needs
LAYERS = (("numpy",), ("sympy",))
# the sandbox's side (the package ``inside``), copied whole beside each run (and each
# zygote) into a folder of this name, which marks its processes' command lines; the
# wire module beside it under the name the package imports it by
CHILD = "_attn_grade_child"
WIRE_COPY = "_attn_grade_wire.py"
INSIDE = Path(__file__).with_name("inside")
WIRE = Path(__file__).parents[1] / "wire.py"


@functools.cache
def _inside_files() -> tuple[Path, ...]:
    return tuple(sorted(INSIDE.glob("*.py")))


def copy_runtime(folder: Path) -> list[Path]:
    """The sandbox's side into ``folder``: the package's files (no bytecode: the
    sandbox compiles them, as it compiled the one script before) and the wire module;
    what it made, folders first."""
    package = folder / CHILD
    package.mkdir()
    made = [package]
    for source in _inside_files():
        shutil.copyfile(source, package / source.name)
        made.append(package / source.name)
    shutil.copyfile(WIRE, folder / WIRE_COPY)
    return [*made, folder / WIRE_COPY]


class Started(NamedTuple):
    process: subprocess.Popen
    sock: socket.socket
    folder: Path


def possible() -> bool:
    """Only as root with bubblewrap: entering another process's namespaces and
    switching uid needs root."""
    return os.geteuid() == 0 and hasattr(socket, "send_fds") and sandbox.bubblewrap_works()


def start(layers: Sequence[Sequence[str]] = LAYERS) -> Started:
    """A zygote importing ``layers`` (a deeper zygote for each layer after the first)."""
    folder = Path(tempfile.mkdtemp(prefix="attn-grade-zygote-"))
    copy_runtime(folder)
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
             str(folder / CHILD), "--zygote", "1", "--settings",
             str(settings)],
            cwd="/", stdin=subprocess.DEVNULL, stdout=2,
            # in the grader's session: not a stray for the grader's reaper
            pass_fds=(theirs.fileno(),), env=sandbox.child_env("/"))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    theirs.close()
    return Started(process, ours, folder)


_early: Started | None = None


def start_early() -> None:
    """Start the zygote grade-all will share among its workers now, where it can
    (``take_early`` hands it over); it ends with this process if nobody takes it."""
    global _early
    if _early is None and possible():
        _early = start()


def take_early() -> Started | None:
    """The zygote ``start_early`` started, once; None if there is none (or it died)."""
    global _early
    started, _early = _early, None
    if started is not None and started.process.poll() is not None:
        started.sock.close()
        return None
    return started


def drop_early() -> None:
    """Stop an early zygote nobody took (one worker: it starts its own)."""
    started = take_early()
    if started is not None:
        started.sock.close()
        started.process.kill()
        started.process.wait()
        shutil.rmtree(started.folder, ignore_errors=True)   # if it had not read it yet


os.register_at_fork(after_in_child=lambda: globals().update(_early=None))   # its starter's
