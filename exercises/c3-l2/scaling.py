"""The dot product's spread grows like sqrt(d) / 点积的标准差随 √d 增长."""


def dot_product_std(d):
    """Std of q·k for d independent mean-0, variance-1 entries (d may be a sympy Symbol).

    中文：d 个独立、均值 0、方差 1 的分量时 q·k 的标准差（d 可能是 sympy 符号）。
    """
    raise NotImplementedError


def anchor_dot_std():
    """The same for 256-dimensional heads, by hand (a number). / 每头 256 维时，手算。"""
    raise NotImplementedError
