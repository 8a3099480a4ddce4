"""A grading as the notebook shows it (``attn-grade SET --json --format notebook``).

The kernel's ``ag.check`` reads this document from the grading process: each
exercise's checks grouped as the terminal groups them (``render.check_groups``),
how many hints are left, and, for a failed visible array check, both arrays and
which cells differ (the ``array-window`` message's values, as ``arrays.window_of`` allows), for an
HTML table. Pure and JSON-able;
a hidden check carries no values, as everywhere.
"""

from collections.abc import Mapping
from typing import Any

from ..judge.msg import Msg
from ..judge.results import ExerciseResult, RunResult
from .arrays import window_lines, window_of
from .messages import render
from .render import check_groups, labels_text, summary


def document(run: RunResult, lang: str, hints_used: Mapping[str, int]) -> dict[str, Any]:
    """The notebook's view of ``run``: totals, and each exercise's grouped lines."""
    return {"score": run.score, "max_score": run.max_score, "summary": summary(run, lang),
            "tags": sorted({t for e in run.exercises for c in e.checks for t in c.tags}),
            "exercises": [_exercise(e, lang, hints_used.get(e.exercise.id, 0))
                          for e in run.exercises]}


def not_graded(message: str) -> dict[str, Any]:
    """The document of a notebook that could not be graded: what to fix."""
    return {"score": 0.0, "max_score": 0.0, "summary": "", "tags": [], "exercises": [],
            "problem": message}


def _exercise(ex_result: ExerciseResult, lang: str, used: int) -> dict[str, Any]:
    exercise = ex_result.exercise
    groups = check_groups(ex_result, lang, _coloured)
    return {"exercise": exercise.id, "file": exercise.file,
            "title": exercise.title.get(lang), "score": ex_result.score,
            "max_score": ex_result.max_score,
            "hints_left": max(0, len(exercise.hints) - used),
            "at_submission": "" if ex_result.checks else render(Msg("at-submission"), lang),
            "groups": [_group(g, lang) for g in groups]}


def _group(group: Any, lang: str) -> dict[str, Any]:
    """A group's lines; a failed visible array check's window as data, its text left out
    but for its header sentence (the cells that differ are marked by colour)."""
    lines, window = list(group.lines), None
    if len(group.checks) == 1 and not group.passed:
        found = window_of(group.checks[0])
        msg = next((m for m in group.checks[0].lines
                    if isinstance(m, Msg) and m.code == "array-window"), None)
        if found is not None and msg is not None:
            drawn = window_lines(msg, lang, _coloured)
            lines = [line for line in lines if line not in drawn] or drawn[:1]
            window = dict(msg.values)   # plain lists (they crossed a fork)
    return {"passed": group.passed, "labels": group.labels,
            "head": labels_text(group.labels, lang), "lines": lines, "window": window}


def _coloured(text: str, **style: Any) -> str:
    """A 'terminal with colour' that adds no codes: the window's header then says the
    differing cells are in colour, as the notebook's table shows them."""
    return text
