"""One decode step with a KV cache / 用 KV cache 做一步 decode."""

import numpy as np


def decode_step(q, K_cache, V_cache, k, v):
    """Attend from the new token's q over the cache plus itself.

    EN: K_cache is (n_cached, d), V_cache is (n_cached, d_v); q and k have length
    d, v has length d_v. Append k and v to the caches, attend with scaled dot
    products over all n_cached + 1 keys, and return
    (output of length d_v, K_cache_new, V_cache_new). Do not modify the inputs.

    中文：K_cache 为 (n_cached, d)，V_cache 为 (n_cached, d_v)；q、k 长度为 d，v 长度为
    d_v。把 k、v 接到缓存末尾，对全部 n_cached + 1 个 k 做缩放点积注意力，返回
    (长度为 d_v 的输出, 新 K 缓存, 新 V 缓存)。不要修改输入。
    """
    raise NotImplementedError
