"""Multi-head attention and GQA: a student's own answer (bench corpus).

Forms: ndarrays.
"""

import numpy as np


def split_heads(X, n_heads):
    n, d_model = X.shape
    return X.reshape(n, n_heads, d_model // n_heads).transpose(1, 0, 2)


def merge_heads(H):
    n_heads, n, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(n, n_heads * d_head)


def _causal_softmax(S):
    n = S.shape[-1]
    S = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, S)
    S = np.exp(S - S.max(axis=-1, keepdims=True))
    return S / S.sum(axis=-1, keepdims=True)


def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    n_kv_heads = n_kv_heads or n_heads
    Q = split_heads(X @ Wq, n_heads)
    K = split_heads(X @ Wk, n_kv_heads)
    V = split_heads(X @ Wv, n_kv_heads)
    group = n_heads // n_kv_heads
    heads = []
    for h in range(n_heads):
        S = Q[h] @ K[h // group].T / np.sqrt(Q.shape[-1])
        if causal:
            W = _causal_softmax(S)
        else:
            W = np.exp(S - S.max(axis=-1, keepdims=True))
            W /= W.sum(axis=-1, keepdims=True)
        heads.append(W @ V[h // group])
    return merge_heads(np.stack(heads)) @ Wo
