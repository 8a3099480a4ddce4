"""Reference: temperature and softmax, plus known wrong versions."""

import numpy as np


def softmax(logits, T=1.0):
    z = np.asarray(logits, dtype=float) / T
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def greedy(logits):
    return int(np.argmax(np.asarray(logits)))


# ---- known wrong versions (misconceptions), graded on the trusted side only

def softmax_times_t(logits, T=1.0):
    return softmax(np.asarray(logits, dtype=float) * T * T, T)


def softmax_wrong_axis(logits, T=1.0):
    z = np.asarray(logits, dtype=float) / T
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def softmax_no_max_subtraction(logits, T=1.0):
    z = np.asarray(logits, dtype=float) / T
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)


def softmax_global_max(logits, T=1.0):
    """One maximum for the whole batch: rows far below it underflow to 0 / 0."""
    z = np.asarray(logits, dtype=float) / T
    with np.errstate(under="ignore", invalid="ignore"):
        e = np.exp(z - z.max())
        return e / e.sum(axis=-1, keepdims=True)
