"""Why divide by sqrt(d): one known mistake (bench corpus).

Forms: a sympy formula (sqrt) and sympy numbers; an int.
"""

import sympy


def dot_product_std(d):
    return sympy.sympify(d)   # the known mistake: the variance


def anchor_dot_std():
    return 16
