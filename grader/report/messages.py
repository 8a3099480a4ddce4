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

KIND_WORDS = {   # what a check wants, for "expected a ..." messages
    "number": Text("一个数", "a number"),
    "array": Text("一个数值数组", "an array of numbers"),
    "shape": Text("一个整数元组", "a tuple of ints"),
    "exact": Text("一个普通的值", "a plain value"),
    "choice": Text("一个选项（字符串）", "a choice (a string)"),
    "set": Text("选项的集合或列表", "a set or list of choices"),
    "formula": Text("一个 sympy 表达式", "a sympy expression"),
    "bytes": Text("整数字节数或 '512 KiB' 这样的字符串",
                  "an int of bytes or a string such as '512 KiB'"),
    "dict": Text("一个字典", "a dict"),
    "bool": Text("一个布尔值", "a bool"),
    "plain": Text("一个普通的值（数、字符串、列表、元组、字典、ndarray 或 sympy 表达式）",
                   "a plain value (number, string, list, tuple, dict, ndarray or sympy "
                   "expression)"),
}


CATALOGUE = Path(__file__).with_name("catalogue")


@functools.cache
def catalogue(lang: str) -> dict[str, Any]:
    """The message catalogue of one language: id -> {text, hidden}, from catalogue/LANG.yaml."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((CATALOGUE / f"{lang}.yaml").read_text(encoding="utf-8"), Loader=loader)


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
    if "expected" in values and values["expected"] == values.get("got"):
        for key in ("expected", "got"):   # a failing answer must not read as the expected
            values[key] = printable(precise(msg.values[key]))
    if "rtol" in msg.values:
        values["rtol_pct"] = _percent(msg.values["rtol"])
    return template.format(**values)


VALUE_KEYS = {"expected", "got", "options", "missing", "extra", "key", "point", "shape",
              "index", "error", "atol"}
def _render_value(key, value, lang, hidden):
    if key == "want" and isinstance(value, str) and value in KIND_WORDS:
        return KIND_WORDS[value].get(lang)
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
