"""The ``attn-grade`` group, its exit codes, and what every command shares: the
language of what is said, the course, and writing a file the user named."""

import errno
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from .. import __version__
from ..course import loader as spec_loader
from ..course.spec import LANGUAGES
from ..errors import CourseError, ExitCode, Refusal
from ..files import write_atomic
from ..judge.msg import Msg
from ..report import render as report

EPILOG = """\b
Exit codes:
  0  every check passed
  1  some check failed (dev check: something to fix)
  2  usage error or a problem in the course (bad YAML, missing file)
  3  internal error in attn-grade (a bug: please report it)
"""


def default_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def say(msg: Msg, lang: str, err: bool = False) -> None:
    """Print ``msg`` as the catalogue phrases it in ``lang``."""
    click.echo(report.render(msg, lang), err=err)


def colour() -> bool:
    """Whether what is printed may have colours: a terminal, and no NO_COLOR set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


YES = ("y", "yes", "是", "好", "要", "对")


def confirm(question: Msg, lang: str) -> bool:
    """A yes/no question in ``lang``; only a yes (in either language) is a yes: an empty
    line, Ctrl-D or Ctrl-C is a no."""
    try:
        answer = click.prompt(report.render(question, lang), default="", show_default=False,
                              prompt_suffix=" ")
    except click.Abort:
        click.echo("")
        return False
    return answer.strip().lower() in YES


def internal_error() -> NoReturn:
    """The traceback of a bug in the grader, and exit 3: never a failed check's 1, nor a
    course error's 2."""
    import traceback

    click.echo(report.render(Msg("internal-error"), default_lang()) + "\n"
               + traceback.format_exc(), err=True)
    sys.exit(ExitCode.INTERNAL)


class SetOrCommand(click.Group):
    """``attn-grade SET`` grades a set; other first words are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["grade", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """A bug in the grader must never look like a failed check (exit 1)."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort,
                SystemExit):
            raise
        except CourseError as exc:   # the one place course errors become exit 2
            fail(exc)
        except Refusal as exc:       # said in the user's language already
            click.echo(str(exc), err=True)
            sys.exit(ExitCode.USAGE)
        except BrokenPipeError:   # `attn-grade list | head`: the reader left; end quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(ExitCode.PASSED)
        except Exception:
            internal_error()

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("attn-grade", "SET [OPTIONS]  |  attn-grade COMMAND [ARGS]")


@click.group(cls=SetOrCommand, epilog=EPILOG,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="attn-grade")
def main() -> None:
    """Auto-graded exercises on transformer self-attention.

    \b
    attn-grade day3                       grade your stubs in exercises/day3/
    attn-grade day3 --submission DIR      grade another folder of the same files
    attn-grade day3 --json                print a Gradescope results.json
    attn-grade list                       sets and exercises with points
    \b
    For instructors:
    attn-grade new SET ID                 start an exercise (YAML, stub, reference,
                                          hidden checks)
    attn-grade dev check [SET]            prove stubs fail, references pass, wrong
                                          versions are caught, doing nothing scores
                                          nothing
    attn-grade release SET -o DIR         student bundle without solutions
    attn-grade grade-all SET DIR -o OUT   grade a class into a CSV gradebook
    attn-grade report OUT                 the class report: scores, misconceptions
    attn-grade export gradescope SET      a Gradescope autograder.zip
    """


def load_course(course_dir: str | None) -> spec_loader.Course:
    """The course in ``course_dir``, or the one found from the current folder up."""
    return spec_loader.Course(Path(course_dir).resolve()) if course_dir else \
        spec_loader.find_course()


def fail(exc: Exception) -> NoReturn:
    click.echo(f"error: {_in_language(exc)}", err=True)
    sys.exit(ExitCode.USAGE)


def _in_language(exc: Exception) -> str:
    """A course error that carries its message as a catalogue code, said in the language
    the command was asked for (``--lang``, else the locale's); any other as it is."""
    code = getattr(exc, "msg", None)
    if not isinstance(exc, CourseError) or code is None:
        return str(exc)
    text = exc.where() + report.render(Msg(code[0], **code[1]), _asked_lang())
    return text + (f"\n  ({exc.detail})" if exc.detail else "")


def _asked_lang() -> str:
    """The ``--lang`` of this command line (an error may end it before click reads it)."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv) and argv[i + 1] in LANGUAGES:
            return argv[i + 1]
        if arg.startswith("--lang=") and arg[7:] in LANGUAGES:
            return arg[7:]
    return default_lang()


def write_output(output: str | Path, data: str | bytes, lang: str) -> None:
    """A file the user named (``-o``): its folder made if missing; a failure said in
    ``lang``, not a traceback."""
    path = Path(output)
    try:
        _not_a_folder(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError as exc:
        _cannot_write(path, exc, lang)


def _not_a_folder(path: Path) -> None:
    """Raise EISDIR for an existing folder named as ``-o``'s file (said in --lang, not in
    click's English; checked before a run, and again before the write)."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))


def output_checked(output: str | None, lang: str) -> None:
    """A folder named as ``-o``'s file refused at once, before any work."""
    if output:
        try:
            _not_a_folder(Path(output))
        except OSError as exc:
            _cannot_write(Path(output), exc, lang)


def _cannot_write(path: Path, exc: OSError, lang: str) -> NoReturn:
    code = errno.errorcode.get(exc.errno or 0, "")
    why = WRITE_FAILURES.get(code, Msg("cannot-write", code=code or type(exc).__name__))
    click.echo(report.render(Msg(why.code, **why.values, path=str(path)), lang), err=True)
    sys.exit(ExitCode.USAGE)


# why a file could not be written, by errno name (else the name is said)
WRITE_FAILURES = {"EACCES": Msg("cannot-write-denied"), "EPERM": Msg("cannot-write-denied"),
                  "EROFS": Msg("cannot-write-read-only"), "ENOSPC": Msg("cannot-write-full"),
                  "EDQUOT": Msg("cannot-write-full"), "EISDIR": Msg("cannot-write-folder"),
                  "ENOTDIR": Msg("cannot-write-not-folder"),
                  "EEXIST": Msg("cannot-write-not-folder")}
