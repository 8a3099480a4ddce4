"""The ``attn-grade`` command: a thin click layer over plain functions.

``common``: the group, its exit codes (``errors.ExitCode``: 0 every check passed, 1
some check failed, 2 usage or course error, 3 internal error) and what every command
shares; ``options``: the options more than one command takes; ``student``: grade and
the student's loop; ``quiz``: the quiz of typed-in answers; ``instructor``: the
instructor's commands; ``worker``: grade-all's hidden grade-worker.
"""

import os
import sys
from typing import Any, NoReturn

from . import instructor, quiz, student  # noqa: F401  (their commands join the group)
from .common import main
from .worker import serve_as_worker

__all__ = ["main", "run", "serve_as_worker"]


def run() -> NoReturn:
    """The program's entry point: ``main``, then an exit that skips the interpreter's
    teardown of its modules (tens of ms with numpy, sympy and pytest loaded).  Every
    command closes its own folders and processes before it returns; output is flushed
    here.  ``main`` itself (tests, a grade-worker) exits as usual."""
    try:
        main()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):   # sys.exit("message"), as Python would show it
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe: nothing more can be said there
            pass
    os._exit(code)
