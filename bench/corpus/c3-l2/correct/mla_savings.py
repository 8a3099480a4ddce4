"""What MLA saves: a student's own answer (bench corpus).

Forms: Fractions; a list of floats.
"""

from fractions import Fraction


def latent_cache_bytes(n_layers, numbers_per_layer, bits_per_number):
    return Fraction(n_layers * numbers_per_layer * bits_per_number, 8)


def reduction_percent(before, after):
    return 100 * (Fraction(before) - Fraction(after)) / Fraction(before)


def deepseek_v2_reductions():
    return [82.24, 93.34]     # 69,120 B and 25,920 B against 389,120 B
