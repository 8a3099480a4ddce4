"""A student's causal attention, written apart from the reference."""

import numpy as np


def attention(Q, K, V):
    Q, K, V = np.array(Q, float), np.array(K, float), np.array(V, float)
    offset = len(K) - len(Q)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    for i in range(len(Q)):
        scores[i, offset + i + 1:] = -np.inf
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w
