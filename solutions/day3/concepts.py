"""Reference answers to the concept quiz."""


def weighted_sum_of():
    return "v"


def cached_during_decode():
    return {"k", "v"}


def multihead_adds_parameters():
    return False


def first_token_output():
    return "own_v"


def why_separate_wq_wk():
    return "asymmetry"


def gqa_reduces():
    return {"kv_params", "kv_cache"}


def decode_recomputes_all():
    return False


def low_temperature_effect():
    return "sharper"


def rope_adds_parameters():
    return False


def rope_changes():
    return {"q_values", "k_values"}


# ---- known wrong versions

def rope_adds_parameters_yes():
    return True


def rope_changes_with_v():
    return {"q_values", "k_values", "v_values"}


def rope_changes_with_shapes():
    return {"q_values", "k_values", "shapes"}
