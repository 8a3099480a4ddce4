"""Quiz: why the dot product: one known mistake (bench corpus).

Forms: a bool; strings; a frozenset.
"""


def dot_product_is_the_only_choice():
    return False


def cosine_measures():
    return "both"   # the known mistake


def additive_cost():
    return frozenset(["per_pair_network", "big_intermediate_tensor"])


def why_softmax():
    return "negative_scores"


def why_divide_by_sqrt_d():
    return "softmax_saturates"
