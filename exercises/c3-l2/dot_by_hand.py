"""The dot product by hand / 手算点积."""


def dot_example():
    """Your q·k, worked out by hand (a number); `attn-grade show c3-l2 dot_by_hand` shows
    your vectors. / 手算你的 q·k（一个数）；向量见 attn-grade show c3-l2 dot_by_hand。"""
    raise NotImplementedError


def dot_from_angle(norm_q, norm_k, theta):
    """The dot product from |q|, |k| and the angle theta (radians); may get sympy symbols.

    中文：由 |q|、|k| 和夹角 theta（弧度）写出点积；参数可能是 sympy 符号。
    """
    raise NotImplementedError


def score_count(T):
    """How many q·k scores one head computes for T tokens (T may be a sympy Symbol).

    中文：T 个 token 时，一个头要算多少个 q·k 分数（T 可能是 sympy 符号）。
    """
    raise NotImplementedError
