"""The intermediate tensor of additive attention / 加性注意力的中间张量.

Byte answers: an int of bytes or a string such as "3 GiB" (GiB = 1024**3 bytes).
字节答案：整数字节数，或 "3 GiB" 这样的字符串（GiB = 1024³ 字节）。
"""


def additive_tensor_bytes(T, d_a, bytes_per_elem=2):
    """Bytes of a T x T x d_a tensor. / T × T × d_a 张量的字节数。"""
    raise NotImplementedError


def score_matrix_bytes(T, bytes_per_elem=2):
    """Bytes of a T x T score matrix. / T × T 分数矩阵的字节数。"""
    raise NotImplementedError


def additive_example():
    """By hand: the additive tensor at T = 4096, d_a = 256, BF16. / 手算。"""
    raise NotImplementedError


def scores_example():
    """By hand: the score matrix at T = 4096, BF16. / 手算。"""
    raise NotImplementedError
