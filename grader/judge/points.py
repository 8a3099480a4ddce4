"""Points: the one documented rule that turns an exercise total into check points.

A check with ``points`` keeps them; the rest of the exercise total is shared
equally by the checks without, in hundredths, the last of them taking what
rounding left over, so that check points always add up to the total.  Explicit
points may not exceed the total, and if every check is explicit they must add up
to it exactly.
"""

import math
from collections.abc import Iterable, Sequence
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from typing import Any

from ..errors import CourseError


def add_points(values: Iterable[float]) -> float:
    """The sum of point values as written: 2.2 + 5.9 + 5.9 is 14.0, not 14.000000000000002.

    Each float is read as the shortest decimal that prints it (what the YAML said,
    or a share in hundredths) and the decimals are added exactly (Decimal with room
    for any float's digits: as exact as Fractions, a tenth of their cost).
    """
    total = Decimal(0)
    for v in values:
        total = _EXACT.add(total, Decimal(repr(float(v))))
    return float(total)


# wider than any sum of floats' shortest decimals (at most ~330 digits each side of the point)
_EXACT = Context(prec=1000, Emax=MAX_EMAX, Emin=MIN_EMIN)


def resolve_points(total: float, explicit: Sequence[float | None], where: Any) -> list[float]:
    """``explicit``: per check its points or None -> the points of every check."""
    fixed = add_points(p for p in explicit if p is not None)
    open_count = sum(1 for p in explicit if p is None)
    rest = total - fixed
    if rest < -1e-9 or (open_count == 0 and abs(rest) > 1e-9 and explicit):
        raise CourseError(f"the checks' points add up to {fixed:g} but the exercise is "
                          f"worth {total:g}", where,
                          hint="fix 'points' of the exercise or of its checks")
    share = math.floor(rest / open_count * 100) / 100 if open_count else 0.0
    last = round(rest - share * (open_count - 1), 2)
    out, seen = [], 0
    for p in explicit:
        if p is None:
            seen += 1
            p = last if seen == open_count else share
        out.append(float(p))
    return out
