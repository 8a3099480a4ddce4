"""GQA: which KV head serves a query head / GQA：哪个 KV 头服务哪个 q 头."""


def kv_head_for(query_head, n_q_heads, n_kv_heads):
    """The KV head (counted from 0) that query head `query_head` (from 0) reads.

    EN: n_q_heads is a multiple of n_kv_heads; the groups are consecutive.
    中文：第 query_head 个 q 头（从 0 数）读的是第几个 KV 头（从 0 数）。n_q_heads 是 n_kv_heads
    的整数倍，每组是连续的一段 q 头。
    """
    raise NotImplementedError


def query_heads_served(kv_head, n_q_heads, n_kv_heads):
    """The query heads (from 0, ascending, as a list) that KV head `kv_head` serves.

    中文：第 kv_head 个 KV 头服务的所有 q 头（从 0 数，升序，返回列表）。
    """
    raise NotImplementedError


def anchor_kv_heads():
    """Type in three ints: the KV heads of the anchor's query heads 5, 6 and 23 (from 0).

    中文：锚点模型（24 个 q 头、4 个 KV 头）第 5、6、23 个 q 头各读第几个 KV 头（都从 0 数）。
    """
    raise NotImplementedError
