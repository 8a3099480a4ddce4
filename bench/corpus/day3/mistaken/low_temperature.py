"""A very low temperature: one known mistake (bench corpus)."""


def t01_scaled_logits():
    return [20, 10, 0]


def t01_probabilities():
    return [1.0, 0.0, 0.0]   # the known mistake
