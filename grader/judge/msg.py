"""Failures as data: ``Msg(code, **values)``, and short renderings of values.

The judging stages produce Msg values; ``report.messages`` phrases them in a
language.  ``fmt`` and ``printable`` turn any value into a short, safe text.
"""

import dataclasses
import math
import unicodedata
from fractions import Fraction
from typing import Any

import numpy as np

from ..course.spec import Text


@dataclasses.dataclass(frozen=True)
class Msg:
    code: str
    values: dict

    def __init__(self, code, /, **values):
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "values", values)

    def to_plain(self) -> Any:
        return plain(self)

    @classmethod
    def from_plain(cls, data: Any) -> "Msg":
        msg = unplain(data)
        if not isinstance(msg, Msg):
            raise ValueError("not a message")
        return msg


class Shown(str):
    """A value already phrased for the report (it crossed from a judging fork)."""


MAX_SHOWN = 300     # characters of any one value quoted in feedback


def printable(text: str, limit: int = MAX_SHOWN) -> str:
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


def fmt(value: Any) -> str:
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


def precise(value: object) -> str:
    """``fmt`` with every digit a float has (17 significant), for values that ``fmt``
    would show alike though they differ."""
    if isinstance(value, float) and math.isfinite(value) and value != int(value):
        return repr(value)
    return fmt(value)


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


# ------------------------------------------------------------ crossing a fork

def plain(value: Any) -> Any:
    """A Msg, or any value in one, as JSON-able data; values that are not plain travel
    as the text the report would show (``Shown``), so no reader rebuilds a student's
    object."""
    if isinstance(value, Msg):
        return {"$msg": value.code, "values": {k: plain(v) for k, v in value.values.items()}}
    if isinstance(value, Text):
        return {"$text": [value.zh, value.en]}
    if isinstance(value, Shown):
        return {"$shown": str(value)}
    if value is None or type(value) in (bool, str) or (type(value) is int and abs(value) < 2 ** 53):
        return value
    if type(value) is float and value == value and abs(value) != float("inf"):
        return value
    if type(value) is tuple:
        return {"$tuple": [plain(v) for v in value]}
    if type(value) is list:
        return [plain(v) for v in value]
    return {"$shown": fmt(value)}


def unplain(value: Any) -> Any:
    """The value ``plain`` made: Msg, Text and tuples rebuilt, anything else Shown."""
    if isinstance(value, list):
        return [unplain(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$msg" in value:
        return Msg(str(value["$msg"]), **{str(k): unplain(v)
                                          for k, v in value.get("values", {}).items()})
    if "$text" in value:
        return Text(*map(str, value["$text"]))
    if "$tuple" in value:
        return tuple(unplain(v) for v in value["$tuple"])
    return Shown(str(value.get("$shown", "")))
