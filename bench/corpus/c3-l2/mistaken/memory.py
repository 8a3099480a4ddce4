"""The memory of additive attention: one known mistake (bench corpus).

Forms: unit strings ("8 GiB", "33.554432 MB"); ints.
"""


def additive_tensor_bytes(T, d_a, bytes_per_elem=2):
    return T * T * d_a * bytes_per_elem


def score_matrix_bytes(T, bytes_per_elem=2):
    return T * T * bytes_per_elem


def additive_example():
    return "8 Gib"   # the known mistake: bits


def scores_example():
    return "33.554432 MB"     # 4096^2 x 2 = 2^25
