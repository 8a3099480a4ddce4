"""Feeding prefixes: one known mistake (bench corpus).

Forms: tuples of ints; a list; an int.
"""


def prefix_feeding_cost(T):
    return (T, T * (T + 1) // 2)


def masked_forward_cost(T):
    return [1, T]


def questions_with_answer(T):
    return T   # the known mistake: the last prefix has no next token
