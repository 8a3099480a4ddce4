"""The score matrix with numpy / 用 numpy 算分数矩阵."""

import numpy as np


def dot(q, k):
    """The dot product of two 1-D vectors (a number). / 两个向量的点积（一个数）。"""
    raise NotImplementedError


def score_matrix(Q, K):
    """(T, d) queries and (T, d) keys -> the (T, T) matrix of q_i·k_j (not scaled).

    中文：(T, d) 的 Q 和 (T, d) 的 K，返回 (T, T) 矩阵，第 i 行第 j 列为 q_i·k_j（不缩放）。
    """
    raise NotImplementedError


def cosine(q, k):
    """The cosine of the angle between q and k. / q 与 k 夹角的余弦。"""
    raise NotImplementedError
