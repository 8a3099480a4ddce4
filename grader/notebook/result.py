"""What a check cell shows: HTML (JupyterLab, Notebook 7, VS Code) and plain text,
grouped as the terminal groups it, and nothing else.

A Result offers no ``application/json`` representation: JupyterLab prefers that
one to HTML and showed a JSON tree instead of the feedback.  The numbers are
attributes (``score``, ``max_score``, ``exercises``, ``tags``, ``document``).
"""

import html
from typing import Any

from ..judge.msg import Msg
from ..report.arrays import cell_text, window, window_lines
from ..report.messages import render

COLOUR = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#9a6700"}
DIFFERS = "background:#ffd7d5;color:#a40e26;font-weight:bold"


class Result:
    """A grading (or a problem, or hints) as a check cell shows it."""

    def __init__(self, document: dict[str, Any] | None = None, lang: str = "en",
                 notes: tuple[str, ...] = (), lines: tuple[str, ...] = ()):
        self.document = document or {}
        self.lang = lang
        self.notes = list(notes)        # said first: a problem, an unsaved cell
        self.lines = list(lines)        # plain lines (hints)
        self.score = float(self.document.get("score", 0.0))
        self.max_score = float(self.document.get("max_score", 0.0))
        self.tags = list(self.document.get("tags", []))
        self.exercises = {e["exercise"]: (e["score"], e["max_score"])
                          for e in self.document.get("exercises", [])}
        self.summary = self.document.get("summary", "")

    @property
    def passed(self) -> bool:
        return bool(self.exercises) and self.score == self.max_score

    def __repr__(self) -> str:
        out = list(self.notes) + list(self.lines)
        for ex in self.document.get("exercises", []):
            out += _exercise_text(ex, self.lang) + [""]   # a blank line, as the terminal's
        if self.summary:
            out.append(self.summary)
        return "\n".join(out)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        out = [_div(note, f"color:{COLOUR['error']}") for note in self.notes]
        out += [_div(line) for line in self.lines]
        for ex in self.document.get("exercises", []):
            out += _exercise_html(ex, self.lang)
        if self.summary:
            out.append(_div(self.summary, "font-weight:bold;margin-top:.4em"))
        return "<div class='attn-grade'>" + "".join(out) + "</div>"


def _head(ex: dict[str, Any]) -> str:
    return f"{ex['file']} — {ex['title']}   {ex['score']:g} / {ex['max_score']:g}"


def _hints(ex: dict[str, Any], lang: str) -> list[str]:
    if not ex["hints_left"] or ex["score"] >= ex["max_score"]:
        return []
    return [render(Msg("hints-left", count=ex["hints_left"],
                       command=f"ag.hint({ex['exercise']!r})"), lang)]


def _exercise_text(ex: dict[str, Any], lang: str) -> list[str]:
    out = [_head(ex)] + ([f"  {ex['at_submission']}"] if ex["at_submission"] else [])
    for group in ex["groups"]:
        mark = "✓" if group["passed"] else "✗"
        out.append(f"  {mark} {group['head']}: {group['lines'][0]}")
        out += [f"      {line}" for line in group["lines"][1:]]
        if group["window"]:
            out += [f"      {line}" for line in window_lines(_msg(group), lang)]
    return out + [f"  {line}" for line in _hints(ex, lang)]


def _exercise_html(ex: dict[str, Any], lang: str) -> list[str]:
    out = [_div(_head(ex), "font-weight:bold;margin-top:.6em")]
    if ex["at_submission"]:
        out.append(_div(ex["at_submission"], "margin-left:1em"))
    for group in ex["groups"]:
        kind = "pass" if group["passed"] else "fail"
        mark = "✓" if group["passed"] else "✗"
        more = "".join(_div(line, "margin-left:2em;white-space:pre-wrap")
                       for line in group["lines"][1:])
        if group["window"]:
            more += _window_html(_msg(group), lang)
        out.append(f"<div style='margin-left:1em'><span style='color:{COLOUR[kind]}'>"
                   f"{mark}</span> {html.escape(group['head'])}: "
                   f"{html.escape(group['lines'][0])}{more}</div>")
    out += [_div(line, "margin-left:1em;font-style:italic") for line in _hints(ex, lang)]
    return out


def _msg(group: dict[str, Any]) -> Msg:
    return Msg("array-window", **group["window"])


def _window_html(msg: Msg, lang: str) -> str:
    """Both arrays as HTML tables side by side, the differing cells highlighted."""
    shown = window(msg)
    header = window_lines(msg, lang, lambda text, **style: text)[0]
    tables = [_table(render(Msg(title), lang), rows, shown)
              for title, rows in (("array-yours", shown.got), ("array-expected", shown.want))]
    return (_div(header, "margin-left:2em") + "<div style='margin-left:2em;display:flex;"
            "gap:2em;align-items:flex-start'>" + "".join(tables) + "</div>")


def _table(title: str, rows: list, shown: Any) -> str:
    cell = "padding:1px 6px;text-align:right;font-family:monospace"
    head = "".join(f"<th style='{cell};color:#57606a'>{c}</th>" for c in shown.col_numbers)
    body = []
    for r, row, bad in zip(shown.row_numbers, rows, shown.differs):
        label = "" if shown.vector else r
        tds = "".join(f"<td class='{'differs' if b else 'same'}' style='{cell}"
                      f"{';' + DIFFERS if b else ''}'>{html.escape(cell_text(v))}</td>"
                      for v, b in zip(row, bad))
        body.append(f"<tr><th style='{cell};color:#57606a'>{label}</th>{tds}</tr>")
    return (f"<table class='attn-grade-array' style='border-collapse:collapse'>"
            f"<caption style='text-align:left'>{html.escape(title)}</caption>"
            f"<tr><th></th>{head}</tr>{''.join(body)}</table>")


def _div(text: str, style: str = "") -> str:
    return f"<div style='{style}'>{html.escape(text)}</div>"
