"""Reference: one row of weights with and without the causal mask; the sink row."""

import numpy as np

# the lesson's sentence in the order this exercise takes: 小明, 把, 苹果, 给了, 小王
GEI_LE_SCORES = [1.84, -1.04, 2.2, -1.2, 2.04]   # already divided by √4
GEI_LE_POSITION = 4
SINK_SCORES = [0.04, 0.36, 0.00]


def _softmax(s):
    s = np.asarray(s, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum()


def masked_row(scores, position):
    s = np.asarray(scores, dtype=float)
    w = np.zeros(len(s))
    w[:position] = _softmax(s[:position])
    return w


def gei_le_rows():
    s = GEI_LE_SCORES
    return np.array([masked_row(s, len(s)), masked_row(s, GEI_LE_POSITION)])


def sink_row():
    return _softmax(SINK_SCORES)


# ---- known wrong versions

def masked_row_ignores_position(scores, position):
    return _softmax(scores)


def masked_row_after_softmax(scores, position):
    w = _softmax(scores)
    w[position:] = 0.0
    return w


def masked_row_hides_self(scores, position):
    s = np.asarray(scores, dtype=float)
    w = np.zeros(len(s))
    if position > 1:
        w[:position - 1] = _softmax(s[:position - 1])
    return w


def masked_row_zero_based(scores, position):
    return masked_row(scores, min(position + 1, len(scores)))


def gei_le_rows_no_mask():
    s = GEI_LE_SCORES
    return np.array([_softmax(s), _softmax(s)])


def gei_le_rows_after_softmax():
    s = GEI_LE_SCORES
    return np.array([_softmax(s), masked_row_after_softmax(s, GEI_LE_POSITION)])


def gei_le_rows_hides_self():
    s = GEI_LE_SCORES
    return np.array([_softmax(s), masked_row_hides_self(s, GEI_LE_POSITION)])


def gei_le_rows_scaled_twice():
    s = np.asarray(GEI_LE_SCORES) / 2
    return np.array([masked_row(s, len(s)), masked_row(s, GEI_LE_POSITION)])


def sink_row_proportion():
    s = np.asarray(SINK_SCORES)
    return s / s.sum()


def sink_row_scores():
    return np.asarray(SINK_SCORES)
