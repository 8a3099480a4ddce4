"""Temperature and softmax / 温度与 softmax.

Fill in the two functions below, then run ``attn-grade day3``.
填好下面两个函数，然后运行 ``attn-grade day3``。
"""

import numpy as np


def softmax(logits, T=1.0):
    """Probabilities from logits at temperature T.

    EN: Divide ``logits`` by ``T``, then apply softmax along the last axis, so
    each row sums to 1. ``logits`` may be a list or an ndarray of any number
    of dimensions. Must stay finite for logits like [1000, 999, 998].
    Returns an ndarray of the same shape.

    中文：把 ``logits`` 除以 ``T``，再沿最后一个轴做 softmax，使每一行之和为 1。
    ``logits`` 可以是列表，也可以是任意维数的 ndarray。对 [1000, 999, 998]
    这样的输入也不能溢出。返回同样形状的 ndarray。
    """
    raise NotImplementedError


def greedy(logits):
    """Greedy decoding / 贪心解码.

    EN: Return the index (an int) of the largest logit in a 1-D ``logits``.
    中文：返回一维 ``logits`` 中最大值的下标（整数）。
    """
    raise NotImplementedError
