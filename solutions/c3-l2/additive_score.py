"""Reference: Bahdanau's additive score, score = vᵀ tanh(W₁q + W₂k)."""

import numpy as np

BY_HAND = dict(q=[1, 2], k=[1, -1], W1=[[0.5, 0], [1, -1]], W2=[[1, 1], [0, 2]], v=[2, -1])


def _a(x):
    return np.asarray(x, dtype=float)


def additive_score(q, k, W1, W2, v):
    return float(_a(v) @ np.tanh(_a(W1) @ _a(q) + _a(W2) @ _a(k)))


def additive_by_hand():
    return additive_score(**BY_HAND)


# ---- known wrong versions

def additive_score_no_tanh(q, k, W1, W2, v):
    return float(_a(v) @ (_a(W1) @ _a(q) + _a(W2) @ _a(k)))


def additive_score_tanh_per_term(q, k, W1, W2, v):
    return float(_a(v) @ (np.tanh(_a(W1) @ _a(q)) + np.tanh(_a(W2) @ _a(k))))


def additive_score_transposed(q, k, W1, W2, v):
    if _a(W1).shape[0] != _a(W1).shape[1]:
        return float("nan")   # the student's code would fail on a matrix that is not square
    return float(_a(v) @ np.tanh(_a(W1).T @ _a(q) + _a(W2).T @ _a(k)))


def additive_score_no_v(q, k, W1, W2, v):
    return float(np.tanh(_a(W1) @ _a(q) + _a(W2) @ _a(k)).sum())


def additive_by_hand_no_tanh():
    return additive_score_no_tanh(**BY_HAND)


def additive_by_hand_tanh_per_term():
    return additive_score_tanh_per_term(**BY_HAND)


def additive_by_hand_transposed():
    return additive_score_transposed(**BY_HAND)


def additive_by_hand_no_v():
    return additive_score_no_v(**BY_HAND)
