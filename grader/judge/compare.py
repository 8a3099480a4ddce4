"""The comparison engine: answer vs expected, on the trusted side.

Each comparator returns a Verdict whose failure reason is data (a ``Msg``
code plus values); ``report.messages`` phrases it.  ``margin`` is the fraction of
the tolerance used (0 = exact, 1 = at the limit), for ``dev check``.
"""

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..course.spec import Compare
from ..course.units import UnitError, describe_bytes, parse_bytes
from ..wire import Lazy, materialized
from .msg import Msg
from .symbolic import compare_formula
from .timelimit import TimeLimitExceeded, time_limit
from .verdict import NotComparable, Verdict, _tolerances, tolerance_of

SYMPY_EVAL_SECONDS = 2.0


SAME_TREE_KINDS = ("formula", "exact")   # where one sympy tree equals itself


def same_tree(answer: Any, expected: Any, spec: Compare) -> bool:
    """Whether ``answer`` is the very formula tree of ``expected`` (both Lazy, finite),
    under a comparison where that alone passes, without sympy."""
    # both Lazy: an array's == would answer elementwise (and its truth raise)
    return (type(answer) is Lazy and type(expected) is Lazy and answer == expected
            and answer.finite() and spec.kind in SAME_TREE_KINDS)


def compare(answer: Any, expected: Any, spec: Compare) -> Verdict:
    """Compare by ``spec.kind``; a wrong kind of answer is a failed Verdict.

    A formula that is the very tree of the expected one passes without sympy
    (see ``wire.Lazy``); any other is compared as a sympy object.
    """
    if same_tree(answer, expected, spec):
        return Verdict(True, tolerance=tolerance_of(spec), margin=0.0)
    answer, expected = materialized(answer), materialized(expected)
    comparator = COMPARATORS[spec.kind]
    try:
        return comparator(answer, expected, spec)
    except NotComparable as exc:
        return Verdict(False, exc.msg, tolerance_of(spec))


# ------------------------------------------------------------ numbers

def to_number(value: Any, role: str = "answer") -> Any:
    """A real number from int, float, Fraction, bool-free sympy; else NotComparable."""
    if type(value) is bool:
        raise NotComparable(Msg("got-bool-for-number", got=value))
    if isinstance(value, (int, float, Fraction)):
        return value
    if isinstance(value, (tuple, list)):
        raise NotComparable(Msg("got-sequence-for-number", got=value))
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "c":
            raise NotComparable(Msg("got-complex"))
        if value.size == 1 and value.ndim <= 1:
            return to_number(value.reshape(()).item(), role)
        raise NotComparable(Msg("got-array-for-number", shape=value.shape))
    if isinstance(value, str):
        raise NotComparable(Msg("got-text-for-number", got=value))
    if _is_sympy(value):
        return sympy_to_float(value)
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="number"))


def _is_sympy(value):
    return (type(value).__module__ or "").startswith("sympy.")


def sympy_to_float(expr: Any) -> float:
    """Evaluate a symbol-free sympy expression, bounded in time."""
    if getattr(expr, "free_symbols", None):
        raise NotComparable(Msg("got-formula-for-number",
                                symbols=sorted(str(s) for s in expr.free_symbols)))
    try:
        with time_limit(SYMPY_EVAL_SECONDS):
            value = complex(expr.evalf(30))
    except (TimeLimitExceeded, TypeError, ValueError, ArithmeticError, RecursionError):
        raise NotComparable(Msg("unevaluable")) from None
    if abs(value.imag) > 1e-12 * max(1.0, abs(value.real)):
        raise NotComparable(Msg("got-complex"))
    return value.real


def as_float(number: Any) -> float:
    """float(number), with numbers beyond the float range as +-inf (never an error)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _number_margin(got, want, spec):
    got, want = as_float(got), as_float(want)
    if not math.isfinite(got):
        return math.inf if got != want else 0.0
    sigfigs = spec.param("sigfigs")
    if sigfigs:
        exponent = math.floor(math.log10(abs(want))) if want else 0
        allowed = 0.5 * 10 ** (exponent - sigfigs + 1)
    else:
        rtol, atol = _tolerances(spec)
        allowed = atol + rtol * abs(want)
    error = abs(got - want)
    if error == 0:
        return 0.0
    return error / allowed if allowed else math.inf


def compare_number(answer: Any, expected: Any, spec: Compare) -> Verdict:
    got, want = to_number(answer), to_number(expected)
    if isinstance(got, int) and isinstance(want, int):
        margin = 0.0 if got == want else math.inf
    else:
        margin = _number_margin(got, want, spec)
    tol = tolerance_of(spec)
    if margin <= 1:
        return Verdict(True, tolerance=tol, margin=margin)
    return Verdict(False, Msg("value", expected=want, got=got), tol, margin)


# ------------------------------------------------------------ arrays

def to_array(value: Any, expected_shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A float/int ndarray from an ndarray or (nested) list; else NotComparable."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "c":
            raise NotComparable(Msg("got-complex"))
        return value.astype(float) if value.dtype.kind == "b" else value
    if isinstance(value, (list, tuple)):
        try:
            flat = [_element(v) for v in _flatten(value)]
            return np.array(flat, dtype=float).reshape(_nested_shape(value))
        except (ValueError, TypeError):
            raise NotComparable(Msg("ragged")) from None
    if isinstance(value, (int, float, Fraction)) or _is_sympy(value):
        raise NotComparable(Msg("got-number-for-array", got=value, shape=expected_shape))
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="array"))


def _flatten(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _flatten(item)
    else:
        yield value


def _nested_shape(value):
    shape = []
    while isinstance(value, (list, tuple)):
        shape.append(len(value))
        if not value:
            break
        value = value[0]
    return tuple(shape)


def _element(value):
    if isinstance(value, np.ndarray):
        raise ValueError("mixed")
    return as_float(to_number(value))


def compare_array(answer: Any, expected: Any, spec: Compare) -> Verdict:
    want = to_array(expected)
    got = to_array(answer, want.shape)
    tol = tolerance_of(spec)
    if got.shape != want.shape:
        if got.shape == want.shape[::-1] and got.ndim == 2 and _close(got.T, want, spec):
            return Verdict(False, Msg("transposed", shape=got.shape), tol)
        return Verdict(False, Msg("shape", expected=want.shape, got=got.shape), tol)
    bad = _nonfinite_mismatch(got, want, spec)
    if bad is not None:
        return Verdict(False, bad, tol)
    excess = _excess(got, want, spec)
    margin = float(np.max(excess)) if excess.size else 0.0
    if margin <= 1:
        return Verdict(True, tolerance=tol, margin=margin)
    if got.ndim == 2 and got.shape[0] == got.shape[1] > 1 and _close(got.T, want, spec):
        return Verdict(False, Msg("transposed", shape=got.shape), tol, margin)
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
    return Verdict(False, Msg(
        "array-values", count=int(np.sum(excess > 1)), total=int(excess.size),
        index=tuple(int(i) for i in worst), expected=float(want[worst]),
        got=float(got[worst]), error=float(abs(got[worst] - want[worst]))), tol, margin)


def _excess(got, want, spec):
    """Per element: |error| / allowed error (NaN pairs count as exact)."""
    rtol, atol = _tolerances(spec)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        g, w = got.astype(float), want.astype(float)
        error = np.abs(g - w)
        both = (~np.isfinite(g)) & (~np.isfinite(w)) & ((g == w) | (np.isnan(g) & np.isnan(w)))
        error = np.where(both, 0.0, error)
        allowed = atol + rtol * np.abs(np.where(np.isfinite(w), w, 0.0))
        ratio = np.where(error == 0, 0.0, error / np.where(allowed > 0, allowed, 1e-300))
    return np.nan_to_num(ratio, nan=np.inf)


def _close(got, want, spec):
    return got.shape == want.shape and bool(np.all(_excess(got, want, spec) <= 1))


def _nonfinite_mismatch(got, want, spec):
    g, w = got.astype(float), want.astype(float)
    if spec.param("nan", "fail") == "fail":
        extra = ~np.isfinite(g) & np.isfinite(w)
    else:
        extra = np.isnan(g) != np.isnan(w)
    if not np.any(extra):
        return None
    where = tuple(int(i) for i in np.argwhere(extra)[0])
    kind = "NaN" if np.isnan(g[where]) else "inf"
    return Msg("nonfinite", kind=kind, count=int(np.sum(extra)), index=where)


def same_value(a: Any, b: Any) -> bool:
    """Whether two answers are the same value, whatever their kind (for wrong answers
    of another kind than expected, such as an array where a number belongs)."""
    a, b = materialized(a), materialized(b)
    if isinstance(a, (np.ndarray, list, tuple)) and isinstance(b, (np.ndarray, list, tuple)):
        try:
            x, y = to_array(a), to_array(b)
        except NotComparable:
            return False
        return x.shape == y.shape and bool(np.all(_excess(x, y, _DEFAULT_TOLERANCE) <= 1))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    try:
        return bool(a == b)
    except Exception:   # sympy relational or odd comparisons: not the same
        return False


_DEFAULT_TOLERANCE = Compare("array", {})   # rtol 1e-6, atol 1e-9


def same_answer(a: Any, b: Any) -> bool:
    """Whether two whole answers agree, item by item for tuples and dicts (an
    ``attention`` answer is an (output, weights) pair of arrays)."""
    if isinstance(a, tuple) and isinstance(b, tuple) or isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        pairs = zip(a.values(), b.values()) if isinstance(a, dict) and isinstance(b, dict) \
            else zip(a, b)
        if isinstance(a, dict) and list(a) != list(b):
            return False
        return all(same_answer(x, y) for x, y in pairs)
    if isinstance(a, (int, float, Fraction)) and isinstance(b, (int, float, Fraction)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return compare_number(a, b, _DEFAULT_TOLERANCE).passed
    return same_value(a, b)


def contains_nonfinite(value: Any) -> bool:
    """Whether an answer holds NaN or inf anywhere (for the 'nonfinite' rule)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and not bool(np.all(np.isfinite(value)))
    if isinstance(value, (list, tuple)):
        return any(contains_nonfinite(v) for v in value)
    if isinstance(value, dict):
        return any(contains_nonfinite(v) for v in value.values())
    return False


# ------------------------------------------------------------ shapes, exact, choices

def to_shape(value: Any, role: str = "answer") -> tuple[int, ...]:
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        value = tuple(value.tolist())
    if isinstance(value, (tuple, list)) and all(type(v) is int for v in value):
        return tuple(value)
    if type(value) is int:
        raise NotComparable(Msg("got-int-for-shape", got=value))
    if isinstance(value, np.ndarray):
        raise NotComparable(Msg("got-array-for-shape", shape=value.shape))
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="shape"))


def compare_shape(answer: Any, expected: Any, spec: Compare) -> Verdict:
    want = to_shape(expected)
    got = to_shape(answer)
    tol = tolerance_of(spec)
    if got == want:
        return Verdict(True, tolerance=tol, margin=0.0)
    if got == want[::-1]:
        return Verdict(False, Msg("shape-transposed", expected=want, got=got), tol)
    return Verdict(False, Msg("shape", expected=want, got=got), tol)


def compare_exact(answer: Any, expected: Any, spec: Compare) -> Verdict:
    tol = tolerance_of(spec)
    if isinstance(expected, bool) or isinstance(answer, bool):
        if type(answer) is not bool or type(expected) is not bool:
            raise NotComparable(Msg("got-type", got_type=type(answer).__name__, want="bool"))
    elif isinstance(expected, int) and isinstance(answer, (tuple, list)):
        raise NotComparable(Msg("got-sequence-for-number", got=answer))
    elif isinstance(expected, int):
        answer = _integral(answer)
    elif type(answer) is not type(expected):
        raise NotComparable(Msg("got-type", got_type=type(answer).__name__,
                                want=type(expected).__name__))
    if answer == expected:
        return Verdict(True, tolerance=tol, margin=0.0)
    return Verdict(False, Msg("value", expected=expected, got=answer), tol)


def _integral(value):
    number = to_number(value)
    if isinstance(number, float) and not number.is_integer():
        raise NotComparable(Msg("got-fraction-for-int", got=number))
    return int(number)


def compare_choice(answer: Any, expected: Any, spec: Compare) -> Verdict:
    options = spec.param("options")
    if options is not None and answer not in options:
        raise NotComparable(Msg("not-an-option", got=answer, options=tuple(options)))
    return compare_exact(answer, expected, spec)


def to_set(value: Any) -> set[str | int]:
    if isinstance(value, (set, frozenset, list, tuple)):
        items = list(value)
        if all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in items):
            return set(items)
    if isinstance(value, str):
        raise NotComparable(Msg("got-text-for-set", got=value))
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="set"))


def compare_set(answer: Any, expected: Any, spec: Compare) -> Verdict:
    got, want = to_set(answer), to_set(expected)
    options = spec.param("options")
    if options is not None:
        unknown = sorted(got - set(options), key=str)
        if unknown:
            raise NotComparable(Msg("not-an-option", got=unknown[0], options=tuple(options)))
    tol = tolerance_of(spec)
    if got == want:
        return Verdict(True, tolerance=tol, margin=0.0)
    missing, extra = sorted(want - got, key=str), sorted(got - want, key=str)
    if missing and extra:
        return Verdict(False, Msg("set", missing=missing, extra=extra), tol)
    if missing:
        return Verdict(False, Msg("set-missing", missing=missing), tol)
    return Verdict(False, Msg("set-extra", extra=extra), tol)


# ------------------------------------------------------------ bytes, dict

def compare_bytes(answer: Any, expected: Any, spec: Compare) -> Verdict:
    if _is_sympy(answer) and not getattr(answer, "is_Rational", False):
        answer = to_number(answer)   # e.g. 2**25 left unevaluated; bounded in time
    try:
        got = parse_bytes(answer)
    except UnitError as exc:
        raise NotComparable(Msg("bad-bytes", problem=Msg(f"unit-{exc.code}", **exc.values))) \
            from None
    want = parse_bytes(expected)
    rtol = float(spec.param("rtol", 0))
    error = abs(got - want)
    allowed = rtol * abs(want)
    margin = 0.0 if error == 0 else (float(error / allowed) if allowed else math.inf)
    tol = tolerance_of(spec)
    if margin <= 1:
        return Verdict(True, tolerance=tol, margin=margin)
    return Verdict(False, Msg("bytes", want_bytes=describe_bytes(want),
                              got_bytes=describe_bytes(got)), tol, margin)


def compare_dict(answer: Any, expected: Any, spec: Compare) -> Verdict:
    if not isinstance(answer, dict):
        raise NotComparable(Msg("got-type", got_type=type(answer).__name__, want="dict"))
    missing = [k for k in expected if k not in answer]
    extra = [k for k in answer if k not in expected]
    if missing or extra:
        raise NotComparable(Msg("keys", missing=missing, extra=extra))
    each = spec.params["each"]
    margins = []
    for key in expected:
        verdict = compare(answer[key], expected[key], each)
        if not verdict.passed:
            return Verdict(False, Msg("at-key", key=key, inner=verdict.reason),
                           verdict.tolerance)
        margins.append(verdict.margin or 0.0)
    return Verdict(True, tolerance=tolerance_of(each), margin=max(margins, default=0.0))


COMPARATORS = {
    "number": compare_number, "array": compare_array, "shape": compare_shape,
    "exact": compare_exact, "choice": compare_choice, "set": compare_set,
    "bytes": compare_bytes, "dict": compare_dict, "formula": compare_formula,
}
