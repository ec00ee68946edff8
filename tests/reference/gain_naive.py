"""Exponential-gain DCG / nDCG at k and hits at k, the slow obvious way.

``grades``: the judged grade of each ranked document, best first (0 for an
unjudged one); ``judged``: every judged grade of the query.
"""

from __future__ import annotations

import math


def exp_dcg_at(grades: list[int], k: int) -> float:
    """sum over the first k ranks i (1-based) of (2^g - 1) / log2(i + 1), positive g only."""
    return sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(grades[:k]) if g > 0)


def exp_ndcg_at(grades: list[int], judged: list[int], k: int) -> float:
    """exp_dcg_at over the exp_dcg_at of the judged grades sorted best first (0 if that is 0)."""
    best = exp_dcg_at(sorted(judged, reverse=True), k)
    return exp_dcg_at(grades, k) / best if best > 0 else 0.0


def hits_at(grades: list[int], k: int, level: int = 1) -> int:
    """How many of the first k documents are relevant (grade >= level)."""
    return sum(1 for g in grades[:k] if g >= level)
