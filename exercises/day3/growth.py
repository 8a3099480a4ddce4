"""The attention matrix grows with the square / 注意力矩阵按平方增长."""


def attention_matrix_cells(n):
    """Cells of one head's attention matrix for n tokens (n may be a sympy Symbol).

    中文：n 个 token 时一个头的注意力矩阵格子数（n 可能是 sympy 符号）。
    """
    raise NotImplementedError


def growth_factor(n_from, n_to):
    """By what factor the cell count grows from n_from to n_to tokens (a number).

    中文：序列长度从 n_from 变为 n_to 时，格子数变为原来的几倍（一个数）。
    """
    raise NotImplementedError
