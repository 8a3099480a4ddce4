"""Quiz: why the dot product / 概念小测：为什么是点积."""


def dot_product_is_the_only_choice():
    """Is the dot product the only mathematically correct way to score q against k?

    Return True or False. / 点积是给 q、k 打分唯一正确的方式吗？返回 True 或 False。
    """
    raise NotImplementedError


def cosine_measures():
    """What does cos θ in q·k = |q||k|cos θ measure?

    Options: "direction", "length", "both".
    中文：q·k = |q||k|cos θ 中的 cos θ 衡量什么？选项："direction"（方向）、"length"（长度）、
    "both"（两者）。
    """
    raise NotImplementedError


def additive_cost():
    """What makes naive additive attention expensive? Return a set of options from:

    "per_pair_network" (every pair goes through tanh, not one matrix product),
    "big_intermediate_tensor" (a T x T x d_a tensor), "more_heads", "negative_scores".
    中文：朴素的加性注意力贵在哪里？从以下选项中选出所有正确的，返回集合：
    "per_pair_network"（每一对都要单独过 tanh，无法一次矩阵乘）、
    "big_intermediate_tensor"（T × T × d_a 的中间张量）、"more_heads"、"negative_scores"。
    """
    raise NotImplementedError


def why_softmax():
    """Why turn scores into weights with softmax instead of sharing by proportion?

    Options: "negative_scores" (proportions break when scores are negative), "speed",
    "fewer_params".
    中文：为什么用 softmax 而不是按比例分？选项："negative_scores"（有负分时按比例分会出错）、
    "speed"、"fewer_params"。
    """
    raise NotImplementedError


def why_divide_by_sqrt_d():
    """Why are the scores divided by sqrt(d) (next lesson's topic)?

    Options: "softmax_saturates" (large spreads make softmax nearly one-hot),
    "saves_memory", "negative_scores".
    中文：为什么分数要除以 √d？选项："softmax_saturates"（分差太大时 softmax 几乎独占）、
    "saves_memory"、"negative_scores"。
    """
    raise NotImplementedError
