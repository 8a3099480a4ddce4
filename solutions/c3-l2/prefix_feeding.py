"""Reference: feeding every prefix one by one against one forward with the causal mask."""


def prefix_feeding_cost(T):
    # prefixes of length 1..T, the whole sentence included; a prefix of length p is p positions
    return (T, T * (T + 1) // 2)


def masked_forward_cost(T):
    return (1, T)


def questions_with_answer(T):
    # the prefixes of length 1..T-1 have their next token inside the sentence
    return T - 1


# ---- known wrong versions

def prefix_feeding_cost_skip_last(T):
    return (T - 1, (T - 1) * T // 2)


def prefix_feeding_cost_squared(T):
    return (T, T * T)


def prefix_feeding_cost_one_per_forward(T):
    return (T, T)


def masked_forward_cost_per_token(T):
    return (T, T)


def masked_forward_cost_per_prefix(T):
    """A masked forward run again for each token over its own prefix."""
    return (T, T * (T + 1) // 2)


def questions_with_answer_all_prefixes(T):
    return T
