"""A failed visible array check's window (``judge.window``) as a student reads it:
their array beside the expected one, the cells that differ in colour on a terminal
that shows it, else marked with a ``*`` (so a log reads the same).

``window_of`` gives the data itself (both arrays, which cells differ, their row and
column numbers) for a renderer of another kind, such as the notebook's HTML table.
"""

import dataclasses
import math
import unicodedata
from collections.abc import Callable
from typing import Any

from ..judge.msg import Msg
from ..judge.results import CheckResult
from .messages import render

MARK = "*"
GAP = "    "   # between the two arrays


@dataclasses.dataclass(frozen=True)
class Window:
    """Both arrays of a window, the cells that differ, and where it lies in the answer."""

    got: list       # rows of numbers (a non-finite one: its text)
    want: list
    differs: list   # rows of bools
    row_numbers: list[int]
    col_numbers: list[int]
    shape: tuple[int, int]   # of the plane the window is cut from
    lead: tuple              # the index of that plane in a larger array, () if none
    vector: bool             # the answer is 1-D: one row, no row number

    @property
    def whole(self) -> bool:
        return len(self.row_numbers) == self.shape[0] and len(self.col_numbers) == self.shape[1]


def window(msg: Msg) -> Window:
    values = msg.values
    (r0, r1, rows), (c0, c1, cols) = values["rows"], values["cols"]
    return Window(list(values["got"]), list(values["want"]), list(values["differs"]),
                  list(range(r0, r1)), list(range(c0, c1)), (rows, cols),
                  tuple(values["lead"]), bool(values["vector"]))


def window_of(result: CheckResult) -> Window | None:
    """The window of a failed visible check, or None (a hidden check never has one)."""
    if result.hidden:
        return None
    return next((window(m) for m in result.lines
                 if isinstance(m, Msg) and m.code == "array-window"), None)


def window_lines(msg: Msg, lang: str, style: Callable[..., str] | None = None) -> list[str]:
    """The header sentence and the two arrays side by side.  ``style``: click.style on
    a terminal with colour (the differing cells in red), None for plain text (marked)."""
    shown = window(msg)
    mark = Msg("array-mark-color") if style else Msg("array-mark-star", mark=MARK)
    out = [render(Msg("array-window", part=_part(shown), mark=mark), lang)]
    texts = [[cell_text(v) for v in row] for row in shown.got + shown.want]
    width = max([_width(t) for row in texts for t in row]
                + [len(str(c)) for c in shown.col_numbers])
    label = 0 if shown.vector else max(len(str(r)) for r in shown.row_numbers)
    block = len(shown.col_numbers) * (width + 2) - 1   # a cell, its mark, a space between
    titles = [render(Msg("array-yours"), lang), render(Msg("array-expected"), lang)]
    left = max([block] + [_width(t) for t in titles])

    def cells(row: list, bad: list) -> str:
        return " ".join(_marked(cell_text(v).rjust(width), b, style) for v, b in zip(row, bad))

    numbers = " ".join(f"{c:>{width}} " for c in shown.col_numbers)
    indent = "  " + " " * label + "  "
    out.append(indent + titles[0] + " " * (left - _width(titles[0])) + GAP + titles[1])
    out.append((indent + numbers + " " * (left - block) + GAP + numbers).rstrip())
    for r, got, want, bad in zip(shown.row_numbers, shown.got, shown.want, shown.differs):
        row = "" if shown.vector else str(r)
        out.append(f"  {row:>{label}}  {cells(got, bad)}{' ' * (left - block)}{GAP}"
                   f"{cells(want, bad)}".rstrip())
    return out


def _part(shown: Window) -> Msg | str:
    """Which rows and columns are shown, when not all of them."""
    if shown.whole and not shown.lead:
        return ""
    plane = Msg("array-window-plane", lead=shown.lead) if shown.lead else ""
    return Msg("array-window-part", r0=shown.row_numbers[0], r1=shown.row_numbers[-1],
               c0=shown.col_numbers[0], c1=shown.col_numbers[-1], rows=shown.shape[0],
               cols=shown.shape[1], plane=plane)


def cell_text(value: Any) -> str:
    """A number as the window shows it (the notebook's table too)."""
    if not isinstance(value, float) or not math.isfinite(value):
        return str(value)
    if value and not 1e-4 <= abs(value) < 1e5:
        return f"{value:.3e}"
    return f"{value:.4f}"


def _marked(text: str, differs: bool, style: Callable[..., str] | None) -> str:
    if style is None:
        return text + (MARK if differs else " ")
    return (style(text, fg="red", bold=True) if differs else text) + " "


def _width(text: str) -> int:
    """Columns ``text`` takes on a terminal (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
