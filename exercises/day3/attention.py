"""Single-head attention / 单头注意力."""

import numpy as np


def attention(Q, K, V, causal=True):
    """Scaled dot-product attention for one head. Returns (output, weights).

    EN: Q is (n_q, d), K is (n_k, d), V is (n_k, d_v). Scores are Q @ K.T / sqrt(d),
    weights are the row-wise softmax of the scores, output is weights @ V.
    With ``causal`` the queries are the LAST n_q positions: query i sees keys
    0 .. n_k - n_q + i. Do not modify the inputs.

    中文：Q 为 (n_q, d)，K 为 (n_k, d)，V 为 (n_k, d_v)。分数是 Q @ K.T / sqrt(d)，
    权重是分数的逐行 softmax，输出是 weights @ V。``causal`` 为真时，这些 query
    是序列的最后 n_q 个位置：第 i 个 query 能看到第 0 .. n_k - n_q + i 个 key。
    不要修改输入。
    """
    raise NotImplementedError
