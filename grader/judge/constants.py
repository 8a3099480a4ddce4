"""Symbol-free sympy answers read as numbers without sympy.

A student may type exact numbers (``sympy.Rational(1, 2)``, ``exp(1/sqrt(2))/(1 + 2e)``)
where a check compares numbers.  Importing sympy to evaluate them costs more than the
rest of a grading, so a checked tree (``wire.Lazy``) of numbers and the usual
functions is evaluated here in floats, as ``values.sympy_to_float`` would; a tree this
cannot evaluate as well as sympy (a symbol, another function, an overflow, a complex
value, a sum that cancels its terms away) is left to sympy (None).
"""

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..wire import Lazy

CANCELLED = 1e-9   # a sum smaller than this times its largest term: sympy's 30 digits decide


class _Unsure(Exception):
    """Not a number this module evaluates as well as sympy."""


def exact(lazy: Lazy) -> int | Fraction | None:
    """An Integer or Rational tree's value, exactly (as sympy's p and q)."""
    tree = lazy.tree
    if tree[0] == "Integer":
        return int(tree[1])
    if tree[0] == "Rational":
        return Fraction(int(tree[1]), int(tree[2]))
    return None


def approximate(lazy: Lazy) -> float | None:
    """The float value of a symbol-free tree, or None when sympy must evaluate it."""
    try:
        value = _value(lazy.tree)
    except (_Unsure, ArithmeticError, ValueError, TypeError):
        return None
    return value if math.isfinite(value) else None


_CONSTANTS = {"Pi": math.pi, "Exp1": math.e}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "exp": math.exp, "sin": math.sin, "cos": math.cos, "tan": math.tan, "tanh": math.tanh,
    "sinh": math.sinh, "cosh": math.cosh, "atan": math.atan, "Abs": abs}


def _value(node: list) -> float:
    head, args = node[0], node[1:]
    if head in ("Integer", "Rational", "Float"):
        return float(Fraction(int(args[0]), int(args[1]))) if head == "Rational" \
            else float(args[0])
    if head in _CONSTANTS:
        return _CONSTANTS[head]
    values = [_value(a) for a in args]
    if head == "Add":
        total = math.fsum(values)
        if abs(total) < CANCELLED * max(map(abs, values)):
            raise _Unsure
        return total
    if head == "Mul":
        return math.prod(values)
    if head == "Pow":
        base, power = values
        if base < 0 and not power.is_integer() or base == 0 and power < 0:
            raise _Unsure   # complex, or a division by zero: sympy names it
        return math.pow(base, power)
    if head == "log":
        return math.log(*values) if min(values) > 0 else _unsure()
    if head in _FUNCTIONS:
        return _FUNCTIONS[head](*values)
    raise _Unsure


def _unsure() -> Any:
    raise _Unsure
