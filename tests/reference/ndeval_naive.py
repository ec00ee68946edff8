"""Slow, obviously correct ndeval measures for one topic, any cutoff.

Written from ndeval.c 4.5 (computeDCG, computeERR, computeNRBP, computeMAP,
computePrecision, computeSTRecall, idealResult, renormalize) as plain
Python over lists; no codes, no offsets, no kernels. ``judgments`` maps a
document to the set of subtopics it is relevant to.
"""

from __future__ import annotations

import math


def ideal_order(judgments: dict[str, set[int]], alpha: float) -> list[str]:
    """ndeval's greedy ideal ranking: largest novelty gain first, ties to the larger docno."""
    subtopics = sorted({s for subs in judgments.values() for s in subs})
    gain = dict.fromkeys(subtopics, 1.0)
    left = sorted(judgments, key=str.encode)
    out = []
    while left:
        best = None
        best_score = 0.0
        for d in left:
            score = sum(gain[s] for s in sorted(judgments[d]))
            if best is None or score > best_score or score == best_score:
                best, best_score = d, score
        out.append(best)
        left.remove(best)
        for s in judgments[best]:
            gain[s] *= 1.0 - alpha
    return out


def _discount(i: int) -> float:
    return 1.0 if i == 0 else math.log(2.0) / math.log(i + 2.0)


def topic_measures(
    ranking: list[str],
    judgments: dict[str, set[int]],
    cutoffs: list[int],
    *,
    alpha: float = 0.5,
    beta: float = 0.5,
) -> dict[str, float]:
    """Every ndeval measure of one ranked list (fasteval's measure names)."""
    nrel: dict[int, int] = {}
    for subs in judgments.values():
        for s in subs:
            nrel[s] = nrel.get(s, 0) + 1
    m = len(nrel)
    depth = max(cutoffs)

    def gains(docs: list[str]) -> list[float]:
        g = dict.fromkeys(nrel, 1.0)
        out = []
        for d in docs:
            score = 0.0
            for s in sorted(judgments.get(d, ())):
                score += g[s]
                g[s] *= 1.0 - alpha
            out.append(score)
        return out

    def cumulative(scores: list[float], disc) -> list[float]:
        vals = [scores[i] * disc(i) if i < len(scores) else 0.0 for i in range(depth)]
        ideal_ideal = []
        g = float(m)
        for i in range(depth):
            ideal_ideal.append(g * disc(i))
            g *= 1.0 - alpha
        for i in range(1, depth):
            vals[i] += vals[i - 1]
            ideal_ideal[i] += ideal_ideal[i - 1]
        return [vals[0]] + [vals[i] / ideal_ideal[i] for i in range(1, depth)]

    def nrbp(scores: list[float]) -> float:
        total, decay = 0.0, 1.0
        for s in scores:
            total += s * decay
            decay *= beta
        return total * ((1 - (1 - alpha) * beta) / m)

    out: dict[str, float] = {}
    if m == 0:
        for k in cutoffs:
            for f in ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "P_IA", "strec"):
                out[f"{f}@{k}"] = 0.0
        out.update(NRBP=0.0, nNRBP=math.nan, MAP_IA=0.0)
        return out
    run_g = gains(ranking)
    ideal_g = gains(ideal_order(judgments, alpha))
    dcg, idcg = cumulative(run_g, _discount), cumulative(ideal_g, _discount)
    err = cumulative(run_g, lambda i: 1.0 / (i + 1.0))
    ierr = cumulative(ideal_g, lambda i: 1.0 / (i + 1.0))
    for k in cutoffs:
        i = k - 1
        out[f"ERR_IA@{k}"] = err[i]
        out[f"alpha_DCG@{k}"] = dcg[i]
        out[f"nERR_IA@{k}"] = err[i] / ierr[i] if dcg[i] else 0.0
        out[f"alpha_nDCG@{k}"] = dcg[i] / idcg[i] if dcg[i] else 0.0
        top = ranking[:k]
        hits = sum(len(judgments.get(d, ())) for d in top)
        out[f"P_IA@{k}"] = hits / (k * m)
        out[f"strec@{k}"] = len(set().union(*(judgments.get(d, set()) for d in top))) / m
    out["NRBP"] = nrbp(run_g)
    out["nNRBP"] = out["NRBP"] / nrbp(ideal_g)
    ap = 0.0
    for s in sorted(nrel):
        found, total = 0, 0.0
        for i, d in enumerate(ranking):
            if s in judgments.get(d, ()):
                found += 1
                total += found / (i + 1)
        ap += total / nrel[s]
    out["MAP_IA"] = ap / m
    return out
