"""The ``attn-grade`` group, its exit codes, and what every command shares: the
language of what is said, the course, and writing a file the user named."""

import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from .. import __version__
from ..course import loader as spec_loader
from ..errors import CourseError, ExitCode, Refusal
from ..files import write_atomic
from ..judge.msg import Msg
from ..report import render as report
from .options import program_lang_option
from .usage import asked_lang, format_group_help, usage_error_text

EPILOG = """\b
Exit codes:
  0  every check passed
  1  some check failed (dev check: something to fix)
  2  usage error or a problem in the course (bad YAML, missing file)
  3  internal error in attn-grade (a bug: please report it)
"""


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

    click.echo(report.render(Msg("internal-error"), _asked_lang()) + "\n"
               + traceback.format_exc(), err=True)
    sys.exit(ExitCode.INTERNAL)


class SetOrCommand(click.Group):
    """``attn-grade SET`` grades a set; other first words are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["lang"] = asked_lang(args)   # for an error before click reads --lang
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """``attn-grade day3 ...`` is grade, named ``day3`` (its usage line says so)."""
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return args[0], self.commands["grade"], args
        return super().resolve_command(ctx, args)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """click's usage errors and "Aborted!" said in the user's language."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            click.echo(usage_error_text(exc, asked_lang(argv)), err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            say(Msg("aborted"), asked_lang(argv), err=True)
            sys.exit(ExitCode.FAILED)
        except click.ClickException as exc:
            say(Msg("error-line", text=exc.format_message()), asked_lang(argv), err=True)
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)

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

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not format_group_help(self, ctx, formatter):
            super().format_help(ctx, formatter)


@click.group(cls=SetOrCommand, epilog=EPILOG,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="attn-grade")
@program_lang_option
def main() -> None:
    """Auto-graded exercises on transformer self-attention.

    \b
    attn-grade day3                       grade your stubs in exercises/day3/
    attn-grade day3 --submission DIR      grade another folder of the same files
    attn-grade day3 --json                print a Gradescope results.json
    attn-grade list                       sets and exercises with points
    attn-grade show day3 ID               read an exercise
    attn-grade hint day3 ID               see a hint
    attn-grade quiz day3                  answer the typed-in questions here
    attn-grade watch day3                 grade each time you save
    attn-grade progress                   your progress
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


def caller_warm() -> Any:
    """The grading.Warm this command was called with (``obj``): a grade-worker's,
    which keeps reference answers between students and holds its zygote; else None."""
    from ..grading import Warm

    obj = click.get_current_context().find_root().obj
    return obj if isinstance(obj, Warm) else None


def caller_zygote() -> Any:
    """The zygote of ``caller_warm``'s Warm: an instructor command's templates fork from
    it, each still in a sandbox of its own; else None (each starts its own)."""
    caller = caller_warm()
    return caller.zygote if caller else None


def load_course(course_dir: str | None) -> spec_loader.Course:
    """The course in ``course_dir``, or the one found from the current folder up."""
    return spec_loader.Course(Path(course_dir).resolve()) if course_dir else \
        spec_loader.find_course()


def fail(exc: Exception) -> NoReturn:
    lang = _asked_lang()
    say(Msg("error-line", text=_in_language(exc, lang)), lang, err=True)
    sys.exit(ExitCode.USAGE)


def _in_language(exc: Exception, lang: str | None = None) -> str:
    """A course error that carries its message as a catalogue code, said in ``lang`` or
    the language the command was asked for (``--lang``, else the locale's); any other
    as it is."""
    code = getattr(exc, "msg", None)
    if not isinstance(exc, CourseError) or code is None:
        return str(exc)
    text = exc.where() + report.render(_as_msg(code), lang or _asked_lang())
    return text + (f"\n  ({exc.detail})" if exc.detail else "")


def _as_msg(code: tuple[str, dict[str, Any]]) -> Msg:
    """A (code, values) pair as a Msg, the pairs among its values too (the course stage
    names its messages so, as it cannot make a Msg)."""
    return Msg(code[0], **{k: _as_msg(v) if isinstance(v, tuple) and len(v) == 2
                           and isinstance(v[1], dict) else v for k, v in code[1].items()})


def _asked_lang() -> str:
    """The ``--lang`` of this command line (an error may end it before click reads it)."""
    ctx = click.get_current_context(silent=True)
    return str(ctx.meta["lang"]) if ctx is not None and "lang" in ctx.meta \
        else asked_lang(sys.argv[1:])


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
