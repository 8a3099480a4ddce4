"""Reference: the dot product grows with the length of q, the cosine does not."""

import numpy as np


def dot_score(q, k):
    return float(np.dot(np.asarray(q, dtype=float), np.asarray(k, dtype=float)))


def cosine_score(q, k):
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    return float(q @ k / (np.linalg.norm(q) * np.linalg.norm(k)))


def doubled_query_scores():
    q, k = np.array([2.0, 3.0]), np.array([2.0, 2.0])
    return (dot_score(q, k), dot_score(2 * q, k), cosine_score(q, k), cosine_score(2 * q, k))


# ---- known wrong versions

def dot_score_no_sum(q, k):
    return np.asarray(q, dtype=float) * np.asarray(k, dtype=float)


def cosine_score_no_sqrt(q, k):
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    return float(q @ k / ((q @ q) * (k @ k)))


def cosine_score_one_length(q, k):
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    return float(q @ k / np.linalg.norm(k))
