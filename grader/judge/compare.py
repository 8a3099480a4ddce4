"""The comparison engine: answer vs expected, on the trusted side, one class a kind.

Each kind returns a Verdict whose failure reason is data (a ``Msg`` code plus
values); ``report.messages`` phrases it.  ``margin`` is the fraction of the
tolerance used (0 = exact, 1 = at the limit), for ``dev check``.  A kind is a
``verdict.Comparison`` subclass; defining it registers it.
"""

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..course.spec import Compare
from ..course.units import UnitError, describe_bytes, parse_bytes
from ..wire import Lazy, materialized
from . import constants, symbolic  # noqa: F401  (symbolic defines the formula kind)
from .msg import Msg
from .values import (
    as_float,
    close,
    excess,
    integral,
    is_sympy,
    to_array,
    to_number,
    to_set,
    to_shape,
)
from .verdict import Comparison, NotComparable, Verdict, number_tolerance, tolerances


def kind_of(spec: Compare) -> Comparison:
    return Comparison.registry[spec.kind]


def tolerance_of(spec: Compare) -> Msg:
    return kind_of(spec).tolerance(spec)


def same_tree(answer: Any, expected: Any, spec: Compare) -> bool:
    """Whether ``answer`` is the very formula tree of ``expected`` (both Lazy, finite),
    under a comparison where that alone passes, without sympy."""
    # both Lazy: an array's == would answer elementwise (and its truth raise)
    return (type(answer) is Lazy and type(expected) is Lazy and answer == expected
            and answer.finite() and kind_of(spec).same_tree)


def readied(value: Any, spec: Compare) -> Any:
    """``value`` as ``spec``'s comparison reads it: each Lazy in it as its sympy object,
    but a symbol-free one where numbers are compared (number, array, bytes, a dict of
    them) as a number, without importing sympy (``constants``)."""
    return materialized(value, _reader(spec))


def reads_numbers(spec: Compare) -> bool:
    """Whether ``spec`` reads a symbol-free formula as a number (``readied``)."""
    return _reader(spec) is not Lazy.value


def _reader(spec: Compare) -> Callable[[Lazy], Any]:
    if spec.kind == "dict":
        return _reader(spec.params["each"])
    return {"number": _as_float, "array": _as_float, "bytes": _as_bytes}.get(spec.kind,
                                                                              Lazy.value)


def _as_float(lazy: Lazy) -> Any:
    number = constants.approximate(lazy)
    return lazy.value() if number is None else number


def _as_bytes(lazy: Lazy) -> Any:
    number = constants.exact(lazy)   # a byte count is exact (parse_bytes)
    return _as_float(lazy) if number is None else number


def compare(answer: Any, expected: Any, spec: Compare) -> Verdict:
    """Compare by ``spec.kind``; a wrong kind of answer is a failed Verdict.

    A formula that is the very tree of the expected one passes without sympy
    (see ``wire.Lazy``); any other is compared as a sympy object.
    """
    kind = kind_of(spec)
    if same_tree(answer, expected, spec):
        return Verdict(True, tolerance=kind.tolerance(spec), margin=0.0)
    try:
        return kind.compare(readied(answer, spec), readied(expected, spec), spec)
    except NotComparable as exc:
        return Verdict(False, exc.msg, kind.tolerance(spec))


def judged_plain(spec: Compare) -> bool:
    return kind_of(spec).judged_plain(spec)


def _by_margin(margin: float, tol: Msg, failure: Msg) -> Verdict:
    if margin <= 1:
        return Verdict(True, tolerance=tol, margin=margin)
    return Verdict(False, failure, tol, margin)


class Number(Comparison):
    """A number within rtol/atol, or to ``sigfigs`` significant figures."""

    kind, plain, same_tree = "number", True, False

    def tolerance(self, spec: Compare) -> Msg:
        return number_tolerance(spec)

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        got, want = to_number(answer), to_number(expected)
        if isinstance(got, int) and isinstance(want, int):
            margin = 0.0 if got == want else math.inf
        else:
            margin = _number_margin(got, want, spec)
        return _by_margin(margin, self.tolerance(spec), Msg("value", expected=want, got=got))


def _number_margin(got, want, spec):
    got, want = as_float(got), as_float(want)
    if not math.isfinite(got):
        return math.inf if got != want else 0.0
    sigfigs = spec.param("sigfigs")
    if sigfigs:
        exponent = math.floor(math.log10(abs(want))) if want else 0
        allowed = 0.5 * 10 ** (exponent - sigfigs + 1)
    else:
        rtol, atol = tolerances(spec)
        allowed = atol + rtol * abs(want)
    error = abs(got - want)
    if error == 0:
        return 0.0
    return error / allowed if allowed else math.inf


class Array(Comparison):
    """Same shape, then every element within rtol/atol; names a transposed answer."""

    kind, plain, same_tree = "array", True, False

    def tolerance(self, spec: Compare) -> Msg:
        return number_tolerance(spec)

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        want = to_array(expected)
        got = to_array(answer, want.shape)
        tol = self.tolerance(spec)
        if got.shape != want.shape:
            if got.shape == want.shape[::-1] and got.ndim == 2 and close(got.T, want, spec):
                return Verdict(False, Msg("transposed", shape=got.shape), tol)
            return Verdict(False, Msg("shape", expected=want.shape, got=got.shape), tol)
        bad = _nonfinite_mismatch(got, want, spec)
        if bad is not None:
            return Verdict(False, bad, tol)
        ratios = excess(got, want, spec)
        margin = float(np.max(ratios)) if ratios.size else 0.0
        if margin <= 1:
            return Verdict(True, tolerance=tol, margin=margin)
        if got.ndim == 2 and got.shape[0] == got.shape[1] > 1 and close(got.T, want, spec):
            return Verdict(False, Msg("transposed", shape=got.shape), tol, margin)
        worst = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
        return Verdict(False, Msg(
            "array-values", count=int(np.sum(ratios > 1)), total=int(ratios.size),
            index=tuple(int(i) for i in worst), expected=float(want[worst]),
            got=float(got[worst]), error=float(abs(got[worst] - want[worst]))), tol, margin)


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


class Shape(Comparison):
    """A tuple of whole numbers, equal; names rows and columns swapped."""

    kind, plain, same_tree = "shape", True, False

    def tolerance(self, spec: Compare) -> Msg:
        return Msg("tol-exact")

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        want, got = to_shape(expected), to_shape(answer)
        tol = self.tolerance(spec)
        if got == want:
            return Verdict(True, tolerance=tol, margin=0.0)
        if got == want[::-1]:
            return Verdict(False, Msg("shape-transposed", expected=want, got=got), tol)
        return Verdict(False, Msg("shape", expected=want, got=got), tol)


class Exact(Comparison):
    """Exact equality of whole numbers, strings and bools (a bool is never a number)."""

    kind, plain, same_tree = "exact", True, True

    def tolerance(self, spec: Compare) -> Msg:
        return Msg("tol-exact")

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        if isinstance(expected, bool) or isinstance(answer, bool):
            if type(answer) is not bool or type(expected) is not bool:
                raise NotComparable(Msg("got-type", got_type=type(answer).__name__,
                                        want="bool"))
        elif isinstance(expected, int) and isinstance(answer, (tuple, list)):
            raise NotComparable(Msg("got-sequence-for-number", got=answer))
        elif isinstance(expected, int):
            answer = integral(answer)
        elif type(answer) is not type(expected):
            raise NotComparable(Msg("got-type", got_type=type(answer).__name__,
                                    want=type(expected).__name__))
        if answer == expected:
            return Verdict(True, tolerance=self.tolerance(spec), margin=0.0)
        return Verdict(False, Msg("value", expected=expected, got=answer), self.tolerance(spec))


class Choice(Comparison):
    """One of the listed options, exactly."""

    kind, plain, same_tree = "choice", True, False

    def tolerance(self, spec: Compare) -> Msg:
        return Msg("tol-exact")

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        options = spec.param("options")
        if options is not None and answer not in options:
            raise NotComparable(Msg("not-an-option", got=answer, options=tuple(options)))
        return Comparison.registry["exact"].compare(answer, expected, spec)


class Set(Comparison):
    """The same items in any order; names what is missing and what is extra."""

    kind, plain, same_tree = "set", True, False

    def tolerance(self, spec: Compare) -> Msg:
        return Msg("tol-set")

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        got, want = to_set(answer), to_set(expected)
        options = spec.param("options")
        if options is not None:
            unknown = sorted(got - set(options), key=str)
            if unknown:
                raise NotComparable(Msg("not-an-option", got=unknown[0],
                                        options=tuple(options)))
        tol = self.tolerance(spec)
        if got == want:
            return Verdict(True, tolerance=tol, margin=0.0)
        missing, extra = sorted(want - got, key=str), sorted(got - want, key=str)
        if missing and extra:
            return Verdict(False, Msg("set", missing=missing, extra=extra), tol)
        if missing:
            return Verdict(False, Msg("set-missing", missing=missing), tol)
        return Verdict(False, Msg("set-extra", extra=extra), tol)


class Bytes(Comparison):
    """A byte count, as an int or a string with a unit, within ``rtol``."""

    kind, plain, same_tree = "bytes", True, False   # units: a table, no library

    def tolerance(self, spec: Compare) -> Msg:
        rtol = spec.param("rtol", 0)
        return Msg("tol-bytes-rel", rtol=rtol) if rtol else Msg("tol-bytes-exact")

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        if is_sympy(answer) and not getattr(answer, "is_Rational", False):
            answer = to_number(answer)   # e.g. 2**25 left unevaluated; bounded in time
        try:
            got = parse_bytes(answer)
        except UnitError as exc:
            raise NotComparable(Msg("bad-bytes", problem=Msg(f"unit-{exc.code}",
                                                             **exc.values))) from None
        want = parse_bytes(expected)
        error, allowed = abs(got - want), float(spec.param("rtol", 0)) * abs(want)
        margin = 0.0 if error == 0 else (float(error / allowed) if allowed else math.inf)
        return _by_margin(margin, self.tolerance(spec),
                          Msg("bytes", want_bytes=describe_bytes(want),
                              got_bytes=describe_bytes(got)))


class Dict(Comparison):
    """The same keys, each value compared by the ``each`` comparison."""

    kind, plain, same_tree = "dict", True, False

    def tolerance(self, spec: Compare) -> Msg:
        return tolerance_of(spec.params["each"])

    def judged_plain(self, spec: Compare) -> bool:
        return judged_plain(spec.params["each"])

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
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


KINDS = Comparison.registry   # kind -> its Comparison, every kind defined above and in symbolic


# ------------------------------------------------------------ answers alike

_DEFAULT_TOLERANCE = Compare("array", {})   # rtol 1e-6, atol 1e-9


def same_value(a: Any, b: Any) -> bool:
    """Whether two answers are the same value, whatever their kind (for wrong answers
    of another kind than expected, such as an array where a number belongs)."""
    a, b = materialized(a), materialized(b)
    if isinstance(a, (np.ndarray, list, tuple)) and isinstance(b, (np.ndarray, list, tuple)):
        try:
            x, y = to_array(a), to_array(b)
        except NotComparable:
            return False
        return close(x, y, _DEFAULT_TOLERANCE)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    try:
        return bool(a == b)
    except Exception:   # sympy relational or odd comparisons: not the same
        return False


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
        return KINDS["number"].compare(a, b, _DEFAULT_TOLERANCE).passed
    return same_value(a, b)
