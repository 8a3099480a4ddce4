"""Additive (Bahdanau) scores: one known mistake (bench corpus).

Forms: a float; an exact sympy number (tanh).
"""

import numpy as np
import sympy


def additive_score(q, k, W1, W2, v):
    hidden = np.tanh(np.asarray(W1) @ np.asarray(q) + np.asarray(W2) @ np.asarray(k))
    return float(np.dot(v, np.arctanh(hidden)))   # the known mistake: no tanh


def additive_by_hand():
    # W1 q = [0.5, -1], W2 k = [0, -2]: v . tanh([0.5, -3]) = 2 tanh(1/2) + tanh(3)
    return 2 * sympy.tanh(sympy.Rational(1, 2)) + sympy.tanh(3)
