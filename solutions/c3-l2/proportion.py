"""Reference: sharing by proportion against softmax."""

import numpy as np


def share_by_proportion(scores):
    s = np.asarray(scores, dtype=float)
    return s / s.sum()


def softmax_shares(scores):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum()


def car_share_percent():
    return float(share_by_proportion([10, 3, -4])[2] * 100)


# ---- known wrong versions

def softmax_shares_no_exp(scores):
    return share_by_proportion(scores)


def softmax_shares_unnormalised(scores):
    s = np.asarray(scores, dtype=float)
    return np.exp(s - s.max())
