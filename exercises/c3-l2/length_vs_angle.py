"""Length against angle: the dot product and the cosine / 长度与夹角：点积和余弦."""


def dot_score(q, k):
    """The dot product q·k of two 1-D vectors of one length (a float).

    中文：两个等长一维向量的点积 q·k（一个浮点数）。
    """
    raise NotImplementedError


def cosine_score(q, k):
    """The cosine of the angle between q and k (a float between -1 and 1).

    EN: Neither vector is all zeros.
    中文：q 与 k 夹角的余弦（-1 到 1 之间的浮点数）。两个向量都不全为 0。
    """
    raise NotImplementedError


def doubled_query_scores():
    """Type in four numbers for k = [2, 2], q = [2, 3] and the doubled q = [4, 6].

    EN: Return (dot of q, dot of the doubled q, cosine of q, cosine of the doubled q),
    each against k; two decimals are enough.
    中文：k = [2, 2]，q = [2, 3]，q 翻倍后为 [4, 6]。返回 (q 的点积, 翻倍后的点积, q 的余弦,
    翻倍后的余弦)，都是对 k 而言；保留两位小数即可。
    """
    raise NotImplementedError
