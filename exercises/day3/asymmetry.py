"""Why S = Q Kᵀ is not symmetric / 为什么 S = Q Kᵀ 不对称."""

import numpy as np


def score_matrix(X, W_q, W_k):
    """The raw score table S: S[i, j] = q_i · k_j (no scaling, no mask).

    EN: X is (n, d_model), one row per token; W_q and W_k are (d_model, d_head).
    Return S = (X W_q)(X W_k)ᵀ as an (n, n) array: row i belongs to token i's query,
    column j to token j's key.

    中文：X 为 (n, d_model)，每行一个 token；W_q、W_k 为 (d_model, d_head)。返回 (n, n) 的
    S = (X W_q)(X W_k)ᵀ：第 i 行属于 token i 的 q，第 j 列属于 token j 的 k。不缩放、不加掩码。
    """
    raise NotImplementedError


def notes_s23_s32():
    """Type in (S₂₃, S₃₂) for the notes' q and k, indices counted from 1.

    EN: q1=[0,1], q2=[1,1], q3=[1,0]; k1=[1,0], k2=[0,1], k3=[1,1]. Return a pair of
    numbers: the score of token 2's query against token 3's key, then the reverse.

    中文：用笔记里的 q、k（同上），下标从 1 开始数。返回两个数：token 2 的 q 对 token 3 的 k
    的分数，以及反过来 token 3 的 q 对 token 2 的 k 的分数。
    """
    raise NotImplementedError
