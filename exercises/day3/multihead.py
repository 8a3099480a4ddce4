"""Multi-head attention and grouped-query attention / 多头注意力与 GQA.

You may import your own attention() from attention.py if you like:
可以直接复用你在 attention.py 里写的 attention()：
    from attention import attention
"""

import numpy as np


def split_heads(X, n_heads):
    """(n, d_model) -> (n_heads, n, d_head); head h takes the h-th block of columns.

    中文：把 (n, d_model) 切成 (n_heads, n, d_head)，第 h 个头取第 h 段连续的列。
    """
    raise NotImplementedError


def merge_heads(H):
    """(n_heads, n, d_head) -> (n, n_heads * d_head), the inverse of split_heads.

    中文：split_heads 的逆操作。
    """
    raise NotImplementedError


def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    """Multi-head (optionally grouped-query) attention; returns (n, d_model).

    EN: Wq, Wo: (d_model, d_model); Wk, Wv: (d_model, n_kv_heads * d_head).
    Query head h uses KV group h // (n_heads // n_kv_heads). Scale each head's
    scores by sqrt(d_head), apply the causal mask when ``causal``, concatenate
    the heads and multiply by Wo. n_kv_heads=None means n_heads.

    中文：Wq、Wo 为 (d_model, d_model)；Wk、Wv 为 (d_model, n_kv_heads * d_head)。
    第 h 个 q 头使用第 h // (n_heads // n_kv_heads) 组 k、v。每个头的分数除以
    sqrt(d_head)，``causal`` 为真时加因果掩码，拼接后乘 Wo。
    """
    raise NotImplementedError
