"""One check: a call outcome and the expected value -> a CheckResult.

Failed calls become feedback lines; answers are compared on the trusted side;
a failed answer is matched against the exercise's known wrong answers.
"""

import builtins
import time
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..course.limits import Limits
from ..course.spec import Check, Exercise, Misconception, Text
from ..course.units import UnitError, parse_bytes, written_precision
from ..run.outcome import ANSWER_STREAM, FOLDER_TAMPERED, REQUESTS_UNREAD, CallOutcome
from ..wire import materialized
from . import bounded, timelimit, values
from . import compare as cmp
from .msg import Msg
from .results import CheckResult, misconception_line, outcome_from_plain, outcome_to_plain
from .verdict import NotComparable, Verdict

PLAIN_VALUE = "plain"   # phrased by the catalogue's want-plain


def outcome_lines(outcome: CallOutcome, function: str, file: str, limits: Limits,
                  want: str = PLAIN_VALUE) -> list[Msg]:
    """Feedback for a call that did not return a usable answer."""
    status, err = outcome.status, outcome.error
    where = Msg("where", file=err["file"], line=err["line"]) if err.get("line") else ""
    if status == "error":
        kind = err.get("type", "Exception")
        if kind == "NotImplementedError":
            return [Msg("not-implemented", function=function)]
        if kind == "MemoryError":
            return [Msg("memory", limit=_size(limits.memory))]
        if kind == "SystemExit":
            return [Msg("exited", code=err.get("message") or "0")]
        if kind in ("SyntaxError", "IndentationError", "TabError"):
            return [Msg("syntax-error", file=err.get("file", file),
                        message=err.get("message", ""), where=where)]
        return [Msg("student-error", function=function, type=kind, safe_type=safe_type(kind),
                    message=err.get("message", ""), where=where)]
    if status == "missing":
        return [Msg("missing-function", function=function, file=file)]
    if status == "unsupported":
        return [Msg("unsupported", function=function, type_name=outcome.detail, want=want)]
    if status == "too_large":
        return [Msg("too-large", function=function, size=outcome.detail,
                    limit=_size(limits.answer))]
    if status == "timeout":
        return [Msg("timeout", function=function, seconds=limits.time)]
    if status == "crashed":
        return [_crash_line(outcome.crash, limits)]
    if status == "missing_file":
        return [Msg("missing-file", file=file)]
    if status == "skipped":
        return [Msg("skipped")]
    return [BAD_ANSWER_LINES.get(outcome.detail or "", Msg("bad-answer"))]


# a BAD_ANSWER's reason, phrased in the student's language (else: not data it reads)
BAD_ANSWER_LINES = {ANSWER_STREAM: Msg("bad-answer-stream"),
                    REQUESTS_UNREAD: Msg("bad-answer-unread"),
                    FOLDER_TAMPERED: Msg("bad-answer-folder")}


def load_lines(outcome: CallOutcome, file: str, limits: Limits) -> list[Msg]:
    """Feedback when the module itself could not be imported."""
    if outcome.status == "timeout":
        return [Msg("import-timeout", file=file, seconds=limits.import_time)]
    if outcome.status == "error" and outcome.error.get("type") not in (
            "SyntaxError", "IndentationError", "TabError", "MemoryError"):
        err = outcome.error
        where = Msg("where", file=err["file"], line=err["line"]) if err.get("line") else ""
        kind = err.get("type", "Exception")
        return [Msg("import-error", file=file, type=kind, safe_type=safe_type(kind),
                    message=err.get("message", ""), where=where)]
    return outcome_lines(outcome, "import", file, limits)


BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException))


def safe_type(name: str) -> str | Text:
    """An exception's type name fit for a hidden check: a student's own class name
    could spell out the hidden inputs, so only Python's built-in names are kept."""
    if name in BUILTIN_EXCEPTIONS:
        return name
    return Text("一个异常", "an exception")


def _crash_line(crash, limits):
    """The line for a ``run_outcome.Crash`` (None: a crash nobody diagnosed)."""
    if crash is None:
        return Msg("exited", code="?")
    if crash.kind == "signal":
        return Msg("crashed", signal=crash.signal)
    if crash.kind == "exit":
        return Msg("exited", code=str(crash.exit_code))
    if crash.limit == "cpu":
        return Msg("cpu", seconds=limits.cpu)
    if crash.limit == "memory":
        return Msg("memory", limit=_size(limits.memory))
    if crash.limit == "disk":
        return Msg("disk", limit=_size(limits.tmp))
    return Msg("processes", limit=str(crash.value))


def _size(n):
    from ..course.limits import describe_size

    return describe_size(n)


def pick(value: Any, key: Any) -> Any:
    """Item ``key`` of a tuple/list/dict answer; NotComparable otherwise."""
    if key is None:
        return value
    if isinstance(value, dict) and key in value:
        return value[key]
    if isinstance(value, (tuple, list)) and isinstance(key, int) \
            and -len(value) <= key < len(value):
        return value[key]
    # a formula is named by its sympy type (Mul, Symbol), not as the Lazy it was read as
    raise NotComparable(Msg("got-type", got_type=type(materialized(value)).__name__,
                                want=f"tuple or dict with item {key!r}"))


# Trusted time on a student's answers (on top of the calls' own limits): one answer's
# judging, all its conversions and wrong-version comparisons together; and all of one
# exercise's judging and hidden tests in a run.  A correct answer takes milliseconds;
# an answer crafted to be slow to read costs its own exercise these seconds at most.
ANSWER_SECONDS = 5.0
EXERCISE_SECONDS = 10.0


def judge_bounded(jobs: Sequence[tuple], budget: float, memo: dict | None = None,
                  allowance: dict[str, float] | None = None
                  ) -> Iterator[tuple[int, CheckResult]]:
    """(index, CheckResult) for each ``judge`` argument tuple in ``jobs``.

    The judging runs in a fork (see ``bounded``); an answer has ANSWER_SECONDS, and
    its exercise's remaining ``allowance`` (seconds by exercise id, spent here) in all;
    a check whose judging overruns, or kills the fork, fails on its own and the rest
    are judged in a new fork.  ``memo`` (a process that grades many times): judged
    answers by ``memo_key``; an answer judged before is not judged again.
    """
    allowance = {} if allowance is None else allowance
    kept: dict = {} if memo is None else memo
    keys = [memo_key(*job[:3]) if memo is not None else None for job in jobs]
    todo = []
    for i, job in enumerate(jobs):
        if keys[i] is not None and keys[i] in kept:
            yield i, outcome_from_plain(kept[keys[i]], **check_fields(*job[:2]))
        elif judged_here(job):   # as the fork would, through its plain form
            plain = outcome_to_plain(judge_safely(*job))
            if keys[i] is not None:
                kept[keys[i]] = plain
            yield i, outcome_from_plain(plain, **check_fields(*job[:2]))
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


def judged_here(job: tuple) -> bool:
    """Whether judging ``job`` is safe in the grader's own process, which saves a fork:
    a call that gave no answer (nothing is compared), or a comparison of plain data
    (numbers, short strings, small numeric arrays, and lists, tuples and dicts of
    them, nothing nested deep) that reads no text and calls no sympy.  A formula, a
    size in units or anything larger is judged in a bounded fork."""
    check, _, outcome, expected, wrong = job
    if not outcome.ok or _same_tree(check, outcome.value, expected):
        return True
    budget = [PLAIN_ITEMS]
    return cmp.judged_plain(check.compare) and all(
        _plain(value, budget, 0) for value in (outcome.value, expected, *(w for _, w in wrong)))


def _same_tree(check: Check, value: Any, expected: Any) -> bool:
    """A formula that is the very tree of the expected one: it passes without sympy
    (compare.compare), and nothing else of it is looked at (a check that picks an item
    is left to the fork: naming a wrong kind of answer may need sympy)."""
    return check.pick is None and cmp.same_tree(value, expected, check.compare)


def _plain(value: Any, budget: list[int], depth: int) -> bool:
    kind = type(value)
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
    if depth >= PLAIN_DEPTH or kind not in (list, tuple, dict):
        return False
    items = value.items() if kind is dict else ((None, item) for item in value)
    return all((key is None or type(key) in (str, int)) and _plain(item, budget, depth + 1)
               for key, item in items)


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
            yield i, result, outcome_to_plain(result) if finished else None
        return
    start = 0
    while start < len(jobs):
        def work(channel, first=start):
            for i in range(first, len(jobs)):
                result, spent, finished = judge_in_time(jobs[i], allowance)
                channel.emit({"i": i, "result": outcome_to_plain(result), "spent": spent,
                              "finished": finished})

        try:
            for event in bounded.events(work, budget):
                index, spent = event.get("i"), event.get("spent")
                if type(index) is not int or not start <= index < len(jobs) \
                        or type(spent) is not float:
                    raise bounded.Overrun("unreadable event")
                check, exercise = jobs[index][:2]
                allowance[exercise.id] = _left(allowance, exercise) - spent
                plain = event.get("result", {})
                yield index, outcome_from_plain(plain, **check_fields(check, exercise)), \
                    plain if event.get("finished") is True else None
                start = index + 1
        except bounded.Overrun as exc:
            check, exercise = jobs[start][:2]
            allowance[exercise.id] = _left(allowance, exercise) - budget
            reason = Msg("judge-timeout", seconds=budget) if exc.why == "timeout" else \
                Msg("unjudgeable")
            yield start, CheckResult(passed=False, lines=(reason,), answered=True,
                                     **check_fields(check, exercise)), None
            start += 1


def _left(allowance: dict[str, float], exercise: Exercise) -> float:
    return allowance.get(exercise.id, EXERCISE_SECONDS)


def judge_in_time(job: tuple, allowance: dict[str, float]) -> tuple[CheckResult, float, bool]:
    """(``judge_safely``'s result, the seconds it took, whether it finished in time): an
    answer has ANSWER_SECONDS, or what is left of its exercise's allowance if less;
    one that takes longer fails (judge-timeout), and once its exercise's allowance is
    spent its answers fail unread (judge-allowance)."""
    check, exercise = job[:2]
    left = _left(allowance, exercise)
    over = CheckResult(passed=False, answered=True, **check_fields(check, exercise),
                       lines=(Msg("judge-allowance", seconds=f"{EXERCISE_SECONDS:g}"),))
    if left <= 0:
        return over, 0.0, False
    seconds = min(ANSWER_SECONDS, left)
    start = time.monotonic()
    result = None
    try:
        with timelimit.deadline(seconds):
            result = judge_safely(*job)
    except timelimit.TimeLimitExceeded:
        pass
    spent = time.monotonic() - start
    allowance[exercise.id] = left - spent
    if result is None or spent >= seconds:
        if seconds < ANSWER_SECONDS:   # cut short by what its exercise had left
            return over, spent, False
        return CheckResult(passed=False, answered=True, **check_fields(check, exercise),
                           lines=(Msg("judge-timeout", seconds=f"{seconds:g}"),)), spent, False
    return result, spent, True


def judge_safely(check: Check, exercise: Exercise, outcome: CallOutcome, expected: Any,
                 wrong_answers: Sequence[tuple[Misconception, Any]]) -> CheckResult:
    """``judge``, where any failure to read the answer fails only this check."""
    try:
        return judge(check, exercise, outcome, expected, wrong_answers)
    except Exception:   # an answer no comparator could digest: it is still not right
        return CheckResult(passed=False, lines=(Msg("unjudgeable"),), answered=True,
                           **check_fields(check, exercise))


def check_fields(check: Check, exercise: Exercise) -> dict[str, Any]:
    """The fields of a CheckResult that come from its spec."""
    return dict(exercise=exercise.id, file=exercise.file, check=check.id,
                visibility=check.visibility, max_score=0.0, description=check.description,
                function=check.function, reveal=check.reveal)


def judge(check: Check, exercise: Exercise, outcome: CallOutcome, expected: Any,
          wrong_answers: Sequence[tuple[Misconception, Any]]) -> CheckResult:
    """The result of one YAML check. ``wrong_answers``: (misconception, value) pairs."""
    base = check_fields(check, exercise)
    printed = "" if check.hidden else outcome.output   # hidden inputs could be printed
    if not outcome.ok:
        lines = outcome_lines(outcome, check.function, exercise.file, exercise.limits,
                              check.compare.kind)
        return CheckResult(passed=False, lines=tuple(lines), output=printed, **base)
    base["answered"] = True
    notes = _output_note(outcome, exercise.limits)
    try:
        answer = pick(outcome.value, check.pick)
    except NotComparable as exc:
        return CheckResult(passed=False, lines=(exc.msg,), **base)
    expected = pick(expected, check.pick)
    verdict = cmp.compare(answer, expected, check.compare)
    if verdict.passed:
        return CheckResult(passed=True, lines=(verdict.tolerance, *notes), margin=verdict.margin,
                           **base)
    answer, expected = materialized(answer), materialized(expected)   # sympy, if any
    wrong_answers = [(m, materialized(wrong)) for m, wrong in wrong_answers]
    matched = [m for m, wrong in wrong_answers
               if matches(m, answer, expected, wrong, verdict, check)]
    matched, shadowed = _exact_first(matched)
    own = [Msg("not-right", got=answer)] if check.reveal != "answer" else []
    said: list[Msg | None] = [*own, verdict.reason, verdict.tolerance,
                              *map(misconception_line, matched), *notes]
    return CheckResult(passed=False, lines=tuple(said), tags=tuple(m.tag for m in matched),
                       shadowed=tuple(m.tag for m in shadowed), output=printed, **base)


def _exact_first(matched):
    """(shown, shadowed): when a registered wrong answer matches, value rules that
    happen to match too (a ratio of 8 may be bits for bytes, or 8 query heads per KV
    head) are not evidence of their mistake."""
    exact = [m for m in matched if _is_exact(m)]
    if not exact:
        return _unique(matched), []
    return _unique(exact), [m for m in matched if not _is_exact(m) and
                            m.tag not in {e.tag for e in exact}]


def _is_exact(misconception):
    """A wrong version, or a rule naming the wrong answer itself (a release's form of one)."""
    return misconception.rule is None or misconception.rule.kind == "equals"


def _unique(misconceptions):
    seen, out = set(), []
    for m in misconceptions:
        if m.tag not in seen:
            seen.add(m.tag)
            out.append(m)
    return out


def _output_note(outcome, limits):
    if not outcome.output_dropped:
        return ()
    return (Msg("output-dropped", kept=limits.output, dropped=outcome.output_dropped),)


def matches(misconception: Misconception, answer: Any, expected: Any, wrong: Any,
            verdict: Verdict, check: Check) -> bool:
    """Whether a failed answer is this known wrong answer."""
    rule = misconception.rule
    if rule is None:
        try:
            wrong = pick(wrong, check.pick)
        except NotComparable:
            return False
        return _equals(answer, wrong, check)
    return RULES[rule.kind](rule.value, answer, expected, verdict, check)


def _equals(answer, value, check):
    return cmp.compare(answer, value, check.compare).passed or cmp.same_value(answer, value)


def _contains(value, answer):
    try:
        return isinstance(answer, (list, tuple, set, frozenset)) and value in answer
    except TypeError:
        return False


RULES = {   # rule kind (declared in course.formats.MISCONCEPTION_RULES) -> its test
    "ratio": lambda value, answer, expected, verdict, check: _has_ratio(
        answer, expected, float(value), check.compare),
    "equals": lambda value, answer, expected, verdict, check: _equals(answer, value, check),
    "contains": lambda value, answer, expected, verdict, check: _contains(value, answer),
    "nonfinite": lambda value, answer, expected, verdict, check:
        value == values.contains_nonfinite(answer),
    "transposed": lambda value, answer, expected, verdict, check:
        value == bool({"transposed", "shape-transposed"} & _codes(verdict.reason)),
}


def _codes(msg):
    """The codes of a reason and of the reasons nested in it (dict keys)."""
    if msg is None:
        return set()
    inner = [v for v in msg.values.values() if isinstance(v, Msg)]
    return {msg.code}.union(*map(_codes, inner))


def _has_ratio(answer, expected, ratio, spec):
    """Whether the answer is ``ratio`` times the expected one, within the check's own
    tolerance (and, for a size written as text, the precision its digits show)."""
    try:
        if spec.kind == "bytes":
            got, target = parse_bytes(answer), parse_bytes(expected) * Fraction(ratio)
            slack = max(Fraction(spec.param("rtol", 0)) * abs(target), written_precision(answer))
            return target != 0 and abs(got - target) <= slack
        target = values.to_number(expected) * Fraction(ratio)
        return target != 0 and cmp.KINDS["number"].compare(answer, target, spec).passed
    except (NotComparable, UnitError, TypeError, ValueError, OverflowError):
        return False
