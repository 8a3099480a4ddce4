"""Same key, different value / 同样的 k，不同的 v."""


def attend(q, K, V):
    """One query's attention output over the given tokens (no scaling, no mask).

    EN: q has length d; K is (n, d), one key per row; V is (n, d_v), one value per row.
    Every given token is visible to q. Return the output, a vector of length d_v.
    中文：q 长 d；K 为 (n, d)，每行一个 k；V 为 (n, d_v)，每行一个 v。给出的 token q 都能看到。
    返回长度为 d_v 的输出向量。不缩放，不加掩码。
    """
    raise NotImplementedError


def q7_contributions():
    """Type in what each token adds to token 3's output in self-test question 7.

    EN: q3=[0,2]; k1=[1,0], k2=[0,1], k3=[1,0]; v1=[2,0], v2=[0,2], v3=[4,4]; no scaling.
    Return a 3×2 array: row j is token j's weight times its v.
    中文：自测第 7 题（q3=[0,2]，k、v 如上，不缩放）。
    返回 3×2 数组：第 j 行是 token j 的权重乘以它的 v。
    """
    raise NotImplementedError
