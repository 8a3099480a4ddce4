"""Reference: MLA's cache per token against DeepSeek LLM 67B, in BF16 and at about 6 bits."""

BASELINE_67B = 389_120          # bytes per token, GQA-8, BF16 (the course page)
V2_LAYERS, V2_NUMBERS = 60, 512 + 64
BF16_BITS, QUANT_BITS = 16, 6


def latent_cache_bytes(n_layers, numbers_per_layer, bits_per_number):
    return n_layers * numbers_per_layer * bits_per_number / 8


def reduction_percent(before, after):
    return 100 * (before - after) / before


def deepseek_v2_reductions():
    bf16 = latent_cache_bytes(V2_LAYERS, V2_NUMBERS, BF16_BITS)
    quant = latent_cache_bytes(V2_LAYERS, V2_NUMBERS, QUANT_BITS)
    return (reduction_percent(BASELINE_67B, bf16), reduction_percent(BASELINE_67B, quant))


# ---- known wrong versions

def latent_cache_bytes_bits(n_layers, numbers_per_layer, bits_per_number):
    return n_layers * numbers_per_layer * bits_per_number


def reduction_percent_remaining(before, after):
    return 100 * after / before


def reduction_percent_over_after(before, after):
    return 100 * (before - after) / after


def _reductions(numbers=V2_NUMBERS, baseline_quant=False, bits=lambda b: b / 8):
    out = []
    for b in (BF16_BITS, QUANT_BITS):
        base = BASELINE_67B * (b / BF16_BITS if baseline_quant else 1)
        out.append(reduction_percent(base, V2_LAYERS * numbers * bits(b)))
    return tuple(out)


def deepseek_v2_reductions_remaining():
    return tuple(100 - r for r in deepseek_v2_reductions())


def deepseek_v2_reductions_quantized_baseline():
    return _reductions(baseline_quant=True)


def deepseek_v2_reductions_no_rope():
    return _reductions(numbers=512)


def deepseek_v2_reductions_k_and_v():
    return _reductions(numbers=2 * V2_NUMBERS)


def deepseek_v2_reductions_bits_as_bytes():
    return (_reductions()[0], _reductions(bits=lambda b: b if b == QUANT_BITS else b / 8)[1])


def deepseek_v2_reductions_page():
    return (82.2, 93.3)
