"""Reference: two tokens with the same key get the same weight, not the same content."""

import numpy as np

Q7 = np.array([0, 2], dtype=float)
K7 = np.array([[1, 0], [0, 1], [1, 0]], dtype=float)
V7 = np.array([[2, 0], [0, 2], [4, 4]], dtype=float)


def _weights(q, K, scale=1.0):
    s = np.asarray(K, dtype=float) @ np.asarray(q, dtype=float) / scale
    e = np.exp(s - s.max())
    return e / e.sum()


def attend(q, K, V):
    return _weights(q, K) @ np.asarray(V, dtype=float)


def q7_contributions():
    return _weights(Q7, K7)[:, None] * V7


# ---- known wrong versions

def _first_value_per_key(K, V):
    """Each row's v replaced by the v of the first row with an equal key."""
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float).copy()
    for j in range(len(K)):
        first = next(i for i in range(j + 1) if np.array_equal(K[i], K[j]))
        V[j] = V[first]
    return V


def _unique_keys(K, V):
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    keep = [j for j in range(len(K)) if not any(np.array_equal(K[i], K[j]) for i in range(j))]
    return K[keep], V[keep], keep


def attend_same_key_same_value(q, K, V):
    return attend(q, K, _first_value_per_key(K, V))


def attend_twins_merged(q, K, V):
    K1, V1, _ = _unique_keys(K, V)
    return attend(q, K1, V1)


def attend_weights(q, K, V):
    return _weights(q, K)


def attend_unnormalised(q, K, V):
    s = np.asarray(K, dtype=float) @ np.asarray(q, dtype=float)
    return np.exp(s - s.max()) @ np.asarray(V, dtype=float)


def q7_contributions_same_value():
    return _weights(Q7, K7)[:, None] * _first_value_per_key(K7, V7)


def q7_contributions_merged():
    K1, _, keep = _unique_keys(K7, V7)
    w = np.zeros(len(K7))
    w[keep] = _weights(Q7, K1)
    return w[:, None] * V7


def q7_contributions_scaled():
    return _weights(Q7, K7, np.sqrt(2))[:, None] * V7
