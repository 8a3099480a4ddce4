"""Attention by hand: a student's own answer (bench corpus), in exact sympy numbers.

Forms: nested lists of exact sympy numbers (exp, sqrt, Rational); a tuple.
"""

import sympy

_e = sympy.exp(1 / sympy.sqrt(2))   # the third row's scores are 1/sqrt(2), 0, 1/sqrt(2)


def seed_example_weights():
    third = [_e / (2 * _e + 1), 1 / (2 * _e + 1), _e / (2 * _e + 1)]
    return [[1, 0, 0], [sympy.Rational(1, 2), sympy.Rational(1, 2), 0], third]


def seed_example_output():
    w = seed_example_weights()[2]
    return [[10, 0], [5, 5], [10 * w[0] + 5 * w[2], 10 * w[1] + 5 * w[2]]]


def selftest_q7_output():
    # q3 = [0, 2]: scores 0, 2, 0 -> weights 1, e^2, 1 over 2 + e^2
    s = 2 + sympy.E ** 2
    return (6 / s, (2 * sympy.E ** 2 + 4) / s)
