"""Why softmax, not sharing by proportion / 为什么用 softmax，而不是按比例分."""

import numpy as np


def share_by_proportion(scores):
    """Each score divided by the sum of the scores (an array). / 每个分数除以分数之和。"""
    raise NotImplementedError


def softmax_shares(scores):
    """The softmax of the scores (an array, stable for large scores). / 分数的 softmax。"""
    raise NotImplementedError


def car_share_percent():
    """The third score's share in percent for scores 10, 3, -4 shared by proportion.

    中文：分数 10、3、−4 按比例分时，第三个分到的百分数（例如 12.5 表示 12.5%）。
    """
    raise NotImplementedError
