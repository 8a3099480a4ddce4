"""click's own words in the student's language: a usage error (an unknown option, a
missing argument, a bad value) is said from the catalogue, in ``--lang`` or the
locale's language, under a usage line that names the command as it was typed
(``attn-grade day3``, not ``attn-grade grade``).

A UsageError this module does not know is said with click's English words after a
translated "error:", never lost.
"""

import copy
import os
import re
from collections.abc import Sequence

import click

from ..course.spec import LANGUAGES
from ..judge.msg import Msg
from ..report import messages as report
from ..run import sandbox


class SaidUsageError(click.UsageError):
    """A usage error of the grader's own, carrying its message."""

    def __init__(self, msg: Msg, ctx: click.Context | None = None) -> None:
        super().__init__(msg.code, ctx or click.get_current_context(silent=True))
        self.msg = msg


def default_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def asked_lang(argv: Sequence[str]) -> str:
    """The ``--lang`` of a command line (an error may end it before click reads it),
    else the locale's language."""
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv) and argv[i + 1] in LANGUAGES:
            return argv[i + 1]
        if arg.startswith("--lang=") and arg[7:] in LANGUAGES:
            return arg[7:]
    return default_lang()


def usage_error_text(exc: click.UsageError, lang: str) -> str:
    """What click would print for ``exc``, in ``lang``: usage, where to get help, error."""
    out = []
    ctx = exc.ctx
    if ctx is not None:
        out.append(usage_text(ctx, lang))
        out.append(report.render(Msg("usage-try-help", command=ctx.command_path), lang))
        out.append("")
    out.append(report.render(Msg("error-line", text=report.render(error_msg(exc), lang)),
                             lang))
    return "\n".join(out)


def error_msg(exc: click.UsageError) -> Msg:
    """The message of a usage error click raised (or ours)."""
    if isinstance(exc, SaidUsageError):
        return exc.msg
    if isinstance(exc, click.NoSuchOption):
        hint = Msg("usage-did-you-mean", names=", ".join(exc.possibilities)) \
            if exc.possibilities else ""
        return Msg("usage-no-such-option", name=exc.option_name, hint=hint)
    if isinstance(exc, click.MissingParameter) and exc.param is not None:
        name = _name(exc.param, exc.ctx)
        return Msg("usage-missing-argument", name=name) \
            if isinstance(exc.param, click.Argument) else Msg("usage-missing-option", name=name)
    if isinstance(exc, click.BadOptionUsage) and "requires an argument" in exc.message:
        return Msg("usage-needs-value", name=exc.option_name)
    if isinstance(exc, click.BadParameter) and exc.param is not None:
        return _bad_value(exc, exc.param)
    extra = re.fullmatch(r"Got unexpected extra arguments? \((.*)\)", exc.message)
    if extra:
        return Msg("usage-extra-arguments", args=extra.group(1))
    return Msg("usage-other", text=exc.format_message())


def _bad_value(exc: click.BadParameter, param: click.Parameter) -> Msg:
    """A value click could not take: the value, the option, and what it takes."""
    quoted = re.search(r"'([^']*)'", exc.message)
    name, value = _name(param, exc.ctx), quoted.group(1) if quoted else ""
    if isinstance(param.type, click.Choice):
        return Msg("usage-bad-choice", name=name, value=value,
                   choices=", ".join(map(str, param.type.choices)))
    paths = {"does not exist": Msg("usage-no-path", name=name, value=value),
             "is a file": Msg("usage-path-is-file", name=name, value=value),
             "is a directory": Msg("usage-path-is-folder", name=name, value=value)}
    if isinstance(param.type, click.Path):
        for words, msg in paths.items():
            if words in exc.message:
                return msg
    want = getattr(param.type, "name", "")
    return Msg("usage-bad-value", name=name, value=value,
               want=Msg("usage-want-size") if want == "SIZE" else
               Msg("usage-want-number") if want in ("float", "integer", "integer range")
               else "")


def _name(param: click.Parameter, ctx: click.Context | None) -> str:
    return (param.get_error_hint(ctx) if ctx is not None else str(param.name)).replace("'", "")


class StudentCommand(click.Command):
    """A command of the student's: its help in their language, and a usage line that
    names the set typed (``attn-grade day3``) when run as ``attn-grade SET``."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if ctx.info_name == self.name:
            return super().format_usage(ctx, formatter)
        pieces = [p for p in self.collect_usage_pieces(ctx) if p != "SET"]
        formatter.write_usage(ctx.command_path, " ".join(pieces))

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        lang = ctx.meta.get("lang") or default_lang()
        texts = report.help_texts(lang)
        if not texts:
            return super().format_help(ctx, formatter)
        formatter.write(usage_text(ctx, lang) + "\n")
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(texts[f"cmd.{self.name}"])
        rows = [row for param in self.get_params(ctx)
                if (row := self._help_row(param, ctx, texts)) is not None]
        with formatter.section(texts["usage-section"]):
            formatter.write_dl(rows)
        if self.epilog:
            formatter.write_paragraph()
            formatter.write("\n".join("  " + line for line in texts["epilog"].splitlines())
                            + "\n")

    def _help_row(self, param: click.Parameter, ctx: click.Context,
                  texts: dict[str, str]) -> tuple[str, str] | None:
        """An option's line of help, its words from ``texts``."""
        if not isinstance(param, click.Option) or param.hidden:
            return None
        said = copy.copy(param)
        said.help = texts.get(f"opt.{self.name}.{param.name}",
                              texts[f"opt.{param.name}"]).format(**HELP_VALUES)
        row = said.get_help_record(ctx)
        if row is None:
            return None
        return row[0], row[1].replace("[default: ", f"[{texts['default']}：").replace(
            "[required]", f"[{texts['required']}]")


def format_group_help(group: click.Group, ctx: click.Context,
                      formatter: click.HelpFormatter) -> bool:
    """The whole program's help in the user's language; False where its own words are
    the ones to show (English)."""
    texts = report.help_texts(ctx.meta.get("lang") or default_lang())
    if not texts:
        return False
    formatter.write(usage_text(ctx, ctx.meta.get("lang") or default_lang()) + "\n\n")
    formatter.write("".join(f"  {line}\n" if line else "\n"
                            for line in texts["cmd.main"].splitlines()))
    with formatter.section(texts["usage-section"]):
        formatter.write_dl([(", ".join(p.opts), texts[f"opt.{p.name}"])
                            for p in group.get_params(ctx) if isinstance(p, click.Option)])
    with formatter.section(texts["commands-section"]):
        formatter.write_dl([(name, _short(texts[f"cmd.{name}"]))
                            for name in group.list_commands(ctx)
                            if not group.commands[name].hidden])
    formatter.write_paragraph()
    formatter.write("".join(f"  {line}\n" for line in texts["epilog"].splitlines()))
    return True


def _short(text: str, limit: int = 36) -> str:
    """A command's help to its first sentence (a Chinese one: to its first stop)."""
    first = re.split(r"(?<=[。；])", text, maxsplit=1)[0].rstrip("；")
    return first if len(first) <= limit else first[:limit - 1] + "…"


def usage_text(ctx: click.Context, lang: str) -> str:
    """The usage line of ``ctx``'s command, its first word in ``lang``."""
    formatter = ctx.make_formatter()
    ctx.command.format_usage(ctx, formatter)
    text = formatter.getvalue().rstrip("\n")
    return report.render(Msg("usage-line", usage=text.removeprefix("Usage: ")), lang)


# values the help's words name, as the English help computes them
HELP_VALUES = {"ranks": " < ".join(sandbox.RANKS), "minimum": sandbox.BATCH_MINIMUM}
