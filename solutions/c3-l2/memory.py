"""Reference: memory of additive attention's T x T x d_a tensor against T x T scores."""


def additive_tensor_bytes(T, d_a, bytes_per_elem=2):
    return T * T * d_a * bytes_per_elem


def score_matrix_bytes(T, bytes_per_elem=2):
    return T * T * bytes_per_elem


def additive_example():
    return additive_tensor_bytes(4096, 256)


def scores_example():
    return score_matrix_bytes(4096)


# ---- known wrong versions

def additive_tensor_bytes_bits(T, d_a, bytes_per_elem=2):
    return 8 * additive_tensor_bytes(T, d_a, bytes_per_elem)


def additive_tensor_bytes_linear(T, d_a, bytes_per_elem=2):
    return T * d_a * bytes_per_elem
