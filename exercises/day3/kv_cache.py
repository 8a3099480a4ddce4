"""How many bytes the KV cache takes / KV cache 要多少字节.

Byte answers may be an int of bytes or a string with a unit: "3 MiB",
"1.5 MiB" (KiB = 1024 bytes, KB = 1000 bytes).
字节答案可以是整数字节数，也可以是带单位的字符串（KiB = 1024 字节，KB = 1000 字节）。
The config.json files of Llama-2-7B and Llama-3-8B are in models/.
"""


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    """KV-cache bytes of one token. May be called with sympy symbols.

    中文：每个 token 的 KV cache 字节数；参数可能是 sympy 符号，此时返回公式。
    """
    raise NotImplementedError


def kv_cache_bytes(config, n_tokens, bytes_per_elem=2):
    """KV-cache bytes of n_tokens tokens for a Hugging Face config.json dict.

    EN: Uses num_hidden_layers, num_attention_heads, hidden_size, and the optional
    num_key_value_heads (default: num_attention_heads) and head_dim (default:
    hidden_size // num_attention_heads).
    中文：使用 num_hidden_layers、num_attention_heads、hidden_size，以及可选的
    num_key_value_heads（默认等于 num_attention_heads）和 head_dim（默认等于
    hidden_size // num_attention_heads）。
    """
    raise NotImplementedError


def llama2_7b_kv_per_token():
    """Llama-2-7B, BF16: KV-cache bytes per token, worked out by hand.

    中文：Llama-2-7B（BF16）每个 token 的 KV cache 字节数，手算后填写。
    """
    raise NotImplementedError


def llama3_8b_kv_per_token():
    """Llama-3-8B, BF16: KV-cache bytes per token, worked out by hand.

    中文：Llama-3-8B（BF16）每个 token 的 KV cache 字节数，手算后填写。
    """
    raise NotImplementedError
