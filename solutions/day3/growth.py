"""Reference: the attention matrix grows with the square of the sequence length."""


def attention_matrix_cells(n):
    return n * n


def growth_factor(n_from, n_to):
    return (n_to / n_from) ** 2


# ---- known wrong versions

def growth_factor_linear(n_from, n_to):
    return n_to / n_from


def attention_matrix_cells_linear(n):
    return n


def growth_factor_doubled(n_from, n_to):
    return n_to / n_from * 2


def attention_matrix_cells_doubled(n):
    return n + n
