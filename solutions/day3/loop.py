"""Reference: the autoregressive loop with a KV cache, plus known wrong versions."""

import numpy as np


def _attend(q, K, V):
    scores = K @ q / np.sqrt(q.shape[0])
    w = np.exp(scores - scores.max())
    return (w / w.sum()) @ V


def generate_with_cache(prompt, E, W_q, W_k, W_v, n_new):
    return _generate(prompt, E, W_q, W_k, W_v, n_new, keep_new_kv=True)


def _generate(prompt, E, W_q, W_k, W_v, n_new, keep_new_kv):
    E, W_q, W_k, W_v = (np.asarray(a, dtype=float) for a in (E, W_q, W_k, W_v))
    X = E[list(prompt)]
    # prefill: the k and v of every prompt token, once
    K, V = X @ W_k, X @ W_v
    q = X[-1] @ W_q
    new = []
    for _ in range(n_new):
        token = int(np.argmax(_attend(q, K, V) @ E.T))
        new.append(token)
        # decode: the new token's q, k and v only; its k and v join the cache
        x = E[token]
        if keep_new_kv:
            K = np.vstack([K, x @ W_k])
            V = np.vstack([V, x @ W_v])
        q = x @ W_q
    return new


def generate_full(prompt, E, W_q, W_k, W_v, n_new):
    """Not graded: re-run a full prefill over the whole sequence at every step."""
    E, W_q, W_k, W_v = (np.asarray(a, dtype=float) for a in (E, W_q, W_k, W_v))
    tokens = list(prompt)
    for _ in range(n_new):
        X = E[tokens]
        K, V = X @ W_k, X @ W_v
        tokens.append(int(np.argmax(_attend(X[-1] @ W_q, K, V) @ E.T)))
    return tokens[len(prompt):]


def kv_rows_computed(n_prompt, n_new, cache=True):
    if cache:
        return n_prompt + n_new - 1
    return n_new * n_prompt + n_new * (n_new - 1) // 2


# ---- known wrong versions

def generate_with_cache_forgets_itself(prompt, E, W_q, W_k, W_v, n_new):
    # the new token's k and v never reach the cache
    return _generate(prompt, E, W_q, W_k, W_v, n_new, keep_new_kv=False)


def kv_rows_computed_recomputes_all(n_prompt, n_new, cache=True):
    return kv_rows_computed(n_prompt, n_new, cache=False)


def kv_rows_computed_caches_last(n_prompt, n_new, cache=True):
    if cache:
        return n_prompt + n_new
    return n_new * n_prompt + n_new * (n_new + 1) // 2
