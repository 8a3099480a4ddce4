"""Judging many answers on the trusted side, each bounded in time: in this process
when the answer is plain data (a fork would cost more than the judging), else in a
bounded fork; answers judged before are not judged again (``memo``)."""

import dataclasses
import time
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..course.spec import Check, Exercise, Misconception
from ..run.outcome import CallOutcome
from ..wire import Lazy
from . import bounded, constants, timelimit
from . import compare as cmp
from .check import check_fields, judge
from .msg import Msg
from .results import CheckResult


@dataclasses.dataclass(frozen=True)
class JudgeJob:
    """One answer to judge: its check (of this exercise), the call's outcome, the
    reference's answer, and each wrong version's answer as (misconception, value)."""

    check: Check
    exercise: Exercise
    outcome: CallOutcome
    expected: Any
    wrong: Sequence[tuple[Misconception, Any]] = ()

    def fields(self) -> dict[str, Any]:
        return check_fields(self.check, self.exercise)


# Trusted time on a student's answers (on top of the calls' own limits): one answer's
# judging, all its conversions and wrong-version comparisons together; and all of one
# exercise's judging and hidden tests in a run.  A correct answer takes milliseconds;
# an answer crafted to be slow to read costs its own exercise these seconds at most.
ANSWER_SECONDS = 5.0
EXERCISE_SECONDS = 10.0


def judge_bounded(jobs: Sequence[JudgeJob], budget: float, memo: dict | None = None,
                  allowance: dict[str, float] | None = None
                  ) -> Iterator[tuple[int, CheckResult]]:
    """(index, CheckResult) for each of ``jobs``.

    The judging runs in a fork (see ``bounded``); an answer has ANSWER_SECONDS, and
    its exercise's remaining ``allowance`` (seconds by exercise id, spent here) in all;
    a check whose judging overruns, or kills the fork, fails on its own and the rest
    are judged in a new fork.  ``memo`` (a process that grades many times): judged
    answers by ``memo_key``; an answer judged before is not judged again.
    """
    allowance = {} if allowance is None else allowance
    kept: dict = {} if memo is None else memo
    keys = [memo_key(job.check, job.exercise, job.outcome) if memo is not None else None
            for job in jobs]
    todo = []
    for i, job in enumerate(jobs):
        if keys[i] is not None and keys[i] in kept:
            yield i, CheckResult.from_plain(kept[keys[i]], **job.fields())
        elif judged_here(job):   # as the fork would, through its plain form
            plain = judge_safely(job).to_plain()
            if keys[i] is not None:
                kept[keys[i]] = plain
            yield i, CheckResult.from_plain(plain, **job.fields())
        else:
            todo.append(i)
    for n, result, plain in _judged([jobs[i] for i in todo], budget, allowance):
        if keys[todo[n]] is not None and plain is not None:
            kept[keys[todo[n]]] = plain
        yield todo[n], result


PLAIN_ITEMS = 20_000   # numbers in all of a job's values, at most
PLAIN_DEPTH = 8
PLAIN_TEXT = 1_000     # characters of one string
PLAIN_INT = 1 << 60    # an int's magnitude, under


def judged_here(job: JudgeJob) -> bool:
    """Whether judging ``job`` is safe in the grader's own process, which saves a fork:
    a call that gave no answer (nothing is compared), or a comparison of plain data
    (numbers, short strings, small numeric arrays, sympy numbers that ``constants``
    reads where numbers are compared, and lists, tuples, sets and dicts of them, nothing
    nested deep) that calls no sympy.  A formula or anything larger is judged in a
    bounded fork."""
    if not job.outcome.ok or _same_tree(job.check, job.outcome.value, job.expected):
        return True
    budget = [PLAIN_ITEMS]
    numbers = job.check.pick is None and cmp.reads_numbers(job.check.compare)
    return cmp.judged_plain(job.check.compare) and all(
        _plain(value, budget, 0, numbers) for value in answers_of(job))


def answers_of(job: JudgeJob) -> tuple:
    """Every value judging ``job`` reads: the answer, the expected one, the wrong ones."""
    return (job.outcome.value, job.expected, *(w for _, w in job.wrong))


def _same_tree(check: Check, value: Any, expected: Any) -> bool:
    """A formula that is the very tree of the expected one: it passes without sympy
    (compare.compare), and nothing else of it is looked at (a check that picks an item
    is left to the fork: naming a wrong kind of answer may need sympy)."""
    return check.pick is None and cmp.same_tree(value, expected, check.compare)


def _plain(value: Any, budget: list[int], depth: int, numbers: bool = False) -> bool:
    kind = type(value)
    if kind is Lazy:   # its nodes, about; evaluated in floats, or left to the fork
        budget[0] -= len(value.text) // 8 + 1
        return numbers and budget[0] >= 0 and constants.approximate(value) is not None
    if kind in (bool, int, float, Fraction) or value is None:
        budget[0] -= 1
        # an int under 2**60 hashes to itself: no two collide in a set (compare_set),
        # which a larger one's could, by the thousand (i * (2**61 - 1)): quadratic time
        return budget[0] >= 0 and (kind is not int or abs(value) < PLAIN_INT)
    if kind is str:
        return len(value) <= PLAIN_TEXT
    if kind is np.ndarray:
        budget[0] -= value.size
        return value.dtype.kind in "biuf" and budget[0] >= 0
    if depth >= PLAIN_DEPTH or kind not in (list, tuple, dict, set, frozenset):
        return False
    items = value.items() if kind is dict else ((None, item) for item in value)
    return all((key is None or type(key) in (str, int))
               and _plain(item, budget, depth + 1, numbers) for key, item in items)


def memo_key(check: Check, exercise: Exercise, outcome: CallOutcome) -> tuple | None:
    """What judging an answer depends on: the check (of this copy of its exercise),
    the answer file as written, and what the call printed as the student sees it;
    None for an outcome that is not an answer."""
    if not outcome.ok or not outcome.answer_digest:
        return None
    return (*exercise.copy_key, check.id, outcome.answer_digest, outcome.output,
            outcome.output_dropped)


def _judged(jobs, budget, allowance):
    """(index, CheckResult, its plain form, or None for one not to keep: an overrun) for
    each job; ``allowance`` is spent as the fork reports each answer's seconds."""
    if not bounded.can_fork():
        for i, job in enumerate(jobs):
            result, _, finished = judge_in_time(job, allowance)
            yield i, result, result.to_plain() if finished else None
        return
    start = 0
    while start < len(jobs):
        def work(channel, first=start):
            for i in range(first, len(jobs)):
                result, spent, finished = judge_in_time(jobs[i], allowance)
                channel.emit({"i": i, "result": result.to_plain(), "spent": spent,
                              "finished": finished})

        try:
            for event in bounded.events(work, budget):
                index, spent = event.get("i"), event.get("spent")
                if type(index) is not int or not start <= index < len(jobs) \
                        or type(spent) is not float:
                    raise bounded.Overrun("unreadable event")
                job = jobs[index]
                allowance[job.exercise.id] = _left(allowance, job.exercise) - spent
                plain = event.get("result", {})
                yield index, CheckResult.from_plain(plain, **job.fields()), \
                    plain if event.get("finished") is True else None
                start = index + 1
        except bounded.Overrun as exc:
            job = jobs[start]
            allowance[job.exercise.id] = _left(allowance, job.exercise) - budget
            reason = Msg("judge-timeout", seconds=budget) if exc.why == "timeout" else \
                Msg("unjudgeable")
            yield start, CheckResult(passed=False, lines=(reason,), answered=True,
                                     **job.fields()), None
            start += 1


def _left(allowance: dict[str, float], exercise: Exercise) -> float:
    return allowance.get(exercise.id, EXERCISE_SECONDS)


def judge_in_time(job: JudgeJob, allowance: dict[str, float]) -> tuple[CheckResult, float, bool]:
    """(``judge_safely``'s result, the seconds it took, whether it finished in time): an
    answer has ANSWER_SECONDS, or what is left of its exercise's allowance if less;
    one that takes longer fails (judge-timeout), and once its exercise's allowance is
    spent its answers fail unread (judge-allowance)."""
    left = _left(allowance, job.exercise)
    over = CheckResult(passed=False, answered=True, **job.fields(),
                       lines=(Msg("judge-allowance", seconds=f"{EXERCISE_SECONDS:g}"),))
    if left <= 0:
        return over, 0.0, False
    seconds = min(ANSWER_SECONDS, left)
    start = time.monotonic()
    result = None
    try:
        with timelimit.deadline(seconds):
            result = judge_safely(job)
    except timelimit.TimeLimitExceeded:
        pass
    spent = time.monotonic() - start
    allowance[job.exercise.id] = left - spent
    if result is None or spent >= seconds:
        if seconds < ANSWER_SECONDS:   # cut short by what its exercise had left
            return over, spent, False
        return CheckResult(passed=False, answered=True, **job.fields(),
                           lines=(Msg("judge-timeout", seconds=f"{seconds:g}"),)), spent, False
    return result, spent, True


def judge_safely(job: JudgeJob) -> CheckResult:
    """``judge``, where any failure to read the answer fails only this check."""
    try:
        return judge(job.check, job.exercise, job.outcome, job.expected, job.wrong)
    except Exception:   # an answer no comparator could digest: it is still not right
        return CheckResult(passed=False, lines=(Msg("unjudgeable"),), answered=True,
                           **job.fields())
