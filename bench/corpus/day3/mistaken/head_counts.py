"""Counting per head: one known mistake (bench corpus)."""


def wq_numbers_per_head(d_model, n_heads):
    d_head = d_model // n_heads
    return d_model * d_head


def score_cells_per_layer(n, n_heads):
    return n ** 2   # the known mistake
