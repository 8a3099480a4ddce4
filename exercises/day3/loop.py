"""The autoregressive loop with a KV cache / 自回归循环与 KV cache."""

import numpy as np


def generate_with_cache(prompt, E, W_q, W_k, W_v, n_new):
    """Generate n_new tokens greedily: one prefill, then decode steps that reuse a KV cache.

    EN: prompt is a list of token indices; E is (vocab, d), row t the vector of token t;
    W_q, W_k and W_v are (d, d). The last token's q attends with scaled dot products over
    every token so far; the logits of the next token are output @ E.T, and the largest one
    wins. Cache the prompt's k and v in one prefill, then compute q, k and v for each new
    token only and append its k and v to the cache. Return the n_new new token indices (a list
    of ints); they must equal a full prefill of the whole sequence at every step.

    中文：prompt 是 token 下标列表；E 为 (vocab, d)，第 t 行是 token t 的向量；W_q、W_k、W_v
    为 (d, d)。最后一个 token 的 q 对目前所有 token 做缩放点积注意力，下一个 token 的 logits
    是 output @ E.T，取最大者。先对 prompt 做一次 prefill 缓存 k、v，之后每步只为新 token 算
    q、k、v，并把它的 k、v 接到缓存末尾。返回 n_new 个新 token 的下标（整数列表），必须和每步都
    对整段序列重新 prefill 的结果一致。
    """
    raise NotImplementedError


def kv_rows_computed(n_prompt, n_new, cache=True):
    """For how many tokens a k and v are computed while generating n_new tokens (an int).

    EN: step 1 is the prefill over n_prompt tokens and yields the first new token; each
    later step feeds the previous new token. cache=True uses a KV cache; cache=False
    recomputes the whole sequence at every step.

    中文：生成 n_new 个 token 一共为多少个 token 算了 k、v（一个整数）。第 1 步是对 n_prompt 个
    token 的 prefill，产生第 1 个新 token；之后每步送入上一个新 token。cache=True 用 KV
    cache；cache=False 每步对整段序列从头重算。
    """
    raise NotImplementedError
