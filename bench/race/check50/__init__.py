"""The timing race's three checks, written for check50 (``check50 --dev``)."""

import numpy as np

import check50
import check50.py

NOTES = ([[0, 1], [1, 1], [1, 0]], [[1, 0], [0, 1], [1, 1]], [[10, 0], [0, 10], [5, 5]])


def reference(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    hidden = np.triu(np.ones((len(Q), len(K)), dtype=bool), k=len(K) - len(Q) + 1)
    scores = np.where(hidden, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ V, weights


def compare(args, pick):
    student = check50.py.import_("attention.py")
    got = np.asarray(student.attention(*args)[pick], dtype=float)
    want = reference(*args)[pick]
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-9):
        raise check50.Mismatch(str(want), str(got))


@check50.check()
def notes_output():
    """the notes' example: output"""
    compare(NOTES, 0)


@check50.check()
def notes_weights():
    """the notes' example: weights"""
    compare(NOTES, 1)


@check50.check()
def decode_step():
    """decode: one query against 3 keys sees them all"""
    compare(([[1, 0]], NOTES[1], NOTES[2]), 0)
