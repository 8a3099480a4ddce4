"""Single-head attention with a causal mask (the timing race's stub)."""


def attention(Q, K, V):
    raise NotImplementedError
