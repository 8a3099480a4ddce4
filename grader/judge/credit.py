"""Which passed checks count, and which tags are said: the rules a grading applies once
every check of an exercise is judged (``grading`` calls them in order)."""

import dataclasses

from .msg import Msg


def with_twins(exercise, pairs):
    """A passing visible check counts once one of its twins passes: the same question on
    drawn inputs (``twins``).  A function that returns the answers of the checks a
    student can see, written in, passes those and nothing else; one right in one respect
    (one item of a tuple, one kind of row) keeps the visible checks of that respect."""
    by_id = {c.id: c for c in exercise.checks}
    passed = {r.check: r.passed for r, _ in pairs if r is not None and r.hidden}
    out = []
    for r, points in pairs:
        if r is not None and r.passed and not r.hidden and r.check in by_id:
            twins = twins_of(by_id[r.check], exercise.checks)
            if twins and not any(passed.get(t) for t in twins):
                r = dataclasses.replace(r, passed=False,
                                        lines=(Msg("needs-twin", function=r.function),))
        out.append((r, points))
    return out


def with_told_tags(pairs):
    """A wrong version's tag is said at a check only where the student's answers follow
    that version: where the student gave this very answer to another check of the function
    on which the version's answer differs, the answer is a constant that happens to equal
    the version's here (a function returning 2 is not told it grouped heads round-robin
    because round-robin gives 2 on one input)."""
    answered = [r for r, _ in pairs if r is not None and r.answer_key]
    out = []
    for r, points in pairs:
        if r is not None and r.tags:
            refuted = _constant_tags(r, answered)
            if refuted:
                r = dataclasses.replace(
                    r, tags=tuple(t for t in r.tags if t not in refuted),
                    lines=tuple(m for m in r.lines if not (
                        isinstance(m, Msg) and m.code == "misconception"
                        and m.values.get("tag") in refuted)))
        out.append((r, points))
    return out


def _constant_tags(result, answered):
    """The tags of ``result`` its student's answers do not follow (see with_told_tags)."""
    wrong = dict(result.wrong_keys)
    return {tag for tag in result.tags if tag in wrong and any(
        other is not result and other.function == result.function
        and other.answer_key == result.answer_key
        and dict(other.wrong_keys).get(tag, wrong[tag]) != wrong[tag]
        for other in answered)}


def twins_of(check, checks):
    """The hidden checks a visible one counts by: those it names; else those of its
    function asking for the same part (``pick``); else, where none does, all of its
    function's (none: a function with no hidden check, a typed-in answer, counts alone)."""
    if check.twins:
        return list(check.twins)
    mine = [c for c in checks if c.hidden and c.function == check.function]
    return [c.id for c in mine if c.pick == check.pick] or [c.id for c in mine]


def with_substance(result, yaml_results):
    """A passing property test counts only if the functions it called also pass
    their value checks: zeros trivially satisfy "the future does not change the past"."""
    if not result.passed or result.kind != "pytest":
        return result
    failing = sorted({r.function for r, _ in yaml_results
                      if r is not None and not r.passed and r.function in result.uses})
    if not failing:
        return result
    return dataclasses.replace(result, passed=False,
                               lines=(Msg("needs-value-checks", functions=", ".join(failing)),))
