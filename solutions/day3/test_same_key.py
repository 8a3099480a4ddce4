"""Hidden property checks for same_key.py: equal keys share a weight, never a value."""

import numpy as np
import pytest

RNG = np.random.default_rng(11)


def _weights(q, K):
    s = K @ q
    e = np.exp(s - s.max())
    return e / e.sum()


@pytest.mark.misconception("same-key-same-value")
def test_changing_one_twins_value_moves_the_output_by_its_weight(student):
    """Tokens 2 and 5 share a key; changing v5 alone moves the output by w5 × the change.

    中文：第 2 和第 5 个 token 的 k 相同；只改 v5，输出的变化等于 w5 乘以这个改变量。"""
    q, K, V = RNG.normal(size=5), RNG.normal(size=(6, 5)), RNG.normal(size=(6, 3))
    K[4] = K[1]
    changed = V.copy()
    changed[4] += np.array([1.5, -2.0, 0.5])
    moved = np.asarray(student.attend(q, K, changed)) - np.asarray(student.attend(q, K, V))
    assert np.allclose(moved, _weights(q, K)[4] * np.array([1.5, -2.0, 0.5]))


def test_swapping_the_values_of_twin_keys_changes_nothing(student):
    """Equal keys get equal weights, so exchanging their two values leaves the output as it was.

    中文：相同的 k 得到相同的权重，所以交换这两个 token 的 v，输出不变。"""
    q, K, V = RNG.normal(size=4), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2))
    K[3] = K[0]
    swapped = V[[3, 1, 2, 0, 4]]
    assert np.allclose(student.attend(q, K, swapped), student.attend(q, K, V))
    assert np.allclose(student.attend(q, K, V), _weights(q, K) @ V)
