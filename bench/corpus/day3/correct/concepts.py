"""Concept quiz: a student's own answer (bench corpus): strings, a set, a list, bools.

Forms: strings, sets, a list of options, bools.
"""

MINE = {
    "weighted_sum_of": "v",
    "cached_during_decode": {"k", "v"},
    "first_token_output": "own_v",
    "why_separate_wq_wk": "asymmetry",
    "gqa_reduces": ["kv_cache", "kv_params"],
    "low_temperature_effect": "sharper",
    "rope_changes": {"q_values", "k_values"},
}


def weighted_sum_of():
    return MINE["weighted_sum_of"]


def cached_during_decode():
    return MINE["cached_during_decode"]


def multihead_adds_parameters():
    return False   # the heads split d_model; the matrices keep their size


def first_token_output():
    return MINE["first_token_output"]


def why_separate_wq_wk():
    return MINE["why_separate_wq_wk"]


def gqa_reduces():
    return MINE["gqa_reduces"]


def decode_recomputes_all():
    return False   # the cache keeps the earlier k and v


def low_temperature_effect():
    return MINE["low_temperature_effect"]


def rope_adds_parameters():
    return False   # fixed rotations


def rope_changes():
    return MINE["rope_changes"]
