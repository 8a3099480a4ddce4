"""A very low temperature: a student's own answer (bench corpus).

Forms: lists of ints and of floats in scientific notation.
"""


def t01_scaled_logits():
    return [20, 10, 0]


def t01_probabilities():
    return [0.99995, 4.54e-05, 2.06e-09]
