"""Naive references for the agreement of judgment sets: short, obviously correct, pure Python.

tau_AP as Yilmaz, Aslam & Robertson (2008) define it, RBO_ext as Webber, Moffat &
Zobel (2010) eq. 32 define it (set intersections of prefixes), and the bootstrap of
ranks as one loop over resamples.
"""

from __future__ import annotations

import numpy as np


def ranking(means: list[float], names: list[str]) -> list[str]:
    """Run ids from best to worst: mean descending, ties by run id ascending."""
    return [n for _, n in sorted(zip(means, names, strict=True), key=lambda t: (-t[0], t[1]))]


def tau_ap(truth: list[str], other: list[str]) -> float:
    """tau_AP of ranking ``other`` against ranking ``truth`` (lists of ids, best first)."""
    pos = {x: i for i, x in enumerate(truth)}
    n = len(other)
    total = 0.0
    for i in range(1, n):
        correct = sum(1 for j in range(i) if pos[other[j]] < pos[other[i]])
        total += correct / i
    return 2.0 / (n - 1) * total - 1.0


def rbo_ext(s: list[str], t: list[str], p: float = 0.9) -> float:
    """Extrapolated RBO of two rankings of the same items, to their full depth."""
    k = len(s)
    acc = 0.0
    for d in range(1, k + 1):
        x_d = len(set(s[:d]) & set(t[:d]))
        acc += x_d / d * p**d
    x_k = len(set(s) & set(t))
    return x_k / k * p**k + (1 - p) / p * acc


def bootstrap_rank_intervals(
    X: np.ndarray, names: list[str], idx: np.ndarray, level: float
) -> dict[str, tuple[int, int]]:
    """Each run's (low, high) rank: the inverted-CDF quantiles of its ranks over resamples."""
    ranks: dict[str, list[int]] = {n: [] for n in names}
    for b in range(idx.shape[0]):
        means = [float(X[i, idx[b]].mean()) for i in range(len(names))]
        for r, name in enumerate(ranking(means, names), start=1):
            ranks[name].append(r)
    out = {}
    for name, rs in ranks.items():
        srt = sorted(rs)
        B = len(srt)
        lo = srt[max(0, int(np.ceil((1 - level) / 2 * B)) - 1)]
        hi = srt[max(0, int(np.ceil((1 + level) / 2 * B)) - 1)]
        out[name] = (lo, hi)
    return out
