"""Quiz: why the dot product: a student's own answer (bench corpus).

Forms: a bool; strings; a frozenset.
"""


def dot_product_is_the_only_choice():
    return False


def cosine_measures():
    return "direction"


def additive_cost():
    return frozenset(["per_pair_network", "big_intermediate_tensor"])


def why_softmax():
    return "negative_scores"


def why_divide_by_sqrt_d():
    return "softmax_saturates"
