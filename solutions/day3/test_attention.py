"""Hidden property checks for attention.py; ``student`` calls into the child."""

import numpy as np
import pytest

RNG = np.random.default_rng(7)


def _qkv(n_q, n_k, d=8, d_v=4):
    return RNG.normal(size=(n_q, d)), RNG.normal(size=(n_k, d)), RNG.normal(size=(n_k, d_v))


def test_rows_sum_to_one(student):
    """Each query's weights sum to 1.

    中文：每个 query 的权重之和为 1。"""
    _, weights = student.attention(*_qkv(6, 6))
    assert np.allclose(np.asarray(weights).sum(axis=-1), 1.0)


@pytest.mark.misconception("no-causal-mask")
def test_future_does_not_change_past(student):
    """Changing the last token's k and v leaves earlier outputs unchanged.

    中文：改变最后一个 token 的 k 和 v，前面各行的输出不变。"""
    Q, K, V = _qkv(5, 5)
    out1, _ = student.attention(Q, K, V)
    K2, V2 = K.copy(), V.copy()
    K2[-1] += 5.0
    V2[-1] -= 7.0
    out2, _ = student.attention(Q, K2, V2)
    assert np.allclose(np.asarray(out1)[:-1], np.asarray(out2)[:-1])


@pytest.mark.misconception("no-causal-mask")
def test_first_token_output_is_its_own_v(student):
    """Under the causal mask, token 1 sees only itself.

    中文：在因果掩码下，第 1 个 token 只看得到它自己。"""
    Q, K, V = _qkv(4, 4)
    out, _ = student.attention(Q, K, V)
    assert np.allclose(np.asarray(out)[0], V[0])


@pytest.mark.misconception("mask-misaligned")
def test_decode_equals_last_prefill_row(student):
    """One query against the cache gives the last row of the full prefill.

    中文：一个 query 对缓存做注意力，得到的是完整 prefill 的最后一行。"""
    Q, K, V = _qkv(6, 6)
    full, _ = student.attention(Q, K, V)
    step, _ = student.attention(Q[-1:], K, V)
    assert np.allclose(np.asarray(step)[0], np.asarray(full)[-1])


def test_inputs_not_modified(student):
    """attention leaves Q, K and V as they were.

    中文：attention 不修改传入的 Q、K、V。"""
    assert not student.call("attention", *_qkv(3, 3)).mutated_args
