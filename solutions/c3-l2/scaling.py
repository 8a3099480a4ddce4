"""Reference: the spread of a dot product of random unit-variance vectors."""

import math


def dot_product_std(d):
    try:
        return math.sqrt(d)
    except TypeError:   # a sympy symbol
        import sympy

        return sympy.sqrt(d)


def anchor_dot_std():
    return dot_product_std(256)


# ---- known wrong versions

def dot_product_std_variance(d):
    return d
