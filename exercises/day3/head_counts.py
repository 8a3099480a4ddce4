"""Counting per head / 按头计数."""


def wq_numbers_per_head(d_model, n_heads):
    """How many numbers one head's W^q holds (an int).

    EN: Every head has its own W^q; its input is a whole token vector of length d_model,
    its output one head's q.
    中文：一个头的 W^q 里有多少个数（一个整数）。每个头有自己的 W^q：输入是长 d_model 的
    整个 token 向量，输出是这个头的 q。
    """
    raise NotImplementedError


def score_cells_per_layer(n, n_heads):
    """How many score cells one attention layer computes for n tokens (an int).

    EN: Count every cell of every head's score table, masked cells included.
    中文：n 个 token 时一层注意力一共算多少个分数格子（一个整数）；每个头的表都算，
    被掩码挡住的格子也算。
    """
    raise NotImplementedError
