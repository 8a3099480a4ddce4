"""Proportion against softmax: one known mistake (bench corpus).

Forms: ndarrays; a Fraction.
"""

from fractions import Fraction

import numpy as np


def share_by_proportion(scores):
    s = np.asarray(scores, dtype=float)
    return s / s.sum()


def softmax_shares(scores):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - np.max(s))
    return e / e.sum()


def car_share_percent():
    return Fraction(4, 10 + 3 + 4) * 100   # the known mistake: absolute values
