"""How much MLA saves / MLA 省下多少."""


def latent_cache_bytes(n_layers, numbers_per_layer, bits_per_number):
    """Bytes per token of a cache that keeps numbers_per_layer numbers in every layer.

    EN: Each number takes bits_per_number bits; 8 bits make a byte. Return a number.
    中文：每层每个 token 存 numbers_per_layer 个数，每个数占 bits_per_number 比特，8 比特为 1 字节。
    返回每个 token 的字节数。
    """
    raise NotImplementedError


def reduction_percent(before, after):
    """By how many percent `after` is smaller than `before` (negative when it is larger).

    EN: 12.5 means an eighth less.
    中文：after 比 before 少百分之几（变大时为负）。12.5 表示少了八分之一。
    """
    raise NotImplementedError


def deepseek_v2_reductions():
    """Type in two percentages: DeepSeek-V2's cache against DeepSeek LLM 67B's, per token.

    EN: (in BF16, at 6 bits per number), to two decimals; the baseline stays 389,120 B in BF16.
    中文：(按 BF16 存, 按每个数 6 比特存)，保留两位小数；对比的 67B 始终是 BF16 的 389,120 B。
    """
    raise NotImplementedError
