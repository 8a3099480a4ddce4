"""Concept quiz / 概念小测.

Return the option you choose (a string), or a set of options where the
question says "which ones". 返回你选的选项（字符串）；多选题返回选项集合。
"""


def weighted_sum_of():
    """In attention's output, what is summed with the weights?

    Options: "q", "k", "v", "weights".
    中文：注意力输出里，被权重加权求和的是什么？选项同上。
    """
    raise NotImplementedError


def cached_during_decode():
    """Which vectors of earlier tokens are kept in the cache during decode?

    Return a set of options from: "q", "k", "v".
    中文：decode 阶段，前面 token 的哪些向量要缓存？返回选项集合。
    """
    raise NotImplementedError


def multihead_adds_parameters():
    """Does splitting attention into heads add parameters? Return True or False.

    中文：把注意力切成多个头会增加参数量吗？返回 True 或 False。
    """
    raise NotImplementedError


def first_token_output():
    """Under the causal mask, what is the first token's attention output?

    Options: "own_v" (its own v), "mix_of_all_v" (a weighted mix of every token's v),
    "zeros".
    中文：因果掩码下，第一个 token 的注意力输出是什么？
    选项："own_v"（它自己的 v）、"mix_of_all_v"（所有 token 的 v 按权重的混合）、"zeros"（全零）。
    """
    raise NotImplementedError


def why_separate_wq_wk():
    """Why do q and k come from two different matrices?

    Options: "asymmetry" (how much A attends to B may differ from B to A),
    "speed" (it is faster), "fewer_params" (it saves parameters).
    中文：q 和 k 为什么用两个不同的矩阵？
    选项："asymmetry"（A 看 B 和 B 看 A 的强度可以不同）、"speed"（更快）、
    "fewer_params"（参数更少）。
    """
    raise NotImplementedError


def gqa_reduces():
    """What does grouped-query attention reduce? Return a set of options from:

    "q_heads" (the number of query heads), "kv_params" (the parameters of W^k and W^v),
    "kv_cache" (the KV cache), "attention_weights" (the weights computed per head).
    中文：GQA 减少了什么？从以下选项中选出所有正确的，返回集合：
    "q_heads"（q 头数）、"kv_params"（W^k、W^v 的参数）、"kv_cache"（KV cache）、
    "attention_weights"（每个头算出的权重）。
    """
    raise NotImplementedError


def decode_recomputes_all():
    """With a KV cache, does a decode step recompute attention for every earlier token?

    Return True or False.
    中文：有 KV cache 时，decode 的每一步要为前面所有 token 重新计算注意力吗？返回 True 或 False。
    """
    raise NotImplementedError


def low_temperature_effect():
    """What does a low temperature (T = 0.1) do to the output distribution?

    Options: "sharper", "flatter".
    中文：低温度（T = 0.1）让输出分布变得怎样？选项："sharper"（更尖锐）、"flatter"（更平）。
    """
    raise NotImplementedError


def rope_adds_parameters():
    """Does RoPE (rotary position embedding) add parameters to the model? True or False.

    中文：RoPE（旋转位置编码）会给模型增加参数吗？返回 True 或 False。
    """
    raise NotImplementedError


def rope_changes():
    """What does RoPE change? Return a set of options from:

    "q_values" (the numbers in q), "k_values" (the numbers in k), "v_values" (the numbers
    in v), "shapes" (the shapes of q, k or v).
    中文：RoPE 改变了什么？从以下选项中选出所有正确的，返回集合：
    "q_values"（q 的数值）、"k_values"（k 的数值）、"v_values"（v 的数值）、
    "shapes"（q、k 或 v 的形状）。
    """
    raise NotImplementedError
