"""Same key, different value: a student's own answer (bench corpus).

Forms: a list of ndarrays (rows built one by one); an ndarray.
"""

import numpy as np


def attend(q, K, V):
    s = np.asarray(K, dtype=float) @ np.asarray(q, dtype=float)
    w = np.exp(s - s.max())
    return (w / w.sum()) @ np.asarray(V, dtype=float)


def q7_contributions():
    # weights of q3 = [0, 2] against k1, k2, k3: 0.107, 0.787, 0.107 (a list of arrays)
    return [np.array([0.21, 0.0]), np.array([0.0, 1.57]), np.array([0.43, 0.43])]
