"""Hidden property checks for decode.py."""

import numpy as np
import pytest

RNG = np.random.default_rng(5)


def _prefill_last_row(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    scores = np.where(np.triu(np.ones(scores.shape, bool), k=1), -np.inf, scores)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return ((w / w.sum(axis=1, keepdims=True)) @ V)[-1]


@pytest.mark.misconception("decode-forgets-itself")
def test_decode_equals_the_last_row_of_prefill(student):
    """Decoding token n from a cache of n - 1 tokens gives prefill's last row.

    中文：用存了 n - 1 个 token 的缓存解码第 n 个 token，结果等于 prefill 的最后一行。"""
    Q, K, V = RNG.normal(size=(7, 8)), RNG.normal(size=(7, 8)), RNG.normal(size=(7, 5))
    out, K_new, V_new = student.decode_step(Q[-1], K[:-1], V[:-1], K[-1], V[-1])
    assert np.allclose(out, _prefill_last_row(Q, K, V))
    assert np.allclose(K_new, K) and np.allclose(V_new, V)


def test_caches_grow_one_row_a_step_and_inputs_stay(student):
    """Three steps from an empty cache grow it to three rows; inputs are not modified.

    中文：从空缓存走三步，缓存长到三行；传入的数组不被修改。"""
    K, V = np.zeros((0, 4)), np.zeros((0, 2))
    for step in range(3):
        outcome = student.call("decode_step", RNG.normal(size=4), K, V,
                               RNG.normal(size=4), RNG.normal(size=2))
        assert not outcome.mutated_args
        _, K, V = outcome.value
        assert np.asarray(K).shape == (step + 1, 4) and np.asarray(V).shape == (step + 1, 2)
