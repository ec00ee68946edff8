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


def comb(
    runs: list[dict[str, float]], method: str, norm: str = "min-max", *, in_order: bool = False
) -> dict[str, float]:
    """CombSUM / CombMNZ / CombANZ fused scores.

    Sums exactly (``math.fsum``), or with ``in_order`` left to right in run
    order, as the kernel does (the same floats, so near-ties order alike).
    """
    normed = [normalise(r, norm) for r in runs if r]
    out = {}
    for d in {d for r in normed for d in r}:
        vals = [r[d] for r in normed if d in r]
        s = sum(vals, 0.0) if in_order else math.fsum(vals)
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


def top(fused: dict[str, float], depth: int) -> dict[str, float]:
    """The first ``depth`` documents of a fused run (score desc, doc id desc)."""
    return {d: fused[d] for d in ranked(fused)[:depth]}


def upper_bound_study(
    qrels: dict[str, dict[str, int]],
    runs: dict[str, dict[str, dict[str, float]]],
    groups: list[list[str]],
    methods: list[str],
    fuse_group,
    level: int = 1,
) -> list[dict]:
    """One row per (group, method), everything recomputed by brute force.

    ``fuse_group(method, group)`` returns the group's fused run
    ``{query: {doc: score}}``. Joint RIC and RIC enumerate document pairs
    (tests.reference.information); AP is trec_eval's, averaged over the qrels
    queries the run has.
    """
    from tests.reference import information as inf
    from tests.reference import naive

    def ric_fn(qr, rs, lv):
        return inf.joint_ric_query(qr, rs, lv, compat=10)

    def mean_ap(run: dict[str, dict[str, float]]) -> float:
        aps = [
            naive.measures(naive.ranking(run[q], qr, compat=10), qr, level, compat=10)["map"]
            for q, qr in qrels.items()
            if q in run
        ]
        return sum(aps) / len(aps) if aps else 0.0

    def ric(run):
        return inf.mean_over_queries(qrels, [run], ric_fn, level)

    rows = []
    for i, g in enumerate(groups):
        members = [runs[r] for r in g]
        joint = inf.mean_over_queries(qrels, members, ric_fn, level)
        best_ric = max(ric(r) for r in members)
        best_ap = max(mean_ap(r) for r in members)
        for m in methods:
            fused = fuse_group(m, g)
            rows.append(
                {
                    "group": i,
                    "runs": ",".join(g),
                    "method": m,
                    "joint_RIC": joint,
                    "RIC": ric(fused),
                    "map": mean_ap(fused),
                    "best_run_RIC": best_ric,
                    "best_run_map": best_ap,
                }
            )
    return rows


# ---------------------------------------------------------------- every score method


def normalise_all(runs: list[dict[str, float]], norm: str) -> list[dict[str, float]]:
    """ranx's normalisations, Borda included (it completes every run to all candidates)."""
    if norm == "borda":
        cands = {d for r in runs for d in r}
        m = len(cands)
        out = []
        for r in runs:
            pos = position(r)
            out.append(
                {d: 1 - pos[d] / m if d in pos else 0.5 - (len(r) - 1) / (2 * m) for d in cands}
            )
        return out
    if norm == "max":
        return [{d: v / max(*r.values(), 1e-9) for d, v in r.items()} for r in runs]
    if norm == "min-max-inverted":
        res = []
        for r in runs:
            hi, den = max(r.values()), max(max(r.values()) - min(r.values()), 1e-9)
            res.append({d: (hi - v) / den for d, v in r.items()})
        return res
    return [normalise(r, norm) for r in runs]


def fuse_any(
    runs: list[dict[str, float]],
    method: str,
    norm: str = "min-max",
    weights: list[float] | None = None,
    **p: float,
) -> dict[str, float]:
    """Fused scores of one query under ``method`` (registry definitions), the slow way.

    Sums run left to right in run order, as the kernel and ranx do.
    """
    w = weights or [1.0] * len(runs)
    cands = sorted({d for r in runs for d in r})
    m = len(cands)
    normed = normalise_all(runs, norm)
    pos = [position(r) for r in runs]  # ranks come from the input scores
    out: dict[str, float] = {}
    for d in cands:
        present = [i for i, r in enumerate(normed) if d in r]
        s = [normed[i][d] for i in present]
        ws = [w[i] for i in present]
        c = len(present)
        wsum = sum((wi * x for wi, x in zip(ws, s, strict=True)), 0.0)
        if method == "combsum":
            out[d] = wsum
        elif method == "combmnz":
            out[d] = wsum * c
        elif method == "combanz":
            out[d] = wsum / c
        elif method == "combmax":
            out[d] = max(s + ([-1e9] if c < len(runs) else []))
        elif method == "combmin":
            out[d] = min(s + ([1e9] if c < len(runs) else []))
        elif method == "combmed":
            out[d] = statistics.median(s)
        elif method == "combgmnz":
            out[d] = sum(s, 0.0) * c ** p["gamma"]
        elif method == "mixed":
            out[d] = wsum * math.sqrt(c)
        elif method == "wmnz":
            out[d] = sum(s, 0.0) * sum(ws, 0.0)
        else:  # rank-based: from the input order
            ranks = [(i, pos[i][d]) for i in range(len(runs)) if d in pos[i]]
            if method == "rrf":
                out[d] = sum((w[i] / (p["k"] + j + 1) for i, j in ranks), 0.0)
            elif method in ("isr", "log_isr", "logn_isr"):
                tot = sum((1 / (j + 1) ** 2 for _, j in ranks), 0.0)
                n = len(ranks)
                fac = {"isr": n, "log_isr": math.log(n)}.get(method)
                out[d] = tot * (fac if fac is not None else math.log(n + p["sigma"]))
            elif method == "rbc":
                out[d] = sum((w[i] * (1 - p["phi"]) * p["phi"] ** j for i, j in ranks), 0.0)
            elif method == "borda":
                tot = 0.0
                for i, r in enumerate(runs):
                    pts = m - pos[i][d] if d in pos[i] else (m - len(r) + 1) / 2
                    tot += w[i] * pts
                out[d] = tot
            else:
                msg = f"no reference for {method}"
                raise ValueError(msg)
    return out
