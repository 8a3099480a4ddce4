"""Reference: multi-head attention with grouped-query attention, plus wrong versions."""

import numpy as np


def split_heads(X, n_heads):
    X = np.asarray(X, dtype=float)
    n, d_model = X.shape
    return X.reshape(n, n_heads, d_model // n_heads).transpose(1, 0, 2)


def merge_heads(H):
    H = np.asarray(H, dtype=float)
    n_heads, n, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(n, n_heads * d_head)


def _attend(Q, K, V, causal):
    n_q, n_k = Q.shape[0], K.shape[0]
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    if causal:
        scores = np.where(np.triu(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q + 1),
                          -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def _mha(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads, causal, group_of):
    X = np.asarray(X, dtype=float)
    n_kv_heads = n_kv_heads or n_heads
    Q = split_heads(X @ np.asarray(Wq, dtype=float), n_heads)
    K = split_heads(X @ np.asarray(Wk, dtype=float), n_kv_heads)
    V = split_heads(X @ np.asarray(Wv, dtype=float), n_kv_heads)
    heads = [_attend(Q[h], K[group_of(h, n_heads, n_kv_heads)],
                     V[group_of(h, n_heads, n_kv_heads)], causal) for h in range(n_heads)]
    return merge_heads(np.stack(heads)) @ np.asarray(Wo, dtype=float)


def _consecutive(h, n_heads, n_kv_heads):
    return h // (n_heads // n_kv_heads)


def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    return _mha(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads, causal, _consecutive)


# ---- known wrong versions

def multi_head_attention_tiled(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    """np.tile(K, ...) instead of np.repeat: head h uses group h % n_kv_heads."""
    return _mha(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads, causal,
                lambda h, n_heads, n_kv: h % n_kv)


def multi_head_attention_no_mask(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    return _mha(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads, False, _consecutive)


def multi_head_attention_no_wo(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    return multi_head_attention(X, Wq, Wk, Wv, np.eye(np.shape(Wo)[0]), n_heads,
                                n_kv_heads, causal)


def split_heads_no_transpose(X, n_heads):
    X = np.asarray(X, dtype=float)
    n, d_model = X.shape
    return X.reshape(n_heads, n, d_model // n_heads)
