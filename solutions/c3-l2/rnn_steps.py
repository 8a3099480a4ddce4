"""Reference: an RNN layer's serial chain over T tokens."""


def rnn_serial_counts(T):
    # steps 1..T each need the state of the step before; token 1 is written into h_1
    # and reaches h_T after T - 1 further updates
    return (T, T - 1)


def updates_between(i, j):
    return j - i


# ---- known wrong versions

def rnn_serial_counts_inclusive(T):
    return (T, T)


def rnn_serial_counts_steps_as_updates(T):
    return (T - 1, T - 1)


def rnn_serial_counts_parallel(T):
    return (1, T - 1)


def updates_between_inclusive(i, j):
    return j - i + 1
