"""Row weights under the causal mask: one known mistake (bench corpus).

Forms: an ndarray; nested lists of floats; a tuple.
"""

import numpy as np


def masked_row(scores, position):
    s = np.array(scores, dtype=float)
    s[position + 1:] = -np.inf   # the known mistake: one token too far
    w = np.exp(s - s[:position].max())
    return w / w.sum()


def gei_le_rows():
    return [[0.266, 0.015, 0.381, 0.013, 0.325],
            [0.394, 0.022, 0.565, 0.019, 0.0]]


def sink_row():
    return (0.30, 0.413, 0.288)
