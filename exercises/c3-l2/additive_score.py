"""The additive score by hand / 手算加性打分."""


def additive_score(q, k, W1, W2, v):
    """Bahdanau's additive score of q against k: vᵀ · tanh(W1 q + W2 k), one float.

    EN: q and k have length d; W1 and W2 are (d_a, d), applied as matrix times column vector;
    v has length d_a; tanh acts on each entry.
    中文：q、k 长 d；W1、W2 为 (d_a, d)，按“矩阵乘列向量”作用；v 长 d_a；tanh 逐个分量作用。
    返回一个浮点数。
    """
    raise NotImplementedError


def additive_by_hand():
    """Type in the additive score for the small matrices of the prompt (one number).

    EN: q=[1,2], k=[1,-1], W1=[[0.5,0],[1,-1]], W2=[[1,1],[0,2]], v=[2,-1] (rows listed).
    中文：q=[1,2]，k=[1,-1]，W1=[[0.5,0],[1,-1]]，W2=[[1,1],[0,2]]，v=[2,-1]（矩阵按行写）。
    """
    raise NotImplementedError
