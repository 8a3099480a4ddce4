"""Reference: which KV head serves which query head under GQA (0-based, consecutive groups)."""

ANCHOR_Q_HEADS, ANCHOR_KV_HEADS = 24, 4
ASKED = (5, 6, 23)


def kv_head_for(query_head, n_q_heads, n_kv_heads):
    return query_head // (n_q_heads // n_kv_heads)


def query_heads_served(kv_head, n_q_heads, n_kv_heads):
    group = n_q_heads // n_kv_heads
    return list(range(kv_head * group, (kv_head + 1) * group))


def anchor_kv_heads():
    return tuple(kv_head_for(h, ANCHOR_Q_HEADS, ANCHOR_KV_HEADS) for h in ASKED)


# ---- known wrong versions

def kv_head_for_round_robin(query_head, n_q_heads, n_kv_heads):
    return query_head % n_kv_heads


def kv_head_for_by_kv_count(query_head, n_q_heads, n_kv_heads):
    return query_head // n_kv_heads


def kv_head_for_one_based(query_head, n_q_heads, n_kv_heads):
    return kv_head_for(query_head, n_q_heads, n_kv_heads) + 1


def query_heads_served_round_robin(kv_head, n_q_heads, n_kv_heads):
    return list(range(kv_head, n_q_heads, n_kv_heads))


def anchor_kv_heads_round_robin():
    return tuple(h % ANCHOR_KV_HEADS for h in ASKED)


def anchor_kv_heads_by_kv_count():
    return tuple(h // ANCHOR_KV_HEADS for h in ASKED)


def anchor_kv_heads_one_based():
    return tuple(kv_head_for(h, ANCHOR_Q_HEADS, ANCHOR_KV_HEADS) + 1 for h in ASKED)
