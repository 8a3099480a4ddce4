"""Why S = Q Kᵀ is not symmetric: a student's own answer (bench corpus).

Forms: a tuple of sympy Integers; an ndarray.
"""

import numpy as np
import sympy


def score_matrix(X, W_q, W_k):
    Q = np.asarray(X) @ np.asarray(W_q)
    K = np.asarray(X) @ np.asarray(W_k)
    return Q @ K.T


def notes_s23_s32():
    # S23 = q2 . k3 = [1,1].[1,1]; S32 = q3 . k2 = [1,0].[0,1]: sympy numbers, a tuple
    return (sympy.Integer(2), sympy.Integer(0))
