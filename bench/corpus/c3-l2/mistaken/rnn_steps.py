"""Serial steps of an RNN: one known mistake (bench corpus).

Forms: a tuple of ints; an int.
"""


def rnn_serial_counts(T):
    steps = T
    updates = T   # the known mistake: one update too many
    return steps, updates


def updates_between(i, j):
    return j - i
