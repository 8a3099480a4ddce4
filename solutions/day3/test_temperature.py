"""Hidden property checks for temperature.py; ``student`` calls into the child."""

import numpy as np
import pytest

RNG = np.random.default_rng(2024)


def test_rows_sum_to_one(student):
    """Every row of probabilities sums to 1.

    中文：每一行概率之和为 1。"""
    probs = np.asarray(student.softmax(RNG.normal(size=(5, 8)) * 3, T=0.8))
    assert probs.shape == (5, 8)
    assert np.allclose(probs.sum(axis=-1), 1.0)


@pytest.mark.misconception("temperature-multiplied")
def test_lower_temperature_is_sharper(student):
    """A smaller T gives the top logit a larger probability.

    中文：T 越小，最大的 logit 得到的概率越大。"""
    logits = [3.0, 1.0, 0.5, -1.0]
    top = [float(np.asarray(student.softmax(logits, T=t))[0]) for t in (2.0, 1.0, 0.5, 0.25)]
    assert all(a < b for a, b in zip(top, top[1:]))


def test_near_zero_temperature_is_greedy(student):
    """As T approaches 0, softmax puts all its mass on the greedy choice.

    中文：T 趋近 0 时，softmax 把全部概率放在贪心选择的那个 token 上。"""
    logits = RNG.normal(size=12)
    probs = np.asarray(student.softmax(logits, T=1e-3))
    choice = student.greedy(logits)
    assert isinstance(choice, int) and choice == int(np.argmax(logits))
    assert probs[choice] > 0.999


def test_input_not_modified(student):
    """softmax leaves its input array as it was.

    中文：softmax 不修改传入的数组。"""
    assert not student.call("softmax", RNG.normal(size=(3, 4)), T=0.5).mutated_args
