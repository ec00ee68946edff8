"""Compatibility and Accuracy, the slow obvious way (one query).

``ranking``: document ids best first; ``qrels``: document id -> grade.
"""

from __future__ import annotations


def rbo(a: list[str], b: list[str], p: float, depth: int) -> float:
    """Rank-biased overlap to ``depth``: sum_d p^(d-1) |a[:d] & b[:d]| / d over sum_d p^(d-1)."""
    num = sum(p ** (d - 1) * len(set(a[:d]) & set(b[:d])) / d for d in range(1, depth + 1))
    return num / sum(p ** (d - 1) for d in range(1, depth + 1))


def compat(ranking: list[str], qrels: dict[str, int], p: float, normalize: bool = True) -> float:
    """Clarke et al.'s compatibility: RBO with the ideal ranking (grade, then the run's order)."""
    pos = {d: i for i, d in enumerate(ranking)}
    ideal = sorted(
        (d for d, g in qrels.items() if g > 0),
        key=lambda d: (-qrels[d], pos.get(d, len(ranking))),
    )
    depth = max(len(ranking), len(ideal))
    score = rbo(ranking, ideal, p, depth)
    best = rbo(ideal, ideal, p, depth)
    return score / best if normalize and best > 0 else score


def accuracy(
    ranking: list[str], qrels: dict[str, int], rel: int = 1, k: int | None = None
) -> float:
    """Share of (relevant, non-relevant) pairs in the top k with the relevant one first;
    NaN (undefined: ir_measures reports nothing) with no relevant document there."""
    top = ranking[:k] if k is not None else ranking
    good = [i for i, d in enumerate(top) if qrels.get(d, 0) >= rel]
    bad = [i for i, d in enumerate(top) if qrels.get(d, 0) < rel]
    if not good:
        return float("nan")
    if not bad:
        return 1.0
    return sum(1 for i in good for j in bad if i < j) / (len(good) * len(bad))
