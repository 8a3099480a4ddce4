"""What ``dev mutants`` prints: a table per set, then each survivor (and each
equivalent mutant) as a one-line diff; every word from the catalogue."""

from collections.abc import Sequence
from typing import Any

from ..judge.msg import Msg
from ..report.arrays import _width as columns
from ..report.messages import render
from .mutants import EQUIVALENT, KILLED, SURVIVED, Judged, SetMutants

COLUMNS = (Msg("mutants-col-generated"), Msg("mutants-col-killed"), Msg("mutants-col-tagged"),
           Msg("mutants-col-survived"), Msg("mutants-col-equivalent"), Msg("mutants-col-score"))


def tagged(judged: Sequence[Judged], exercise: str) -> int:
    """Killed mutants of ``exercise`` ("" for all) that a misconception tag named."""
    return sum(1 for j in judged if j.status == KILLED and j.tags
               and (j.exercise == exercise or not exercise))


def table(result: SetMutants, lang: str) -> list[str]:
    """The set's table: a row per exercise, its total last."""
    tallies, judged = result.tallies, result.judged
    names = [t.exercise or render(Msg("mutants-all"), lang) for t in tallies]
    first = render(Msg("mutants-col-exercise"), lang)
    width = max(map(columns, [first, *names]))
    head = [render(column, lang) for column in COLUMNS]
    out = [render(Msg("mutants-head", set=result.set_id), lang),
           "  " + _pad(first, width) + "".join("  " + _pad(h, CELL, right=True) for h in head)]
    for tally, name in zip(tallies, names):
        cells = (tally.generated, tally.killed, tagged(judged, tally.exercise), tally.survived,
                 tally.equivalent, f"{tally.score:.1%}")
        out.append("  " + _pad(name, width) + "".join(
            "  " + _pad(str(c), CELL, right=True) for c in cells))
    return out


CELL = 10   # the width of a figure's column


def _pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded to ``width`` terminal columns (a Chinese character takes two)."""
    space = " " * max(0, width - columns(text))
    return space + text if right else text + space


def verdict(result: SetMutants) -> Msg:
    """The set's last line: its score, and its threshold when it has one."""
    figures = {"set": result.set_id, "score": f"{result.score:.1%}",
               "threshold": f"{result.threshold or 0:.1%}"}
    if result.threshold is None:
        return Msg("mutants-score", **figures)
    return Msg("mutants-below", **figures) if result.below else Msg("mutants-reached", **figures)


def details(result: SetMutants, lang: str, killed: bool = False) -> list[str]:
    """Each survivor with the checks it passed, each equivalent mutant; with ``killed``,
    each killed one with the tags that named it (or none: a slip worth a tag)."""
    out = []
    for j in result.judged:
        where = f"{result.set_id}/{j.exercise}: {j.mutant.function}, {j.mutant.diff}"
        if j.status == SURVIVED:
            out.append(f"✗ {where}\n    " + render(Msg(
                "mutants-survived", draw=j.draw, operator=j.mutant.operator,
                checks=", ".join(j.checks)), lang))
        elif j.status == EQUIVALENT:
            out.append(f"· {where}  " + render(Msg("mutants-equivalent",
                                                  operator=j.mutant.operator), lang))
        elif killed:
            said = Msg("mutants-killed-tagged", tags=", ".join(j.tags)) if j.tags else \
                Msg("mutants-killed-untagged")
            out.append(f"  {where}\n    " + render(said, lang) + render(Msg(
                "mutants-killed-by", checks=", ".join(j.checks)), lang))
    return out


def plain(result: SetMutants) -> dict[str, Any]:
    """The set's figures and mutants as JSON-able data (``--json``)."""
    tallies, judged = result.tallies, result.judged
    return {"set": result.set_id, "mutation_score": result.threshold,
            "exercises": [{"exercise": t.exercise, "generated": t.generated,
                           "killed": t.killed, "tagged": tagged(judged, t.exercise),
                           "survived": t.survived, "equivalent": t.equivalent,
                           "score": round(t.score, 4)} for t in tallies if t.exercise],
            "score": round(result.score, 4), "below": result.below,
            "mutants": [j.to_plain() for j in judged]}
