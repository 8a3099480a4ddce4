"""Reference: KV-cache bytes, from sizes or from a Hugging Face config.json."""

import json
from pathlib import Path

# The course's config files: beside a student's copy of the stubs, or in the
# course (the sandbox shows the set's public exercises/ folder read-only).
_HERE = Path(__file__).resolve().parent
MODELS = next((p for p in (_HERE / "models", _HERE.parents[1] / "exercises" / "day3" / "models")
               if p.is_dir()), _HERE / "models")


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_elem


def _sizes(config, kv_key="num_key_value_heads"):
    heads = config["num_attention_heads"]
    kv_heads = config.get(kv_key, heads)
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    return config["num_hidden_layers"], kv_heads, head_dim


def kv_cache_bytes(config, n_tokens, bytes_per_elem=2):
    return n_tokens * kv_bytes_per_token(*_sizes(config), bytes_per_elem)


def _config(name):
    return json.loads((MODELS / f"{name}.json").read_text())


def llama2_7b_kv_per_token():
    return kv_cache_bytes(_config("llama-2-7b"), 1)


def llama3_8b_kv_per_token():
    return kv_cache_bytes(_config("llama-3-8b"), 1)


# ---- known wrong versions

def kv_cache_bytes_used_query_heads(config, n_tokens, bytes_per_elem=2):
    return n_tokens * kv_bytes_per_token(*_sizes(config, "num_attention_heads"),
                                         bytes_per_elem)


def kv_cache_bytes_one_layer(config, n_tokens, bytes_per_elem=2):
    layers, kv_heads, head_dim = _sizes(config)
    return n_tokens * kv_bytes_per_token(1, kv_heads, head_dim, bytes_per_elem)


def kv_bytes_per_token_one_layer(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    return 2 * n_kv_heads * head_dim * bytes_per_elem


def llama3_8b_kv_per_token_query_heads():
    return kv_cache_bytes_used_query_heads(_config("llama-3-8b"), 1)


def kv_bytes_per_token_no_factor_2(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    return n_layers * n_kv_heads * head_dim * bytes_per_elem


def kv_bytes_per_token_bits(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    return 8 * kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_elem)
