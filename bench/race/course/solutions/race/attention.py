"""Reference: causal single-head attention."""

import numpy as np


def attention(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    n_q, n_k = len(Q), len(K)
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    hidden = np.triu(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q + 1)
    scores = np.where(hidden, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ V, weights
