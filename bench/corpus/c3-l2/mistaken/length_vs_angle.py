"""Length against angle: one known mistake (bench corpus).

Forms: floats; a tuple of ints and floats.
"""

import math


def dot_score(q, k):
    return sum(a * b for a, b in zip(q, k))


def cosine_score(q, k):
    return dot_score(q, k) / math.sqrt(dot_score(q, q) * dot_score(k, k))


def doubled_query_scores():
    return (10, 20, 0.981, 1.962)   # the known mistake: the cosine doubled too
