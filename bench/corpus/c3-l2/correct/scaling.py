"""Why divide by sqrt(d): a student's own answer (bench corpus).

Forms: a sympy formula (sqrt) and sympy numbers; an int.
"""

import sympy


def dot_product_std(d):
    return sympy.sqrt(d)


def anchor_dot_std():
    return 16
