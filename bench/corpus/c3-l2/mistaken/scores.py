"""Scores from dot products: one known mistake (bench corpus).

Forms: numpy floats; an ndarray.
"""

import numpy as np


def dot(q, k):
    return np.dot(q, k)


def score_matrix(Q, K):
    return np.asarray(K) @ np.asarray(Q).T   # the known mistake: transposed


def cosine(q, k):
    return dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k))
