"""Slow, obviously correct fusion over plain dicts (one query at a time).

A run is ``{doc: score}``; rankings order by score descending, then doc id
descending (byte-wise), as fasteval orders its inputs.
"""

from __future__ import annotations

import math
import statistics


def ranked(run: dict[str, float]) -> list[str]:
    """Documents best first (score desc, doc id desc)."""
    return [d for d, _ in sorted(run.items(), key=lambda t: (t[1], t[0].encode()), reverse=True)]


def normalise(run: dict[str, float], norm: str) -> dict[str, float]:
    """ranx's per-list normalisations."""
    s = list(run.values())
    if norm == "min-max":
        lo, den = min(s), max(max(s) - min(s), 1e-9)
        return {d: (v - lo) / den for d, v in run.items()}
    if norm == "zscore":
        mu, den = statistics.fmean(s), max(statistics.pstdev(s), 1e-9)
        return {d: (v - mu) / den for d, v in run.items()}
    if norm == "sum":
        lo = min(s)
        den = max(sum(s) - lo * len(s), 1e-9)
        return {d: (v - lo) / den for d, v in run.items()}
    if norm == "rank":
        order = ranked(run)
        return {d: 1 - i / len(order) for i, d in enumerate(order)}
    return dict(run)


def comb(runs: list[dict[str, float]], method: str, norm: str = "min-max") -> dict[str, float]:
    """CombSUM / CombMNZ / CombANZ fused scores."""
    normed = [normalise(r, norm) for r in runs if r]
    out = {}
    for d in {d for r in normed for d in r}:
        vals = [r[d] for r in normed if d in r]
        s = math.fsum(vals)
        out[d] = {"combsum": s, "combmnz": s * len(vals), "combanz": s / len(vals)}[method]
    return out


def position(run: dict[str, float]) -> dict[str, int]:
    return {d: i for i, d in enumerate(ranked(run))}


def votes(runs: list[dict[str, float]], a: str, b: str) -> tuple[int, int]:
    """(runs ranking a strictly above b, runs ranking b above a); unretrieved is below."""
    vab = vba = 0
    for r in runs:
        p = position(r)
        pa, pb = p.get(a, math.inf), p.get(b, math.inf)
        vab += pa < pb
        vba += pb < pa
    return vab, vba


def dominates(runs: list[dict[str, float]], a: str, b: str) -> bool:
    """a Pareto-dominates b: no run ranks b above a, at least one ranks a above b."""
    vab, vba = votes(runs, a, b)
    return vba == 0 and vab > 0
