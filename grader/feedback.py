"""Feedback as data (``Msg``) and its phrasing in English and Chinese.

Comparators and the grader produce ``Msg(code, **values)``; only this module
turns them into sentences, from the catalogue ``messages/LANG.yaml``.  A
message's ``hidden`` phrasing, where it has one, says what kind of mistake it
is without any value, so it is safe to show on a hidden check; messages
without one are replaced by a fixed sentence there.
"""

import dataclasses
import functools
import math
import unicodedata
from fractions import Fraction
from pathlib import Path

import numpy as np

from .spec import Text


@dataclasses.dataclass(frozen=True)
class Msg:
    code: str
    values: dict

    def __init__(self, code, /, **values):
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "values", values)


class Shown(str):
    """A value already phrased for the report (it crossed from a judging fork)."""


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



LANGUAGES = ("en", "zh")
MESSAGES = Path(__file__).with_name("messages")


@functools.cache
def catalogue(lang):
    """The message catalogue of one language: id -> {text, hidden}, from messages/LANG.yaml."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((MESSAGES / f"{lang}.yaml").read_text(encoding="utf-8"), Loader=loader)


def render(msg, lang, hidden=False):
    """Phrase ``msg`` in ``lang``; on a hidden check, None if it would leak values."""
    entry = catalogue(lang if lang in LANGUAGES else "en")[msg.code]
    template = entry["text"]
    if hidden:
        alt = entry.get("hidden")
        if alt is None:
            return None
        template = template if alt == "same" else alt
    values = {k: _render_value(k, v, lang, hidden) for k, v in msg.values.items()}
    if "rtol" in msg.values:
        values["rtol_pct"] = _percent(msg.values["rtol"])
    return template.format(**values)


VALUE_KEYS = {"expected", "got", "options", "missing", "extra", "key", "point", "shape",
              "index", "error", "atol"}
MAX_SHOWN = 300     # characters of any one value quoted in feedback


def _render_value(key, value, lang, hidden):
    if key == "want" and isinstance(value, str) and value in KIND_WORDS:
        return KIND_WORDS[value].get(lang)
    if isinstance(value, Msg):
        return render(value, lang, hidden) or ""
    if isinstance(value, Text):
        return value.get(lang)
    text = str(value) if isinstance(value, str) and key not in VALUE_KEYS else fmt(value)
    return printable(text)


def printable(text, limit=MAX_SHOWN):
    """``text`` safe for a terminal, a JSON file and a CSV: control and format
    characters and lone surrogates escaped, at most ``limit`` characters."""
    out = []
    for ch in text[:limit + 1]:
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"):
            out.append(ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                       if category != "Cs" else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    shown = "".join(out)
    return shown if len(text) <= limit else shown[:limit] + "…"


def _percent(rtol):
    return f"{float(rtol) * 100:g}%"


def fmt(value):
    """A short, readable rendering of an answer or expected value."""
    if isinstance(value, Shown):
        return str(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, np.ndarray):
        if value.size > 64:
            return f"array of shape {tuple(value.shape)}"
        text = np.array2string(value, precision=4, suppress_small=True, separator=", ")
        return " ".join(text.split())
    if isinstance(value, tuple):
        inner = _items(value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + _items(value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + _items(sorted(value, key=str)) + "}"
    if isinstance(value, dict):
        return "{" + _items(value.items(), pairs=True) + "}"
    if isinstance(value, str):
        return repr(value[:MAX_SHOWN] + "…") if len(value) > MAX_SHOWN else repr(value)
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _items(items, pairs=False, most=12):
    """Comma-separated items, the first ``most`` of them (long answers are cut)."""
    shown = []
    for i, item in enumerate(items):
        if i == most:
            shown.append("…")
            break
        shown.append(f"{fmt(item[0])}: {fmt(item[1])}" if pairs else fmt(item))
    return ", ".join(shown)


def _float(x):
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x)) if abs(x) >= 1e4 else f"{x:g}"
    return f"{x:.4g}"
