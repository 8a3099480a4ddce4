"""Hidden property checks for multihead.py."""

import numpy as np
import pytest

RNG = np.random.default_rng(11)


def test_merge_undoes_split(student):
    """merge_heads(split_heads(X)) gives X back.

    中文：merge_heads(split_heads(X)) 还原出 X。"""
    X = RNG.normal(size=(5, 12))
    H = student.split_heads(X, 4)
    assert np.asarray(H).shape == (4, 5, 3)
    assert np.allclose(student.merge_heads(H), X)


@pytest.mark.misconception("gqa-tile-grouping")
def test_gqa_with_repeated_kv_equals_plain_mha(student):
    """GQA equals MHA whose KV heads are repeated for consecutive query heads.

    中文：GQA 等于把每个 KV 头重复给相邻几个 q 头之后的 MHA。"""
    n, d, n_heads, n_kv = 6, 12, 6, 2
    d_head = d // n_heads
    X, Wq, Wo = RNG.normal(size=(n, d)), RNG.normal(size=(d, d)), RNG.normal(size=(d, d))
    Wk, Wv = RNG.normal(size=(d, n_kv * d_head)), RNG.normal(size=(d, n_kv * d_head))

    def blocks(W):
        return np.concatenate([W[:, (h // 3) * d_head:(h // 3 + 1) * d_head]
                               for h in range(n_heads)], axis=1)

    gqa = student.multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=n_kv)
    mha = student.multi_head_attention(X, Wq, blocks(Wk), blocks(Wv), Wo, n_heads)
    assert np.allclose(gqa, mha)


@pytest.mark.misconception("no-causal-mask")
def test_future_tokens_do_not_change_the_past(student):
    """Changing the last token's input leaves earlier outputs unchanged.

    中文：改变最后一个 token 的输入，前面各行的输出不变。"""
    X, W = RNG.normal(size=(5, 8)), [RNG.normal(size=(8, 8)) for _ in range(4)]
    out1 = np.asarray(student.multi_head_attention(X, *W, 2))
    X2 = X.copy()
    X2[-1] += 3.0
    out2 = np.asarray(student.multi_head_attention(X2, *W, 2))
    assert np.allclose(out1[:-1], out2[:-1])
