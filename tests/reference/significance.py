"""Slow, obviously correct paired tests over one pair of systems at a time.

Plain Python loops, sums left to right in query order (as the kernels do),
so the same resamples give bit-identical statistics.
"""

from __future__ import annotations

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


def bootstrap_asl(x: list[float], y: list[float], resamples: list[list[int]]) -> float:
    """Sakai (2006): resample the centred differences; share of |t*| >= |t|."""
    z = [a - b for a, b in zip(x, y, strict=True)]
    t = t_stat(z)
    total = 0.0
    for v in z:
        total += v
    mean = total / len(z)
    w = [v - mean for v in z]
    hits = sum(1 for idx in resamples if abs(t_stat([w[i] for i in idx])) >= abs(t))
    return hits / len(resamples)


def randomisation_p(x: list[float], y: list[float], signs: list[list[float]], tol: float) -> float:
    """Fisher's randomisation test with the given sign flips."""
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
    return hits / len(signs)


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
