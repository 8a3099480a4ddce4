"""A very low temperature / 很低的温度.

Type in the numbers you worked out by hand: lists or ndarrays of three numbers.
把手算的结果填进来：三个数的列表或 ndarray。
"""


def t01_scaled_logits():
    """The notes' logits [2, 1, 0] after dividing by T = 0.1 (three numbers).

    中文：笔记的 logits [2, 1, 0] 除以 T = 0.1 之后的三个数。
    """
    raise NotImplementedError


def t01_probabilities():
    """The softmax probabilities of those logits at T = 0.1 (three numbers).

    EN: Keep the tiny probabilities; do not round them to 0. Two significant figures
    are enough.
    中文：T = 0.1 时这三个 logits 的 softmax 概率。很小的概率也要写出来，不要舍成 0；
    保留两位有效数字即可。
    """
    raise NotImplementedError
