"""The student's array beside the expected one, for a failed visible array check.

One coordinate and one error say little about a 3×3 attention without its causal
mask; both matrices, the wrong cells marked, show the upper triangle at a glance.
Only a visible check whose answer may be shown gets one (a hidden check's values
never leave the judge), and an array larger than WINDOW×WINDOW shows the window
around its largest error.  The window travels as plain lists inside a Msg, so it
crosses a judging fork as the other feedback does.
"""

from typing import Any

import numpy as np

from ..course.spec import Check
from .msg import Msg
from .values import excess, to_array
from .verdict import NotComparable, Verdict

WINDOW = 8   # rows and columns shown at most


def side_by_side(answer: Any, expected: Any, verdict: Verdict, check: Check) -> Msg | None:
    """``Msg("array-window")`` for a visible check failed on its values, else None."""
    reason = verdict.reason
    if check.hidden or check.reveal != "answer" or reason is None \
            or reason.code != "array-values":
        return None
    try:   # the comparison read both as arrays already; a window never fails a check
        want = to_array(expected)
        got = to_array(answer, want.shape)
    except NotComparable:
        return None
    if want.ndim == 0 or got.shape != want.shape:
        return None
    worst = tuple(reason.values["index"])
    lead, (row, col) = worst[:-2], _last_two(worst)
    got2, want2 = _plane(got, lead), _plane(want, lead)
    differs = excess(got2, want2, check.compare) > 1
    rows = _span(row, got2.shape[0])
    cols = _span(col, got2.shape[1])
    return Msg("array-window", got=_cells(got2[rows, cols]), want=_cells(want2[rows, cols]),
               differs=differs[rows, cols].tolist(), lead=tuple(int(i) for i in lead),
               rows=(rows.start, rows.stop, got2.shape[0]),
               cols=(cols.start, cols.stop, got2.shape[1]), vector=want.ndim == 1)


def _last_two(index: tuple) -> tuple[int, int]:
    return (0, index[0]) if len(index) == 1 else (index[-2], index[-1])


def _plane(array: np.ndarray, lead: tuple) -> np.ndarray:
    """The 2-D plane of ``array`` at the leading index ``lead`` (a vector: one row)."""
    return array.reshape(1, -1) if array.ndim == 1 else array[lead]


def _span(centre: int, size: int) -> slice:
    """WINDOW positions around ``centre`` (all of them when fewer)."""
    start = min(max(centre - WINDOW // 2, 0), max(size - WINDOW, 0))
    return slice(start, min(start + WINDOW, size))


def _cells(array: np.ndarray) -> list[list[float]]:
    return [[float(v) for v in row] for row in array.astype(float)]
