"""Reference: the hand-calculation answers (numpy, to double precision)."""

import numpy as np

Q = np.array([[0, 1], [1, 1], [1, 0]], dtype=float)
K = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)
V = np.array([[10, 0], [0, 10], [5, 5]], dtype=float)
Q7 = np.array([0, 2], dtype=float)
K7 = np.array([[1, 0], [0, 1], [1, 0]], dtype=float)
V7 = np.array([[2, 0], [0, 2], [4, 4]], dtype=float)


def _weights(scale, causal=True):
    scores = Q @ K.T / scale
    if causal:
        scores = np.where(np.triu(np.ones((3, 3), dtype=bool), k=1), -np.inf, scores)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def seed_example_weights():
    return _weights(np.sqrt(2))


def seed_example_output():
    return _weights(np.sqrt(2)) @ V


def selftest_q7_weights(q3=Q7):
    e = np.exp(K7 @ np.asarray(q3, dtype=float))
    return e / e.sum()


def selftest_q7_output(q3=Q7):
    return selftest_q7_weights(q3) @ V7


# ---- known wrong versions

def seed_example_weights_no_mask():
    return _weights(np.sqrt(2), causal=False)


def seed_example_weights_unscaled():
    return _weights(1.0)


def seed_example_weights_scaled_by_d():
    return _weights(2.0)


def selftest_q7_output_scaled(q3=Q7):
    e = np.exp(K7 @ np.asarray(q3, dtype=float) / np.sqrt(2))
    return (e / e.sum()) @ V7


def seed_example_output_no_mask():
    return _weights(np.sqrt(2), causal=False) @ V


def seed_example_output_unscaled():
    return _weights(1.0) @ V
