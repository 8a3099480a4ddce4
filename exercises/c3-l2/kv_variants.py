"""The KV cache of MHA, MQA, GQA and MLA / MHA、MQA、GQA 与 MLA 的 KV 缓存.

Model sizes are in models/*.json (load them with json). BF16: 2 bytes per number.
模型尺寸在 models/*.json 里（用 json 读取）。BF16：每个数 2 字节。
Byte answers: an int of bytes or a string such as "3 MiB" (MiB = 1024² bytes).
字节答案：整数字节数，或 "3 MiB" 这样的字符串（MiB = 1024² 字节）。
"""


def kv_bytes_per_token(config, variant, bytes_per_elem=2):
    """KV bytes per token; variant is "mha", "mqa" or "gqa".

    中文：每个 token 的 KV 字节数；variant 为 "mha"、"mqa" 或 "gqa"。
    """
    raise NotImplementedError


def kv_bytes_full_context(config, variant, bytes_per_elem=2):
    """KV bytes of one request filling max_position_embeddings tokens. / 满上下文的字节数。"""
    raise NotImplementedError


def mla_bytes_per_token(config, bytes_per_elem=2):
    """MLA bytes per token: (kv_lora_rank + qk_rope_head_dim) numbers per layer.

    中文：MLA 每个 token 的字节数：每层 kv_lora_rank + qk_rope_head_dim 个数。
    """
    raise NotImplementedError


def anchor_mha_per_token():
    """By hand: the anchor model with MHA, bytes per token. / 手算：锚点模型 MHA，每 token。"""
    raise NotImplementedError


def anchor_gqa_full_context():
    """By hand: the anchor with GQA at its full 262,144-token context. / 手算：GQA，满上下文。"""
    raise NotImplementedError


def glm_full_context():
    """By hand: GLM-5.3 (MLA) at its full 1,048,576-token context. / 手算：GLM-5.3 满上下文。"""
    raise NotImplementedError


def deepseek_67b_million_tokens():
    """By hand: DeepSeek LLM 67B (GQA) for one request of 1M = 2**20 tokens.

    中文：手算：DeepSeek LLM 67B（GQA）一条 1M = 2²⁰ 个 token 的请求。
    """
    raise NotImplementedError
