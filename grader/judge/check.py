"""One check: a call outcome and the expected value -> a CheckResult.

Failed calls become feedback lines; answers are compared on the trusted side;
a failed answer is matched against the exercise's known wrong answers.
"""

import builtins
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from .. import wire
from ..course.limits import Limits
from ..course.spec import Check, Exercise, Misconception, Text
from ..course.units import UnitError, parse_bytes, written_precision
from ..run.outcome import ANSWER_STREAM, FOLDER_TAMPERED, REQUESTS_UNREAD, CallOutcome
from ..wire import materialized
from . import compare as cmp
from . import values
from .msg import Msg
from .results import CheckResult, misconception_line
from .verdict import NotComparable, Verdict
from .window import side_by_side

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
    # the digests a tag's evidence reads (credit.with_told_tags): none without a wrong version
    base["wrong_keys"] = _wrong_keys(wrong_answers, check)
    base["answer_key"] = answer_key(answer) if base["wrong_keys"] else ""
    verdict = cmp.compare(answer, expected, check.compare)
    if verdict.passed:
        return CheckResult(passed=True, lines=(verdict.tolerance, *notes), margin=verdict.margin,
                           **base)
    # sympy, if any is needed (a symbol-free tree where numbers are compared is a number)
    answer, expected = cmp.readied(answer, check.compare), cmp.readied(expected, check.compare)
    window = side_by_side(answer, expected, verdict, check)
    wrong_answers = [(m, cmp.readied(wrong, check.compare)) for m, wrong in wrong_answers]
    # an answer that holds nothing (what doing nothing returns) shows no mistake
    matched = [] if values.is_nothing(answer) else \
        [m for m, wrong in wrong_answers if matches(m, answer, expected, wrong, verdict, check)]
    matched, shadowed = _exact_first(matched)
    own = [Msg("not-right", got=answer)] if check.reveal != "answer" else []
    said: list[Msg | None] = [*own, verdict.reason, *([window] if window else []),
                              verdict.tolerance,
                              *map(misconception_line, matched), *notes]
    return CheckResult(passed=False, lines=tuple(said), tags=tuple(m.tag for m in matched),
                       shadowed=tuple(m.tag for m in shadowed), output=printed, **base)


def answer_key(value: Any) -> str:
    """A digest of an answer: numbers to 9 decimals (a float's last bits are noise),
    anything else by a plain text of it (a sympy value by its tree: sympy is not imported
    here); for telling one answer from another of the same student, never for judging."""
    import hashlib
    import json

    import numpy as np

    try:
        array = np.asarray(value, dtype=float)
        data = b"n" + np.round(array, 9).tobytes() + repr(array.shape).encode()
    except (TypeError, ValueError, OverflowError):
        data = b"t" + json.dumps(value, default=_plain_text, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def _plain_text(value: Any) -> Any:
    """What json cannot write, as text: a sympy tree (``wire.Lazy``), an array's items."""
    if isinstance(value, wire.Lazy):
        return value.text
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(map(repr, value))
    return f"{type(value).__name__}:{value!r}"


def _wrong_keys(wrong_answers, check):
    """(tag, answer_key) of each wrong version's answer to this check."""
    out = []
    for m, wrong in wrong_answers:
        if m.rule is None:
            try:
                out.append((m.tag, answer_key(pick(wrong, check.pick))))
            except NotComparable:
                continue
    return tuple(out)


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
    "truncated": lambda value, answer, expected, verdict, check: _truncated(
        answer, expected, int(value)),
}


def _truncated(answer, expected, decimals):
    """Whether the answer is the expected number (or each of its numbers) cut after
    ``decimals`` places instead of rounded: every number the cut or the rounding, and at
    least one the cut where the two differ."""
    import numpy as np

    try:
        got, want = np.asarray(answer, dtype=float), np.asarray(expected, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return False
    if got.shape != want.shape or not np.isfinite(got).all() or not np.isfinite(want).all():
        return False
    scale = 10.0 ** decimals
    cut, rounded = np.trunc(want * scale) / scale, np.round(want * scale) / scale
    near = 0.01 / scale
    is_cut, is_rounded = np.abs(got - cut) <= near, np.abs(got - rounded) <= near
    return bool((is_cut | is_rounded).all() and (is_cut & (np.abs(cut - rounded) > near)).any())


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
