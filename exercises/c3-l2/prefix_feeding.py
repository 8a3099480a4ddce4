"""Every prefix one by one, or one masked forward / 逐个前缀喂，还是一次带掩码的前向."""


def prefix_feeding_cost(T):
    """Feeding every prefix of a T-token sentence as its own forward: (forwards, positions).

    EN: The prefixes have lengths 1, 2, ..., T (the whole sentence included); a forward over
    a prefix of length p computes p positions. Return two ints.
    中文：把 T 个 token 的句子的每个前缀（长度 1, 2, …, T，整句也算）各喂一次：返回 (前向次数,
    算过的位置总数)，两个整数。长度为 p 的前缀一次前向算 p 个位置。
    """
    raise NotImplementedError


def masked_forward_cost(T):
    """The same work as one forward over the T tokens with the causal mask: (forwards, positions).

    中文：用因果掩码对 T 个 token 做一次前向完成同样的事：返回 (前向次数, 算过的位置数)。
    """
    raise NotImplementedError


def questions_with_answer(T):
    """How many of the prefixes have their next token inside the sentence (an int).

    中文：这些前缀里，有多少个的下一个 token 还在句子里（可以对答案）。返回整数。
    """
    raise NotImplementedError
