"""Slow, obviously correct reference implementations of the ad-hoc measures.

Plain Python over one ranking at a time, written from trec_eval's
definitions (form_res_rels.c and m_*.c), with none of the engine's
machinery: no codes, no cumulative arrays, no kernels.
"""

from __future__ import annotations

import math
import struct

NONPOOL = -1
UNJUDGED = -2


def f32(x: float) -> float:
    """Round a double to the nearest float32, as trec_eval 9 stores scores."""
    return struct.unpack("f", struct.pack("f", x))[0]


def ranking(
    run: dict[str, float],
    qrels: dict[str, int],
    *,
    compat: int = 9,
    max_depth: int | None = None,
    judged_only: bool = False,
) -> list[int]:
    """Relevance values of a run in trec_eval order (score desc, doc id desc)."""
    items = [(f32(s) if compat == 9 else s, d) for d, s in run.items()]
    items.sort(key=lambda t: (t[0], t[1].encode()), reverse=True)
    if max_depth is not None:
        items = items[:max_depth]
    rels = []
    for _, d in items:
        if d not in qrels:
            rels.append(NONPOOL)
        elif qrels[d] < 0:
            rels.append(UNJUDGED)
        else:
            rels.append(qrels[d])
    if judged_only:
        rels = [r for r in rels if r >= 0]
    return rels


def precision_at(rels: list[int], k: int, level: int) -> float:
    return sum(1 for r in rels[:k] if r >= level) / k


def measures(
    rels: list[int], qrels: dict[str, int], level: int = 1, compat: int = 9
) -> dict[str, float]:
    """All ad-hoc measures of one ranking, keyed by trec_eval name."""
    judged = [g for g in qrels.values() if g >= 0]
    R = sum(1 for g in judged if g >= level)
    N = sum(1 for g in judged if g < level)
    n = len(rels)
    relevant = [i for i, r in enumerate(rels) if r >= level]
    out: dict[str, float] = {
        "num_ret": n,
        "num_rel": R,
        "num_rel_ret": len(relevant),
        "num_nonrel_judged_ret": sum(1 for r in rels if 0 <= r < level),
    }
    ap = sum(precision_at(rels, i + 1, level) for i in relevant) / R if relevant else 0.0
    out["map"] = ap
    out["gm_map"] = ap
    out["Rprec"] = sum(1 for r in rels[:R] if r >= level) / R if R and n else 0.0
    out["recip_rank"] = 1.0 / (relevant[0] + 1) if relevant else 0.0
    for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000):
        out[f"P_{k}"] = precision_at(rels, k, level)
        out[f"recall_{k}"] = sum(1 for r in rels[:k] if r >= level) / R if R else 0.0
        ap_k = sum(precision_at(rels, i + 1, level) for i in relevant if i < k)
        out[f"map_cut_{k}"] = ap_k / R if R else 0.0
    for k in (1, 5, 10):
        out[f"success_{k}"] = 1.0 if any(r >= level for r in rels[:k]) else 0.0

    def iprec(p: float) -> float:
        x = p * R
        cut = int(x + 0.9) if compat == 9 else math.floor(x + 0.5)
        if cut > len(relevant) or not relevant:
            return 0.0
        start = relevant[max(cut, 1) - 1]
        return max(precision_at(rels, i + 1, level) for i in range(start, n))

    levels = [i / 10 for i in range(11)]
    for p in levels:
        out[f"iprec_at_recall_{p:.2f}"] = iprec(p)
    out["11pt_avg"] = sum(iprec(p) for p in reversed(levels)) / 11

    def dcg(gains: list[float]) -> float:
        return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)

    ideal = sorted((g for g in judged if g > 0), reverse=True)
    gains = [float(max(r, 0)) for r in rels]
    out["ndcg"] = dcg(gains) / dcg(ideal) if dcg(ideal) > 0 else 0.0
    for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000):
        i_k = dcg(ideal[:k])
        out[f"ndcg_cut_{k}"] = dcg(gains[:k]) / i_k if i_k > 0 else dcg(gains[:k])
    nrr = len(relevant)
    out["set_P"] = nrr / n if n else 0.0
    out["set_recall"] = nrr / R if R else 0.0
    out["set_F"] = 2 * (nrr / n) * (nrr / R) / ((nrr / n) + (nrr / R)) if nrr else 0.0

    # bpref: for each relevant retrieved, the judged non-relevant ranked above it
    bpref = 0.0
    for i in relevant:
        above = sum(1 for r in rels[:i] if 0 <= r < level)
        bpref += 1.0 - min(above, R) / min(N, R) if above else 1.0
    out["bpref"] = bpref / R if R else 0.0

    # infAP (Yilmaz & Aslam), trec_eval's estimator with epsilon 1e-5
    eps = 0.00001
    inf = 0.0
    for j, r in enumerate(rels):
        if r < level:
            continue
        if j == 0:
            inf += 1.0
            continue
        above = rels[:j]
        rel_above = sum(1 for x in above if x >= level)
        nonrel_above = sum(1 for x in above if 0 <= x < level)
        unj_above = sum(1 for x in above if x == UNJUDGED)
        inf += 1.0 / (j + 1) + (j / (j + 1)) * ((rel_above + nonrel_above + unj_above) / j) * (
            (rel_above + eps) / (rel_above + nonrel_above + 2 * eps)
        )
    out["infAP"] = inf / R if R else 0.0
    return out


# --- measures beyond trec_eval (no oracle tool computes all of them) -----------------


def err_at(grades: list[int], k: int, gmax: float = 4.0) -> float:
    """gdeval's ERR@k, term by term."""
    total = 0.0
    for r in range(1, min(k, len(grades)) + 1):
        stop = [(2.0 ** max(g, 0) - 1.0) / 2.0**gmax for g in grades[:r]]
        p_reach = 1.0
        for s in stop[:-1]:
            p_reach *= 1.0 - s
        total += p_reach * stop[-1] / r
    return total


def nerr_at(grades: list[int], judged: list[int], k: int) -> float:
    """ERR@k over the ERR@k of the judged grades sorted descending."""
    best = err_at(sorted((g for g in judged if g > 0), reverse=True), k)
    return err_at(grades, k) / best if best > 0 else 0.0


def ncg_at(grades: list[int], judged: list[int], k: int) -> float:
    """Sum of positive grades in the top k over the best possible sum."""
    best = sum(sorted((g for g in judged if g > 0), reverse=True)[:k])
    return sum(g for g in grades[:k] if g > 0) / best if best > 0 else 0.0


def judged_at(in_qrels: list[bool], k: int) -> float:
    """Share of the top min(k, n) documents that have a qrels entry."""
    top = in_qrels[:k]
    return sum(top) / len(top) if top else 0.0


def jk_ndcg(gains: list[float], all_gains: list[float]) -> float:
    """nDCG with the Jarvelin-Kekalainen discount: g_1 + sum_{i>=2} g_i / log2(i)."""

    def dcg(gs: list[float]) -> float:
        return sum(g if i == 1 else g / math.log2(i) for i, g in enumerate(gs, start=1))

    best = dcg(sorted((g for g in all_gains if g > 0), reverse=True))
    return dcg(gains) / best if best > 0 else 0.0


def relstring(rels: list[int], n: int) -> str:
    """trec_eval's relstring of a ranking's relevance values (m_relstring.c)."""
    out = []
    for r in rels[: max(n, 0)]:
        if r > 9:
            out.append(">")
        elif r >= 0:
            out.append(str(r))
        elif r == NONPOOL:
            out.append("-")
        elif r == UNJUDGED:
            out.append(".")
        else:
            out.append("<")
    return "".join(out)


def zscore(value: float, mean: float | None, std: float | None) -> float:
    """trec_eval's convert_zscores.c for one value (None: not in the z-score file)."""
    if mean is None or std is None:
        return -1000000.0
    if std != 0.0:
        return (value - mean) / std
    return 0.0 if value == mean else -1000000.0


def rprec_mult(rels: list[int], num_rel: int, x: float, level: int = 1) -> float:
    """Precision after (long)(x * R + 0.9) documents (m_Rprec_mult.c); 0 for a 0 cutoff."""
    k = int(x * num_rel + 0.9)
    return precision_at(rels, k, level) if k > 0 else 0.0


def dcg(grades: list[int]) -> float:
    """trec_eval 10's dcg: sum over the ranking of g_i / log2(i + 1), positive grades only."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(grades, start=1) if g > 0)


def ideal_dcg(judged: list[int]) -> float:
    """trec_eval 10's ideal_dcg: :func:`dcg` of every positive judged grade, best first."""
    return dcg(sorted((g for g in judged if g > 0), reverse=True))


def jk_dcg(gains: list[float]) -> float:
    """DCG with the Jarvelin-Kekalainen discount: g_1 + sum_{i>=2} g_i / log2(i)."""
    return sum(g if i == 1 else g / math.log2(i) for i, g in enumerate(gains, start=1))
