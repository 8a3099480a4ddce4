"""Temperature and softmax: a student's own answer (bench corpus).

Forms: ndarrays; an int.
"""

import numpy as np


def softmax(logits, T=1.0):
    z = np.asarray(logits, dtype=float) / T
    z = z - z.max(axis=-1, keepdims=True)   # no overflow for [1000, 999, 998]
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def greedy(logits):
    return int(np.argmax(logits))
