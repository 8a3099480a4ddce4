"""Reference: the dot product by hand, its angle form, and how many scores there are."""

import math


def dot_example(q=(2, 3), k=(2, 2)):
    return sum(a * b for a, b in zip(q, k, strict=True))


def dot_from_angle(norm_q, norm_k, theta):
    try:
        return norm_q * norm_k * math.cos(theta)
    except TypeError:   # sympy symbols
        import sympy

        return norm_q * norm_k * sympy.cos(theta)


def score_count(T):
    return T * T


# ---- known wrong versions

def score_count_linear(T):
    return T


def dot_from_angle_sin(norm_q, norm_k, theta):
    try:
        return norm_q * norm_k * math.sin(theta)
    except TypeError:
        import sympy

        return norm_q * norm_k * sympy.sin(theta)
