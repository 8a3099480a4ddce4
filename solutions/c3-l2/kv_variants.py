"""Reference: KV bytes per token and at full context for MHA, MQA, GQA and MLA."""

import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent
MODELS = next((p for p in (_HERE / "models", _HERE.parents[1] / "exercises" / "c3-l2" / "models")
               if p.is_dir()), _HERE / "models")
MILLION = 2 ** 20   # the course page's "1M tokens"


def _model(name):
    return json.loads((MODELS / f"{name}.json").read_text())


def _kv_heads(config, variant):
    return {"mha": config["num_attention_heads"], "mqa": 1,
            "gqa": config.get("num_key_value_heads", config["num_attention_heads"])}[variant]


def _layers(config):
    return config.get("full_attention_layers", config["num_hidden_layers"])


def kv_bytes_per_token(config, variant, bytes_per_elem=2):
    return 2 * _layers(config) * _kv_heads(config, variant) * config["head_dim"] * bytes_per_elem


def kv_bytes_full_context(config, variant, bytes_per_elem=2):
    return kv_bytes_per_token(config, variant, bytes_per_elem) * config["max_position_embeddings"]


def mla_bytes_per_token(config, bytes_per_elem=2):
    width = config["kv_lora_rank"] + config["qk_rope_head_dim"]
    return config["num_hidden_layers"] * width * bytes_per_elem


def anchor_mha_per_token():
    return kv_bytes_per_token(_model("anchor"), "mha")


def anchor_gqa_full_context():
    return kv_bytes_full_context(_model("anchor"), "gqa")


def deepseek_67b_million_tokens():
    return kv_bytes_per_token(_model("deepseek-llm-67b"), "gqa") * MILLION


def glm_full_context():
    config = _model("glm-5.3")
    return mla_bytes_per_token(config) * config["max_position_embeddings"]


# ---- known wrong versions

def kv_bytes_per_token_all_layers(config, variant, bytes_per_elem=2):
    return 2 * config["num_hidden_layers"] * _kv_heads(config, variant) * config["head_dim"] \
        * bytes_per_elem


def kv_bytes_per_token_query_heads(config, variant, bytes_per_elem=2):
    return 2 * _layers(config) * config["num_attention_heads"] * config["head_dim"] \
        * bytes_per_elem


def kv_bytes_full_context_query_heads(config, variant, bytes_per_elem=2):
    return kv_bytes_per_token_query_heads(config, variant, bytes_per_elem) \
        * config["max_position_embeddings"]


def anchor_gqa_full_context_query_heads():
    return kv_bytes_full_context_query_heads(_model("anchor"), "gqa")


def deepseek_67b_million_tokens_query_heads():
    return kv_bytes_per_token_query_heads(_model("deepseek-llm-67b"), "gqa") * MILLION


def mla_bytes_per_token_no_rope(config, bytes_per_elem=2):
    return config["num_hidden_layers"] * config["kv_lora_rank"] * bytes_per_elem


def mla_bytes_per_token_k_and_v(config, bytes_per_elem=2):
    return 2 * mla_bytes_per_token(config, bytes_per_elem)
