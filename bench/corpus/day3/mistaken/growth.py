"""The attention matrix grows with the square: one known mistake (bench corpus)."""

from fractions import Fraction


def attention_matrix_cells(n):
    return n * n


def growth_factor(n_from, n_to):
    return Fraction(n_to, n_from)   # the known mistake
