"""Reference: single-head scaled dot-product attention, plus known wrong versions."""

import numpy as np


def _softmax(scores, axis=-1):
    scores = scores - scores.max(axis=axis, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=axis, keepdims=True)


def _attend(Q, K, V, causal, scale, offset=None, axis=-1):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    n_q, n_k = Q.shape[0], K.shape[0]
    scores = Q @ K.T / scale(Q.shape[1])
    if causal:
        k = n_k - n_q + 1 if offset is None else offset
        scores = np.where(np.triu(np.ones((n_q, n_k), dtype=bool), k=k), -np.inf, scores)
    weights = _softmax(scores, axis=axis)
    return weights @ V, weights


def attention(Q, K, V, causal=True):
    return _attend(Q, K, V, causal, np.sqrt)


# ---- known wrong versions

def attention_no_mask(Q, K, V, causal=True):
    return _attend(Q, K, V, False, np.sqrt)


def attention_unscaled(Q, K, V, causal=True):
    return _attend(Q, K, V, causal, lambda d: 1.0)


def attention_scaled_by_d(Q, K, V, causal=True):
    return _attend(Q, K, V, causal, float)


def attention_mask_top_left(Q, K, V, causal=True):
    return _attend(Q, K, V, causal, np.sqrt, offset=1)


def attention_softmax_axis0(Q, K, V, causal=True):
    with np.errstate(invalid="ignore"):
        out, w = _attend(Q, K, V, causal, np.sqrt, axis=0)
    return np.nan_to_num(out), np.nan_to_num(w)


def attention_returns_weights(Q, K, V, causal=True):
    _, weights = attention(Q, K, V, causal)
    return weights, weights
