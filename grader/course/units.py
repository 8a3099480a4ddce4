"""Byte quantities: '512 KiB', '0.5 MiB', '512 KB', or a whole number of bytes.

Parsed with a regular expression (never eval) and converted with a table of
exact factors: binary prefixes (KiB = 1024 B) are IEC 80000-13's, decimal ones
(KB = 1000 B) the SI's.  No library is needed to know them, and the one used
before (sympy.physics.units) cost more to import than the rest of a grading.
"""

import re
from fractions import Fraction
from typing import Any

_QUANTITY = re.compile(r"^\s*([0-9]+(?:[.,_][0-9]+)*|[0-9]*\.[0-9]+)\s*([A-Za-z]+)?\s*$")
# bytes in one unit, by its lowercase spelling: IEC 80000-13 binary, SI decimal prefixes
BINARY = {"kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "tib": 1024 ** 4,
          "pib": 1024 ** 5}
DECIMAL = {"kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12, "pb": 10 ** 15}
_FACTORS = {"b": 1, "byte": 1, "bytes": 1, **BINARY, **DECIMAL}


class UnitError(ValueError):
    """Text that is not a byte quantity; the message says why, for students.

    ``code`` and ``values`` name the problem for the message catalogue
    (``unit-CODE``), so the student reads it in their language."""

    def __init__(self, message, code="unreadable", **values):
        super().__init__(message)
        self.code, self.values = code, values


def unit_factor(unit: str) -> int:
    """Bytes in one ``unit`` (an int); UnitError, for students, for bits or a unit
    the table does not know."""
    key = unit.lower()
    if unit[-1] == "b" and key[:-1] in ("k", "m", "g", "t", "p", "ki", "mi", "gi", "ti"):
        raise UnitError(f"'{unit}' means bits (lowercase b); write {unit[:-1]}B for bytes",
                        "bits", unit=unit, fixed=f"{unit[:-1]}B")
    if key not in _FACTORS:
        raise UnitError(f"unknown unit '{unit}'; use B, KB, MB, GB, KiB, MiB or GiB",
                        "unknown", unit=unit)
    return _FACTORS[key]


def parse_bytes(value: Any) -> Fraction:
    """A student's byte answer -> Fraction of bytes; UnitError if unreadable."""
    if isinstance(value, bool):
        raise UnitError("a bool is not a number of bytes", "bool")
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if getattr(value, "is_Rational", False):   # sympy.Integer(2)**25 is exact
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UnitError("not a finite number", "nonfinite")
        return Fraction(value)
    if not isinstance(value, str):
        raise UnitError(f"expected an int of bytes or a string like '3 MiB', "
                        f"got {type(value).__name__}", "type", got_type=type(value).__name__)
    match = _QUANTITY.match(value)
    if not match:
        raise UnitError(f"cannot read {_quote(value)}; write a number and a unit, "
                        "e.g. '3 MiB'", "unreadable", got=_quote(value))
    return _number(match.group(1)) * unit_factor(match.group(2) or "B")


def written_precision(value: object) -> Fraction:
    """Half a unit of the last digit a size was written with: '362.4 GiB' -> 0.05 GiB.

    A rounded answer is still the same mistake; numbers (not text) have none."""
    if not isinstance(value, str):
        return Fraction(0)
    match = _QUANTITY.match(value)
    if not match:
        return Fraction(0)
    number = match.group(1).replace(",", "").replace("_", "")
    decimals = len(number.split(".")[1]) if number.count(".") == 1 else 0
    return Fraction(1, 2 * 10 ** decimals) * unit_factor(match.group(2) or "B")


def _number(text):
    """The number in '1,048,576', '1.048.576', '1_048_576' or '0.5' (exactly)."""
    if len(text) > 40:
        raise UnitError("the number has too many digits to be a size in bytes", "too-long")
    for sep in (".", ","):
        groups = text.split(sep)
        if len(groups) > 2 or (sep == "," and len(groups) == 2):
            if not all(len(g) == 3 for g in groups[1:]) or not groups[0]:
                raise UnitError(f"cannot read the number {text!r}: separate thousands "
                                "in groups of three digits", "groups", number=text)
            text = "".join(groups)
    try:
        return Fraction(text.replace("_", ""))
    except ValueError:
        raise UnitError(f"cannot read the number {text!r}", "number", number=text) from None


def _quote(value):
    return repr(value) if len(value) <= 60 else repr(value[:57]) + "..."


def describe_bytes(n: Fraction | float) -> str:
    """'1536 B (1.5 KiB)': the exact count and a binary-prefixed reading."""
    n = Fraction(n)
    shown = str(int(n)) if n.denominator == 1 else f"{float(n):g}"
    for unit, factor in (("TiB", 1024 ** 4), ("GiB", 1024 ** 3), ("MiB", 1024 ** 2),
                         ("KiB", 1024)):
        if abs(n) >= factor:
            return f"{shown} B ({float(n / factor):g} {unit})"
    return f"{shown} B"
