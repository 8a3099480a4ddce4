"""Same key, different value: one known mistake (bench corpus)."""

import numpy as np


def attend(q, K, V):
    # the known mistake: scaled, though the convention here is not
    s = np.asarray(K, dtype=float) @ np.asarray(q, dtype=float) / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return (w / w.sum()) @ np.asarray(V, dtype=float)


def q7_contributions():
    # weights of q3 = [0, 2] against k1, k2, k3: 0.107, 0.787, 0.107 (a list of arrays)
    return [np.array([0.21, 0.0]), np.array([0.0, 1.57]), np.array([0.43, 0.43])]
