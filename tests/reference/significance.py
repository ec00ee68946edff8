"""Slow, obviously correct paired tests over one pair of systems at a time.

Plain Python loops, sums left to right in query order (as the kernels do),
so the same resamples give bit-identical statistics.
"""

from __future__ import annotations

import itertools
import math


def t_value(total: float, sq: float, n: int) -> float:
    mean = total / n
    if sq <= 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / (math.sqrt(sq / (n - 1)) / math.sqrt(n))


def t_stat(z: list[float]) -> float:
    total = 0.0
    for v in z:
        total += v
    mean = total / len(z)
    sq = 0.0
    for v in z:
        sq += (v - mean) * (v - mean)
    return t_value(total, sq, len(z))


def bootstrap_hits(x: list[float], y: list[float], resamples: list[list[int]]) -> int:
    """Sakai (2006): resample the centred differences; count the resamples with |t*| >= |t|."""
    z = [a - b for a, b in zip(x, y, strict=True)]
    t = t_stat(z)
    total = 0.0
    for v in z:
        total += v
    mean = total / len(z)
    w = [v - mean for v in z]
    return sum(1 for idx in resamples if abs(t_stat([w[i] for i in idx])) >= abs(t))


def randomisation_hits(x: list[float], y: list[float], signs: list[list[float]], tol: float) -> int:
    """Fisher's randomisation test with the given sign flips: the flips at least as extreme."""
    z = [a - b for a, b in zip(x, y, strict=True)]
    total = 0.0
    absum = 0.0
    for v in z:
        total += v
        absum += abs(v)
    hits = 0
    for s in signs:
        acc = 0.0
        for v, f in zip(z, s, strict=True):
            acc += v * f
        if abs(acc) >= abs(total) - tol * absum:
            hits += 1
    return hits


def monte_carlo_p(hits: int, n: int) -> float:
    """Phipson & Smyth (2010): never 0."""
    return (hits + 1) / (n + 1)


def wilcoxon_exact(d: list[float]) -> float:
    """Exact two-sided signed-rank p over all 2^n sign assignments (no zeros, no ties)."""
    n = len(d)
    order = sorted(range(n), key=lambda i: abs(d[i]))
    rank = [0] * n
    for r, i in enumerate(order, 1):
        rank[i] = r
    w = sum(rank[i] for i in range(n) if d[i] > 0)
    le = ge = 0
    for signs in itertools.product((0, 1), repeat=n):
        s = sum(r for r, up in zip(range(1, n + 1), signs, strict=True) if up)
        le += s <= w
        ge += s >= w
    return min(1.0, 2 * min(le, ge) / 2**n)


def holm(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        out[i] = min(1.0, running)
    return out


def benjamini_hochberg(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        out[i] = running
    return out
