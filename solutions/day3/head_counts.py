"""Reference: how many numbers one head's W^q holds, how many score cells one layer holds."""


def wq_numbers_per_head(d_model, n_heads):
    return d_model * (d_model // n_heads)


def score_cells_per_layer(n, n_heads):
    return n_heads * n * n


# ---- known wrong versions

def wq_numbers_per_head_square(d_model, n_heads):
    return (d_model // n_heads) ** 2


def wq_numbers_per_head_whole_layer(d_model, n_heads):
    return d_model * d_model


def score_cells_per_layer_one_head(n, n_heads):
    return n * n


def score_cells_per_layer_linear(n, n_heads):
    return n_heads * n
