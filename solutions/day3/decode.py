"""Reference: one decode step with a KV cache, plus known wrong versions."""

import numpy as np


def _attend(q, K, V, scale=True):
    scores = K @ q / (np.sqrt(q.shape[0]) if scale else 1.0)
    w = np.exp(scores - scores.max())
    return (w / w.sum()) @ V


def decode_step(q, K_cache, V_cache, k, v):
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    K = np.vstack([np.asarray(K_cache, dtype=float), k])
    V = np.vstack([np.asarray(V_cache, dtype=float), v])
    return _attend(q, K, V), K, V


# ---- known wrong versions

def decode_step_forgets_itself(q, K_cache, V_cache, k, v):
    out_K, out_V = decode_step(q, K_cache, V_cache, k, v)[1:]
    return _attend(np.asarray(q, dtype=float), np.asarray(K_cache, dtype=float),
                   np.asarray(V_cache, dtype=float)), out_K, out_V


def decode_step_unscaled(q, K_cache, V_cache, k, v):
    _, K, V = decode_step(q, K_cache, V_cache, k, v)
    return _attend(np.asarray(q, dtype=float), K, V, scale=False), K, V


def decode_step_prepends(q, K_cache, V_cache, k, v):
    out, K, V = decode_step(q, K_cache, V_cache, k, v)
    return out, np.roll(K, 1, axis=0), np.roll(V, 1, axis=0)
