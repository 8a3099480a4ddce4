"""Hidden property checks for row_weights.py: what the causal mask does to one row."""

import numpy as np
import pytest

RNG = np.random.default_rng(23)


@pytest.mark.misconception("mask-after-softmax")
def test_each_masked_row_adds_up_to_one_with_a_zero_tail(student):
    """For every position, the weights add up to 1 and those after it are exactly 0.

    中文：每个位置的权重之和为 1，它之后的位置权重恰好为 0。"""
    scores = RNG.normal(size=7) * 2
    for position in range(1, 8):
        w = np.asarray(student.masked_row(scores, position), dtype=float)
        assert w.shape == (7,)
        assert np.isclose(w.sum(), 1.0) and np.all(w[position:] == 0)


def test_the_hidden_scores_change_nothing(student):
    """Changing the scores of later tokens leaves the row's weights as they were.

    中文：改变后面 token 的分数，这一行的权重不变。"""
    scores = RNG.normal(size=6)
    changed = scores.copy()
    changed[4:] = [9.0, -7.0]
    assert np.allclose(student.masked_row(scores, 4), student.masked_row(changed, 4))
    assert np.allclose(student.masked_row(scores + 3.0, 4), student.masked_row(scores, 4))
