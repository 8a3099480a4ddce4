"""How many bytes the KV cache takes: a student's own answer (bench corpus).

The hand answers are written in units, binary and decimal prefixes.

Forms: unit strings ("512 KiB", "0.131072 MB"); a sympy formula; ints.
"""


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    per_layer = 2 * n_kv_heads * head_dim * bytes_per_elem   # a k and a v per KV head
    return n_layers * per_layer


def kv_cache_bytes(config, n_tokens, bytes_per_elem=2):
    n_heads = config["num_attention_heads"]
    n_kv = config.get("num_key_value_heads", n_heads)
    head_dim = config.get("head_dim", config["hidden_size"] // n_heads)
    return n_tokens * kv_bytes_per_token(config["num_hidden_layers"], n_kv, head_dim,
                                         bytes_per_elem)


def llama2_7b_kv_per_token():
    # 2 (k, v) x 32 layers x 32 KV heads x 128 x 2 bytes
    return "512 KiB"


def llama3_8b_kv_per_token():
    # 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes
    return "0.131072 MB"
