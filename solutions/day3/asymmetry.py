"""Reference: the raw score table S = Q Kᵀ is not symmetric, plus known wrong versions."""

import numpy as np

Q = np.array([[0, 1], [1, 1], [1, 0]], dtype=float)
K = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)


def score_matrix(X, W_q, W_k):
    X = np.asarray(X, dtype=float)
    return (X @ np.asarray(W_q, dtype=float)) @ (X @ np.asarray(W_k, dtype=float)).T


def notes_s23_s32():
    S = Q @ K.T
    return (float(S[1, 2]), float(S[2, 1]))


# ---- known wrong versions

def score_matrix_same_matrix(X, W_q, W_k):
    return score_matrix(X, W_q, W_q)


def score_matrix_keys_times_queries(X, W_q, W_k):
    return score_matrix(X, W_q, W_k).T
