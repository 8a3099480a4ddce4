"""Reference: dot products and the T x T score matrix with numpy."""

import numpy as np


def dot(q, k):
    return float(np.dot(np.asarray(q, dtype=float), np.asarray(k, dtype=float)))


def score_matrix(Q, K):
    return np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T


def cosine(q, k):
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    return float(q @ k / (np.linalg.norm(q) * np.linalg.norm(k)))


# ---- known wrong versions

def score_matrix_kq(Q, K):
    return np.asarray(K, dtype=float) @ np.asarray(Q, dtype=float).T


def dot_elementwise(q, k):
    return np.asarray(q, dtype=float) * np.asarray(k, dtype=float)
