"""One check: a call outcome and the expected value -> a CheckResult.

Failed calls become feedback lines; answers are compared on the trusted side;
a failed answer is matched against the exercise's known wrong answers.
"""

import math

from . import compare as cmp
from .feedback import Msg
from .results import CheckResult, misconception_line
from .spec import Text
from .units import UnitError, parse_bytes


WANTED = {
    "number": Text("一个数", "a number"),
    "array": Text("一个数值数组", "an array of numbers"),
    "shape": Text("一个整数元组", "a tuple of ints"),
    "exact": Text("一个普通的值", "a plain value"),
    "choice": Text("一个选项（字符串）", "a choice (a string)"),
    "set": Text("选项的集合或列表", "a set or list of choices"),
    "formula": Text("一个 sympy 表达式", "a sympy expression"),
    "bytes": Text("整数字节数或 '512 KiB' 这样的字符串",
                  "an int of bytes or a string such as '512 KiB'"),
    "dict": Text("一个字典", "a dict"),
}
PLAIN_VALUE = Text("一个普通的值（数、字符串、列表、元组、字典、ndarray 或 sympy 表达式）",
                   "a plain value (number, string, list, tuple, dict, ndarray or sympy "
                   "expression)")


def outcome_lines(outcome, function, file, limits, want=PLAIN_VALUE):
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
        return [Msg("student-error", function=function, type=kind,
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
        return [_crash_line(outcome.detail, limits)]
    if status == "missing_file":
        return [Msg("missing-file", file=file)]
    if status == "skipped":
        return [Msg("skipped", detail=outcome.detail)]
    return [Msg("bad-answer", detail=outcome.detail)]


def load_lines(outcome, file, limits):
    """Feedback when the module itself could not be imported."""
    if outcome.status == "timeout":
        return [Msg("import-timeout", file=file, seconds=limits.import_time)]
    if outcome.status == "error" and outcome.error.get("type") not in (
            "SyntaxError", "IndentationError", "TabError", "MemoryError"):
        err = outcome.error
        where = Msg("where", file=err["file"], line=err["line"]) if err.get("line") else ""
        return [Msg("import-error", file=file, type=err.get("type", "Exception"),
                    message=err.get("message", ""), where=where)]
    return outcome_lines(outcome, "import", file, limits)


def _crash_line(detail, limits):
    kind, _, value = detail.partition(":")
    if kind == "cpu":
        return Msg("cpu", seconds=limits.cpu)
    if kind == "memory":
        return Msg("memory", limit=_size(limits.memory))
    if kind == "signal":
        return Msg("crashed", signal=value)
    if kind == "disk":
        return Msg("disk", limit=_size(limits.tmp))
    if kind == "processes":
        return Msg("processes", limit=value)
    return Msg("exited", code=value)


def _size(n):
    from .limits import describe_size

    return describe_size(n)


def pick(value, key):
    """Item ``key`` of a tuple/list/dict answer; NotComparable otherwise."""
    if key is None:
        return value
    if isinstance(value, dict) and key in value:
        return value[key]
    if isinstance(value, (tuple, list)) and isinstance(key, int) and -len(value) <= key < len(value):
        return value[key]
    raise cmp.NotComparable(Msg("got-type", got_type=type(value).__name__,
                                want=f"tuple or dict with item {key!r}"))


def judge(check, exercise, outcome, expected, wrong_answers):
    """The result of one YAML check. ``wrong_answers``: (misconception, value) pairs."""
    base = dict(exercise=exercise.id, file=exercise.file, check=check.id,
                visibility=check.visibility, max_score=0.0, description=check.description)
    if not outcome.ok:
        lines = outcome_lines(outcome, check.function, exercise.file, exercise.limits,
                              WANTED[check.compare.kind])
        return CheckResult(passed=False, lines=tuple(lines), **base)
    base["answered"] = True
    notes = _output_note(outcome, exercise.limits)
    try:
        answer = pick(outcome.value, check.pick)
    except cmp.NotComparable as exc:
        return CheckResult(passed=False, lines=(exc.msg,), **base)
    expected = pick(expected, check.pick)
    verdict = cmp.compare(answer, expected, check.compare)
    if verdict.passed:
        return CheckResult(passed=True, lines=(verdict.tolerance, *notes), margin=verdict.margin,
                           **base)
    matched = [m for m, wrong in wrong_answers
               if matches(m, answer, expected, wrong, verdict, check)]
    lines = [verdict.reason, verdict.tolerance, *map(misconception_line, matched), *notes]
    return CheckResult(passed=False, lines=tuple(lines), tags=tuple(m.tag for m in matched),
                       **base)


def _output_note(outcome, limits):
    if not outcome.output_dropped:
        return ()
    return (Msg("output-dropped", kept=limits.output, dropped=outcome.output_dropped),)


def matches(misconception, answer, expected, wrong, verdict, check):
    """Whether a failed answer is this known wrong answer."""
    rule = misconception.rule
    if rule is None:
        try:
            wrong = pick(wrong, check.pick)
        except cmp.NotComparable:
            return False
        return cmp.compare(answer, wrong, check.compare).passed or cmp.same_value(answer, wrong)
    if rule.kind == "nonfinite":
        return rule.value == cmp.contains_nonfinite(answer)
    if rule.kind == "transposed":
        return rule.value == bool({"transposed", "shape-transposed"} & _codes(verdict.reason))
    if rule.kind == "equals":
        return (cmp.compare(answer, rule.value, check.compare).passed
                or cmp.same_value(answer, rule.value))
    if rule.kind == "contains":
        try:
            return isinstance(answer, (list, tuple, set, frozenset)) and rule.value in answer
        except TypeError:
            return False
    return _has_ratio(answer, expected, float(rule.value), check.compare)


def _codes(msg):
    """The codes of a reason and of the reasons nested in it (dict keys)."""
    if msg is None:
        return set()
    inner = [v for v in msg.values.values() if isinstance(v, Msg)]
    return {msg.code}.union(*map(_codes, inner))


def _has_ratio(answer, expected, ratio, spec):
    try:
        if spec.kind == "bytes":
            got, want = float(parse_bytes(answer)), float(parse_bytes(expected))
        else:
            got, want = float(cmp.to_number(answer)), float(cmp.to_number(expected))
    except (cmp.NotComparable, UnitError, TypeError, ValueError):
        return False
    return want != 0 and math.isclose(got / want, ratio, rel_tol=1e-6)
