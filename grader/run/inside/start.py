"""The sandbox side's start: drop privileges, read the settings, install the
syscall filter, import the wire; then serve as a template (``forks``) or, with
``--zygote``, as a class's zygote (``zygote``, imported only then).
"""

import gc
import io
import json
import os
import signal
import socket
import sys

from . import EXIT_OUT_OF_MEMORY, calls
from .confine import apply_filter, drop_privileges, own_keyrings
from .forks import ForkServer


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
        own_keyrings()
    if not as_zygote:   # before any import: the filter is the template's and its children's
        apply_filter(settings)
    calls.import_wire(settings["library_paths"])
    sys.stdin = io.StringIO("")
    control = socket.socket(fileno=settings["control_fd"])
    if as_zygote:
        import shutil

        from .zygote import start_zygote  # and with it every sibling it needs

        # its files are read: the folder goes now, whatever ends the worker later
        shutil.rmtree(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      ignore_errors=True)
        start_zygote(control, settings["layers"])
        return
    calls.import_all(settings.get("preload", ()))
    calls.warm_up()
    # what the template imported is never collected: a child's collector skips it
    # instead of touching (and so copying) every page of it
    gc.freeze()
    ForkServer(control, settings.get("kill_all", False)).run()


def run() -> None:
    try:
        main()
    except MemoryError:   # no traceback: printing it may need memory too
        os._exit(EXIT_OUT_OF_MEMORY)
