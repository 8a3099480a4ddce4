"""The attention matrix grows with the square: a student's own answer (bench corpus).

Forms: a Fraction; a sympy formula (n*n).
"""

from fractions import Fraction


def attention_matrix_cells(n):
    return n * n


def growth_factor(n_from, n_to):
    return Fraction(n_to, n_from) ** 2
