"""The memory of additive attention: a student's own answer (bench corpus).

Forms: unit strings ("8 GiB", "33.554432 MB"); ints.
"""


def additive_tensor_bytes(T, d_a, bytes_per_elem=2):
    return T * T * d_a * bytes_per_elem


def score_matrix_bytes(T, bytes_per_elem=2):
    return T * T * bytes_per_elem


def additive_example():
    return "8 GiB"            # 4096^2 x 256 x 2 = 2^33


def scores_example():
    return "33.554432 MB"     # 4096^2 x 2 = 2^25
