"""Hidden property checks for scores.py."""

import numpy as np
import pytest

RNG = np.random.default_rng(3)


@pytest.mark.misconception("scores-transposed")
def test_row_i_belongs_to_query_i(student):
    """Entry (i, j) of the score matrix is q_i · k_j.

    中文：分数矩阵的第 (i, j) 项是 q_i · k_j。"""
    Q, K = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    S = np.asarray(student.score_matrix(Q, K))
    assert S.shape == (4, 4)
    assert np.isclose(S[1, 3], Q[1] @ K[3]) and np.isclose(S[3, 1], Q[3] @ K[1])


def test_dot_equals_lengths_times_cosine(student):
    """q·k = |q| |k| cos θ.

    中文：q·k = |q| |k| cos θ。"""
    q, k = RNG.normal(size=5), RNG.normal(size=5)
    left = student.dot(q, k)
    right = np.linalg.norm(q) * np.linalg.norm(k) * student.cosine(q, k)
    assert np.isclose(left, right)
