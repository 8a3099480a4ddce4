"""GQA groups: a student's own answer (bench corpus).

Forms: ints; a range as a list; a tuple of ints.
"""


def kv_head_for(query_head, n_q_heads, n_kv_heads):
    per_group = n_q_heads // n_kv_heads
    return query_head // per_group


def query_heads_served(kv_head, n_q_heads, n_kv_heads):
    per_group = n_q_heads // n_kv_heads
    return list(range(kv_head * per_group, (kv_head + 1) * per_group))


def anchor_kv_heads():
    return (0, 1, 3)   # 6 query heads a group: 5 -> 0, 6 -> 1, 23 -> 3
