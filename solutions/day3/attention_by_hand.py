"""Reference: the hand-calculation answers, computed exactly with sympy."""

import sympy as sp

Q = sp.Matrix([[0, 1], [1, 1], [1, 0]])
K = sp.Matrix([[1, 0], [0, 1], [1, 1]])
V = sp.Matrix([[10, 0], [0, 10], [5, 5]])


def _weights(scale, causal=True):
    rows = []
    for i in range(3):
        seen = range(i + 1) if causal else range(3)
        scores = [(Q.row(i).dot(K.row(j))) / scale for j in seen]
        total = sum(sp.exp(s) for s in scores)
        row = [sp.exp(s) / total for s in scores]
        rows.append(row + [sp.Integer(0)] * (3 - len(row)))
    return sp.Matrix(rows)


def _nested(matrix):
    return [[sp.nsimplify(x) if x.is_Rational else x for x in matrix.row(i)]
            for i in range(matrix.rows)]


def seed_example_weights():
    return _nested(_weights(sp.sqrt(2)))


def seed_example_output():
    return _nested(_weights(sp.sqrt(2)) * V)


def selftest_q7_weights():
    k = sp.Matrix([[1, 0], [0, 1], [1, 0]])
    scores = [sp.Matrix([[0, 2]]).dot(k.row(j)) for j in range(3)]
    total = sum(sp.exp(s) for s in scores)
    return [sp.exp(s) / total for s in scores]


def selftest_q7_output():
    v = sp.Matrix([[2, 0], [0, 2], [4, 4]])
    w = sp.Matrix([selftest_q7_weights()])
    return list(w * v)


# ---- known wrong versions

def seed_example_weights_no_mask():
    return _nested(_weights(sp.sqrt(2), causal=False))


def seed_example_weights_unscaled():
    return _nested(_weights(1))


def seed_example_weights_scaled_by_d():
    return _nested(_weights(2))


def seed_example_output_no_mask():
    return _nested(_weights(sp.sqrt(2), causal=False) * V)


def seed_example_output_unscaled():
    return _nested(_weights(1) * V)
