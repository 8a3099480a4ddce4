"""Attention by hand / 手算注意力.

Type in the answers you worked out on paper: nested lists, ndarrays or exact
sympy expressions all work. 把纸上算出的答案填进来：嵌套列表、ndarray 或精确的
sympy 表达式都可以。
"""


def seed_example_weights():
    """The 3×3 causal, scaled attention weights of the notes' example.

    EN: Row i holds token i's weights over tokens 1..3 (q1=[0,1], q2=[1,1],
    q3=[1,0]; k1=[1,0], k2=[0,1], k3=[1,1]; scores divided by √2).
    中文：第 i 行是 token i 对 token 1..3 的权重（q、k 如上，点积除以 √2，有因果掩码）。
    """
    raise NotImplementedError


def seed_example_output():
    """The 3×2 attention outputs of the same example (v1=[10,0], v2=[0,10], v3=[5,5]).

    中文：同一个例子中 3 个 token 的注意力输出，3×2。
    """
    raise NotImplementedError


def selftest_q7_output():
    """Token 3's output in self-test question 7: a vector of length 2.

    EN: No scaling, causal mask; q3=[0,2]; k1=[1,0], k2=[0,1], k3=[1,0];
    v1=[2,0], v2=[0,2], v3=[4,4].
    中文：不缩放，有因果掩码；q3=[0,2]，k、v 如上。返回长度为 2 的向量。
    """
    raise NotImplementedError
