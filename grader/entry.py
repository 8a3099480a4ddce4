"""The program's entry point, kept light: grade-all's zygote (and a cold grading's of
one set: its templates, numpy's and sympy's, fork from it) starts here, before the
grader's own imports (numpy, pytest, click and its modules: a quarter of a second on
one core), so that the zygote's numpy and sympy imports run on the other core
meanwhile, not beside the first students' gradings.  The grader's imports run with
the collector off.
"""

import gc
import os
import sys


def main() -> None:
    vendor = os.environ.get("ATTN_GRADE_VENDOR")
    if vendor:   # packages an export ships (PrairieLearn's): after the image's own
        sys.path.append(vendor)
    if _grades_a_class(sys.argv[1:]):
        from .run import zygote

        zygote.start_early()
    elif _grades_a_set(sys.argv[1:]):
        from .run import zygote

        zygote.start_early(_layers_asked(sys.argv[1:], zygote.LAYERS))
    # an import makes few cycles: with the collector on, it walked the new objects
    # again and again (about a sixth of the import time); once frozen, what was
    # imported is never walked again by a later collection
    gc.disable()
    from .cli import run

    gc.freeze()
    gc.enable()
    run()


def _grades_a_class(args: list[str]) -> bool:
    """``grade-all`` with more than one worker (its workers share a zygote)."""
    if "grade-all" not in args:
        return False
    rest = args[args.index("grade-all") + 1:]
    for i, arg in enumerate(rest):
        if arg in ("-j", "--jobs") and i + 1 < len(rest):
            return rest[i + 1] != "1"
        if arg.startswith(("--jobs=", "-j")) and arg not in ("-j",):
            return arg.split("=", 1)[-1].removeprefix("-j") != "1"
    return (os.cpu_count() or 1) > 1


def _grades_a_set(args: list[str]) -> bool:
    """``attn-grade SET ...``: the first word a set of the course (here, or --course's),
    in bubblewrap unless ``--isolation`` says otherwise (a zygote serves no other level)."""
    if not args or args[0].startswith("-"):
        return False
    isolation = _values(args, "--isolation")
    if isolation and isolation[-1] != "bubblewrap":
        return False
    return os.path.isfile(os.path.join(_course(args), "exercises", args[0], "set.yaml"))


def _values(args: list[str], option: str) -> list[str]:
    """Every value given to ``option`` (``--option VALUE`` or ``--option=VALUE``)."""
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == option] + \
        [arg.split("=", 1)[1] for arg in args if arg.startswith(option + "=")]


def _course(args: list[str]) -> str:
    return (_values(args, "--course") or ["."])[-1]


def _layers_asked(args: list[str], layers: tuple) -> tuple:
    """The zygote's layers for ``attn-grade SET [--exercise ID ...]``: without sympy's
    where the set's cache says none of the exercises asked needs it, so that a cold
    grading of such an exercise imports no sympy on the other core (a third of a second
    of CPU; on one core, of the grading's time); all of them where the cache cannot
    tell.  A student's file that imports sympy then gets a template of its own."""
    from pathlib import Path

    from .course import cache

    only = _values(args, "--exercise")
    try:
        modules = cache.child_modules(Path(_course(args)).resolve(), args[0], only or None)
    except (OSError, ValueError):
        modules = None
    if modules is None:
        return layers
    return tuple(layer for layer in layers if set(layer) <= {"numpy", *modules})
