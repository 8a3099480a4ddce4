"""Phrasing: ``Msg`` values (``judge.msg``) as sentences in English and Chinese.

Comparators and the grader produce ``Msg(code, **values)``; only this module
turns them into sentences, from the catalogue ``catalogue/LANG.yaml``.  A
message's ``hidden`` phrasing, where it has one, says what kind of mistake it
is without any value, so it is safe to show on a hidden check; messages
without one are replaced by a fixed sentence there.
"""

import functools
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, overload

from ..course.spec import LANGUAGES, Text
from ..judge.msg import Msg, fmt, precise, printable

CATALOGUE = Path(__file__).with_name("catalogue")


@functools.cache
def catalogue(lang: str) -> dict[str, Any]:
    """The message catalogue of one language: id -> {text, hidden}, from catalogue/LANG.yaml."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((CATALOGUE / f"{lang}.yaml").read_text(encoding="utf-8"), Loader=loader)


@functools.cache
def help_texts(lang: str) -> dict[str, str]:
    """The student commands' help in ``lang``, from catalogue/help.LANG.yaml; {} where
    there is none (English: the commands' own words)."""
    import yaml

    path = CATALOGUE / f"help.{lang}.yaml"
    if not path.is_file():
        return {}
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@overload
def render(msg: Msg, lang: str, hidden: Literal[False] = False) -> str: ...
@overload
def render(msg: Msg, lang: str, hidden: bool) -> str | None: ...
def render(msg: Msg, lang: str, hidden: bool = False) -> str | None:
    """Phrase ``msg`` in ``lang``; on a hidden check, None if it would leak values."""
    entry = catalogue(lang if lang in LANGUAGES else "en")[msg.code]
    template = entry["text"]
    if hidden:
        alt = entry.get("hidden")
        if alt is None:
            return None
        template = template if alt == "same" else alt
    values = {k: _render_value(k, v, lang, hidden) for k, v in msg.values.items()}
    if lang == "en":
        template = _articles(template, values)
    if "expected" in values and values["expected"] == values.get("got"):
        for key in ("expected", "got"):   # a failing answer must not read as the expected
            values[key] = printable(precise(msg.values[key]))
    if "rtol" in msg.values:
        values["rtol_pct"] = _percent(msg.values["rtol"])
    return template.format(**values)


def _articles(template: str, values: dict[str, str]) -> str:
    """'a {got_type}' reads 'an int' before a vowel (a type name is not known in advance)."""
    for key, value in values.items():
        if value[:1].lower() in ("a", "e", "i", "o", "u") and f"a {{{key}}}" in template:
            template = template.replace(f" a {{{key}}}", f" an {{{key}}}")
    return template


VALUE_KEYS = {"expected", "got", "options", "missing", "extra", "key", "point", "shape",
              "index", "error", "atol"}
def _render_value(key, value, lang, hidden):
    if key == "want" and isinstance(value, str) and f"want-{value}" in catalogue(
            lang if lang in LANGUAGES else "en"):
        return render(Msg(f"want-{value}"), lang)
    if isinstance(value, Msg):
        return render(value, lang, hidden) or ""
    if isinstance(value, Text):
        return value.get(lang)
    text = str(value) if isinstance(value, str) and key not in VALUE_KEYS else fmt(value)
    return printable(text)


def _percent(rtol):
    """0.1%, 0.0001%: a percentage written out, never in e-notation."""
    text = format((Decimal(repr(float(rtol))) * 100).normalize(), "f")
    return f"{text}%"
