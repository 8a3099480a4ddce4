"""Options more than one command takes, each declared once here."""

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from ..course.limits import parse_size
from ..course.spec import LANGUAGES
from ..report import render as report
from ..run import sandbox
from .usage import default_lang

F = TypeVar("F", bound=Callable[..., Any])


class SizeType(click.ParamType):
    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _apply(function: F, *decorators: Callable[[Any], Any]) -> F:
    """``function`` under ``decorators`` (the first one outermost, as written above a
    ``def``)."""
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


course_option = click.option(
    "--course", "course_dir", type=click.Path(exists=True, file_okay=False),
    help="Course folder (default: found from the current folder up).")

student_option = click.option(
    "--student", envvar="ATTN_GRADE_STUDENT", metavar="ID",
    help="Whose numbers exercises with per-student variants use (default: "
         "$ATTN_GRADE_STUDENT; none: the notes' own numbers).")


def lang_option(default: str | None = None,
                help: str = "Language of everything shown (default: from the locale).",
                ) -> Callable[[F], F]:
    """``--lang``: the command gets a language; when none is given, the one given before
    the command's name (``attn-grade --lang zh list``), else the locale's."""
    return click.option(
        "--lang", type=click.Choice(LANGUAGES), default=default,
        show_default=default is not None, help=help,
        callback=lambda ctx, param, value: value or ctx.meta.get("lang") or default_lang())


def program_lang_option(function: F) -> F:
    """The program's own ``--lang`` (``attn-grade --lang zh --help``): its help and the
    command after it speak that language (``SetOrCommand.parse_args`` keeps it in
    ``ctx.meta``, which the command's context shares)."""
    return click.option("--lang", type=click.Choice(LANGUAGES), expose_value=False,
                        help="Language of everything shown (default: from the locale).",
                        )(function)


def isolation_option(
        help: str = "How student code is isolated (default: the strongest available).",
        ) -> Callable[[F], F]:
    """``--isolation LEVEL`` (parameter ``isolation``, None when not given)."""
    return click.option("--isolation", type=click.Choice(sandbox.LEVELS), default=None,
                        help=help)


def require_isolation_option(default: str | None = None) -> Callable[[F], F]:
    """The ``--require-isolation LEVEL`` option (parameter ``required``), for any command.

    grade-all and the Gradescope bundle: ``require_isolation_option(sandbox.BATCH_MINIMUM)``.
    """
    return click.option(
        "--require-isolation", "required", type=click.Choice(sandbox.RANKS), default=default,
        show_default=default is not None,
        help="Refuse (exit 2) to grade with isolation weaker than this; levels, weakest "
             "first: " + " < ".join(sandbox.RANKS) + ". grade-all and Gradescope should "
             f"require {sandbox.BATCH_MINIMUM}.")


def exercise_option(help: str = "Grade only this exercise (repeatable).") -> Callable[[F], F]:
    """``--exercise ID`` (parameter ``exercises``, a tuple)."""
    return click.option("--exercise", "exercises", multiple=True, metavar="ID", help=help)


def hidden_visibility_option(default: str, help: str) -> Callable[[F], F]:
    return click.option("--hidden-visibility", type=click.Choice(report.GRADESCOPE_VISIBILITY),
                        default=default, show_default=True, help=help)


# the limits a command line may set: (Limits field, option, type, help)
LIMITS: tuple[tuple[str, str, Any, str], ...] = (
    ("time", "--time-limit", float, "Seconds of wall time per call."),
    ("import_time", "--import-time-limit", float,
     "Seconds of wall time to import a student's module (default 10)."),
    ("cpu", "--cpu-limit", float, "Seconds of CPU time per student process."),
    ("memory", "--memory-limit", SizeType(), "Memory per student process, e.g. 1GiB."),
    ("output", "--output-limit", SizeType(), "Printed characters kept per call."),
    ("processes", "--process-limit", click.IntRange(1),
     "Processes and threads a run's children may have at once (enforced when they run as "
     "their own uid, and in bubblewrap)."),
    ("tmp", "--tmp-limit", SizeType(),
     "Scratch space: bubblewrap's /tmp, and the work folder beyond one answer "
     "(default 64MiB)."),
)


def limit_options(function: F) -> F:
    """The seven limit options, given to the command as one parameter ``limits``: a dict
    of Limits overrides (a limit not given: None)."""
    names = {field: "limit_" + field for field, *_ in LIMITS}

    @functools.wraps(function)
    def command(*args: Any, **kwargs: Any) -> Any:
        limits = {field: kwargs.pop(name) for field, name in names.items()}
        return function(*args, limits=limits, **kwargs)

    return _apply(cast(F, command), *(click.option(flag, names[field], type=kind, help=text)
                                      for field, flag, kind, text in LIMITS))


submission_folder_option = click.option(
    "--submission", type=click.Path(exists=True, file_okay=False),
    help="The folder you work in (default: exercises/SET/); your progress is kept there.")


def student_loop_options(function: F) -> F:
    """What every command of the student's loop takes besides SET (and ID)."""
    return _apply(function, student_option, lang_option(), course_option,
                  submission_folder_option)
