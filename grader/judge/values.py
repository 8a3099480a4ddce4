"""Answers as the values a comparison works on (numbers, arrays, shapes, sets), on
the trusted side; a wrong kind of answer raises ``NotComparable`` with its diagnosis."""

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .msg import Msg
from .timelimit import TimeLimitExceeded, time_limit
from .verdict import NotComparable, tolerances

SYMPY_EVAL_SECONDS = 2.0


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
    if is_sympy(value):
        return sympy_to_float(value)
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="number"))


def is_sympy(value):
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


def to_array(value: Any, expected_shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A float/int ndarray from an ndarray or (nested) list, or a list of equal arrays
    (rows a student built one by one); else NotComparable."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "c":
            raise NotComparable(Msg("got-complex"))
        return value.astype(float) if value.dtype.kind == "b" else value
    if isinstance(value, (list, tuple)):
        try:
            flat = [_element(v) for v in _flatten(value)]
            return np.array(flat, dtype=float).reshape(_nested_shape(value))
        except _Mixed:
            return _stacked(value)
        except (ValueError, TypeError):
            raise NotComparable(Msg("ragged")) from None
    if isinstance(value, (int, float, Fraction)) or is_sympy(value):
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


class _Mixed(Exception):
    """An array among a list's items."""


def _element(value):
    if isinstance(value, np.ndarray):
        raise _Mixed
    return as_float(to_number(value))


def _stacked(value):
    """A list that holds arrays, as one array: its items' shapes must agree (ragged)."""
    try:
        return _stack(value)
    except (ValueError, TypeError):
        raise NotComparable(Msg("ragged")) from None


def _stack(value):
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise ValueError("not real numbers")
        return value.astype(float)
    if isinstance(value, (list, tuple)):
        return np.stack([_stack(item) for item in value]) if value else np.zeros(0)
    return np.asarray(as_float(to_number(value)))


def excess(got, want, spec):
    """Per element: |error| / allowed error (NaN pairs count as exact)."""
    rtol, atol = tolerances(spec)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        g, w = got.astype(float), want.astype(float)
        error = np.abs(g - w)
        both = (~np.isfinite(g)) & (~np.isfinite(w)) & ((g == w) | (np.isnan(g) & np.isnan(w)))
        error = np.where(both, 0.0, error)
        allowed = atol + rtol * np.abs(np.where(np.isfinite(w), w, 0.0))
        ratio = np.where(error == 0, 0.0, error / np.where(allowed > 0, allowed, 1e-300))
    return np.nan_to_num(ratio, nan=np.inf)


def close(got, want, spec):
    return got.shape == want.shape and bool(np.all(excess(got, want, spec) <= 1))


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


def is_nothing(value: Any) -> bool:
    """Whether an answer holds nothing: None, empty, or numbers that are all zero (what
    the ``zeros`` stand-in returns; no mistake is read into it)."""
    if value is None or (isinstance(value, (str, list, tuple, dict, set, frozenset))
                         and not value):
        return True
    if isinstance(value, (list, tuple, np.ndarray)) or type(value) in (int, float):
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return False
        return bool(array.size == 0 or np.all(array == 0))
    return False


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


def integral(value):
    number = to_number(value)
    if isinstance(number, float) and not number.is_integer():
        raise NotComparable(Msg("got-fraction-for-int", got=number))
    return int(number)


def to_set(value: Any) -> set[str | int]:
    if isinstance(value, (set, frozenset, list, tuple)):
        items = list(value)
        if all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in items):
            return set(items)
    if isinstance(value, str):
        raise NotComparable(Msg("got-text-for-set", got=value))
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="set"))
