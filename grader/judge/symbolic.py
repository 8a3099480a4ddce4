"""Symbolic formulas: equal when ``simplify(a - b) == 0``, within a time limit.

When simplify cannot decide in time, random numeric spot checks decide; any
point that cannot be evaluated fails the check (fail safe: an answer is only
accepted when something showed it equal).  Formulas that clearly differ at a
random point skip simplify (which is slow to say no) and go to the spot checks.
"""

import cmath
import random
from typing import Any

from ..course.spec import Compare
from .msg import Msg
from .timelimit import TimeLimitExceeded, time_limit
from .verdict import Comparison, NotComparable, Verdict

SIMPLIFY_SECONDS = 3.0


def to_expr(value: Any) -> Any:
    import sympy

    if isinstance(value, bool):
        raise NotComparable(Msg("got-type", got_type="bool", want="formula"))
    if isinstance(value, (int, float)):
        return sympy.nsimplify(value) if isinstance(value, float) else sympy.Integer(value)
    if isinstance(value, sympy.Expr):
        return value
    raise NotComparable(Msg("got-type", got_type=type(value).__name__, want="formula"))


class Formula(Comparison):
    """A sympy formula equal to the reference's for every value of its symbols."""

    kind, plain, same_tree = "formula", False, True

    def tolerance(self, spec: Compare) -> Msg:
        return Msg("tol-formula")

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        return compare_formula(answer, expected, spec, self.tolerance(spec))


def compare_formula(answer: Any, expected: Any, spec: Compare, tol: Msg) -> Verdict:
    import sympy

    got, want = to_expr(answer), to_expr(expected)
    if got.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return Verdict(False, Msg("formula-nonfinite"), tol)
    if want.free_symbols and not got.free_symbols:
        return Verdict(False, Msg("formula-is-number", got=got), tol)
    foreign = {s.name for s in got.free_symbols} - {s.name for s in want.free_symbols}
    if foreign:
        return Verdict(False, Msg("formula-foreign-symbols", symbols=sorted(foreign)), tol)
    got = got.subs({s: _twin(s, want) for s in got.free_symbols})
    if _clearly_differ(got, want):   # simplify would only say so slowly (a wrong version)
        return _spot_check(got, want, spec, tol)
    timeout = float(spec.param("timeout", SIMPLIFY_SECONDS))
    try:
        with time_limit(timeout):
            if sympy.simplify(got - want) == 0:
                return Verdict(True, tolerance=tol, margin=0.0)
    except TimeLimitExceeded:
        pass
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        pass
    return _spot_check(got, want, spec, tol)


def _twin(symbol, expr):
    """The expected formula's symbol of the same name (assumptions may differ)."""
    for s in expr.free_symbols:
        if s.name == symbol.name:
            return s
    return symbol


def _clearly_differ(got, want, points=2):
    """Whether the two differ by far more than rounding (relative 1e-6, at 30 digits)
    at a random point: then no simplification can make them equal, and the spot
    checks give the verdict at once.  Any doubt (an error, a point outside the
    domain, a close value) leaves it to simplify, as before."""
    for sample in _sampled(got, want, 271828, points, 0.5):
        if sample is None or not _in_domain(sample[0]):
            return False
        _, a, b = sample
        if abs(a - b) > 1e-6 * max(abs(a), abs(b), 1.0):
            return True
    return False


def _in_domain(point):
    """Whether every value of ``point`` has what its symbol assumes (a negative
    symbol, an even one...; _sample heeds only some): a difference at a point
    outside the formulas' domain says nothing about simplify's verdict."""
    for symbol, value in point.items():
        for name, wanted in symbol.assumptions0.items():
            have = getattr(value, f"is_{name}", None)
            if have is not None and have != wanted:
                return False
    return True


def _sampled(got, want, seed, count, seconds):
    """(point, got's value, want's value) at ``count`` random points, at 30 digits;
    None, and no more, at the first point where either cannot be evaluated (an
    error, ``seconds`` passed, a value that is not finite)."""
    symbols = sorted(want.free_symbols, key=lambda s: s.name)
    rng = random.Random(seed)
    for _ in range(count):
        point = {s: _sample(s, rng) for s in symbols}
        try:
            with time_limit(seconds):
                a = complex(got.subs(point).evalf(30))
                b = complex(want.subs(point).evalf(30))
        except (TimeLimitExceeded, TypeError, ValueError, ArithmeticError, RecursionError):
            yield None
            return
        if not (cmath.isfinite(a) and cmath.isfinite(b)):
            yield None
            return
        yield point, a, b


def _spot_check(got, want, spec, tol):
    """Equal at every random point of the formulas' domain (at least one), else the
    first point where they differ; a point that cannot be evaluated fails it."""
    rtol = float(spec.param("rtol", 1e-9))
    checked = 0
    for sample in _sampled(got, want, 12345, int(spec.param("samples", 20)), 1.0):
        if sample is None:
            return Verdict(False, Msg("formula-unverifiable"), tol)
        point, a, b = sample
        if not _in_domain(point):   # an assumption _sample cannot meet: says nothing
            continue
        checked += 1
        if not abs(a - b) <= rtol * max(abs(b), 1e-30):
            shown = {s.name: int(v) if s.is_integer else round(float(v), 4)
                     for s, v in point.items()}
            return Verdict(False, Msg("formula-differs", point=shown,
                                      expected=b.real, got=a.real), tol)
    if not checked:
        return Verdict(False, Msg("formula-unverifiable"), tol)
    return Verdict(True, tolerance=tol, margin=0.0)


def _sample(symbol, rng):
    import sympy

    if symbol.is_integer:
        value = sympy.Integer(rng.randint(2, 97))
        value = 2 * value if symbol.is_even else 2 * value + 1 if symbol.is_odd else value
    else:
        value = sympy.Rational(rng.randint(11, 997), rng.randint(3, 97))
    if symbol.is_negative or symbol.is_nonpositive:
        return -value
    if symbol.is_positive or symbol.is_nonnegative or symbol.is_integer:
        return value
    return value * rng.choice((-1, 1))
