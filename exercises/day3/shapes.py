"""Shapes at real sizes / 用真实尺寸写形状.

Shapes are tuples of ints, e.g. (4096, 128); a vector's length is an int.
形状用整数元组表示，例如 (4096, 128)；向量的长度是一个整数。
"""


def q_vector_length(d_model, n_heads):
    """The length of one head's q vector (an int). / 一个头的 q 向量长度（整数）。"""
    raise NotImplementedError


def wq_shape_per_head(d_model, n_heads):
    """The shape of one head's W^q. / 一个头的 W^q 的形状。"""
    raise NotImplementedError


def wq_shape_layer(d_model, n_heads):
    """The shape of the whole layer's W^q (all heads side by side). / 整层 W^q 的形状。"""
    raise NotImplementedError


def wk_shape_layer(d_model, n_heads, n_kv_heads):
    """The shape of the whole layer's W^k with n_kv_heads KV heads. / 整层 W^k 的形状。"""
    raise NotImplementedError


def attention_params_per_layer(d_model, n_heads, n_kv_heads):
    """Parameters of W^q, W^k, W^v and W^o together (an int). / 四个矩阵的参数总数。"""
    raise NotImplementedError


def prefill_shapes(n, d_model, n_heads):
    """Shapes for one head in prefill over n tokens.

    EN: Return a dict with keys "X", "Q", "Q_h", "scores", "weights", "head_out",
    "concat", "out" (as in the notes' table), each a shape tuple.
    中文：返回字典，键为 "X"、"Q"、"Q_h"、"scores"、"weights"、"head_out"、"concat"、
    "out"，值为形状元组。
    """
    raise NotImplementedError


def decode_shapes(n_cached, d_model, n_heads):
    """Shapes for one head when one new token arrives with n_cached tokens cached.

    EN: Return a dict with keys "x", "q_h", "scores", "weights", "head_out", "out".
    中文：缓存里已有 n_cached 个 token，来了一个新 token。返回字典，键为 "x"、"q_h"、
    "scores"、"weights"、"head_out"、"out"。
    """
    raise NotImplementedError
