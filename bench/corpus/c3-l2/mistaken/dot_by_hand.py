"""The dot product by hand: one known mistake (bench corpus).

Forms: an int; sympy numbers and formulas (cos, a power).
"""

import sympy


def dot_example():
    return 2 * 2 + 3 * 2   # [2, 3] . [2, 2]


def dot_from_angle(norm_q, norm_k, theta):
    return norm_q * norm_k * sympy.sin(theta)   # the known mistake


def score_count(T):
    return T ** 2
