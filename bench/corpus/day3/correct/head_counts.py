"""Counting per head: a student's own answer (bench corpus).

Forms: ints.
"""


def wq_numbers_per_head(d_model, n_heads):
    d_head = d_model // n_heads
    return d_model * d_head


def score_cells_per_layer(n, n_heads):
    return n_heads * n ** 2
