"""Single-head attention: a student's own answer (bench corpus).

Forms: a tuple of ndarrays.
"""

import math

import numpy as np


def attention(Q, K, V, causal=True):
    n_q, d = Q.shape
    n_k = K.shape[0]
    scores = Q @ K.T / math.sqrt(d)
    if causal:
        offset = n_k - n_q
        rows = np.arange(n_q)[:, None]
        cols = np.arange(n_k)[None, :]
        scores = np.where(cols > rows + offset, -np.inf, scores)
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ V, weights
