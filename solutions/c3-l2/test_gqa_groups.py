"""Hidden property checks for gqa_groups.py: the groups split the query heads evenly."""

import pytest


@pytest.mark.parametrize("n_q,n_kv", [(24, 4), (16, 8)])
def test_the_two_functions_agree_and_split_the_heads_evenly(student, n_q, n_kv):
    """Every query head lies in the list of exactly the KV head it reads; each list has
    n_q / n_kv heads.

    中文：每个 q 头恰好出现在它所读的那个 KV 头的列表里；每个列表有 n_q / n_kv 个头。"""
    served = [list(student.query_heads_served(g, n_q, n_kv)) for g in range(n_kv)]
    assert all(len(heads) == n_q // n_kv for heads in served)
    assert sorted(h for heads in served for h in heads) == list(range(n_q))
    for g, heads in enumerate(served):
        assert all(student.kv_head_for(h, n_q, n_kv) == g for h in heads)
