"""MHA, MQA, GQA and MLA caches: one known mistake (bench corpus).

Forms: unit strings in binary and decimal prefixes ("384 KiB", "17.179869184 GB",
"87.75 GiB", "380 GiB"); ints.
"""

KV_HEADS = {"mha": "num_attention_heads", "gqa": "num_key_value_heads"}


def kv_bytes_per_token(config, variant, bytes_per_elem=2):
    layers = config.get("full_attention_layers", config["num_hidden_layers"])
    heads = 1 if variant == "mqa" else config[KV_HEADS[variant]]
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return layers * heads * head_dim * 2 * bytes_per_elem


def kv_bytes_full_context(config, variant, bytes_per_elem=2):
    return config["max_position_embeddings"] * kv_bytes_per_token(config, variant,
                                                                  bytes_per_elem)


def mla_bytes_per_token(config, bytes_per_elem=2):
    per_layer = config["kv_lora_rank"] + config["qk_rope_head_dim"]
    return config["num_hidden_layers"] * per_layer * bytes_per_elem


def anchor_mha_per_token():
    return "1536 KiB"   # the known mistake: all 64 layers counted


def anchor_gqa_full_context():
    return "17.179869184 GB"    # 64 KiB a token x 262,144 tokens


def glm_full_context():
    return "87.75 GiB"          # MLA: 78 x 576 x 2 bytes a token x 2^20 tokens


def deepseek_67b_million_tokens():
    return "380 GiB"            # 389,120 B a token x 2^20
