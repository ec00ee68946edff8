"""Slow, obviously correct DO / HSA (SPEC section 4), plain Python over dicts.

``qrels[q][doc] = grade``; ``runs[run][q][doc] = score``. No arrays, no
kernels: each run's rankings are sorted here, values collected in lists,
histograms counted in lists.
"""

from __future__ import annotations

import math
import struct

NAN = float("nan")


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def query_values(
    ranking: dict[str, float],
    judged: dict[str, int],
    *,
    values: str,
    level: int,
    unjudged: str,
    compat: int = 9,
) -> list[tuple[float, bool]]:
    """(value, relevant?) of the documents of one ranking that enter the histograms."""
    order = sorted(
        ranking.items(),
        key=lambda t: (f32(t[1]) if compat == 9 else t[1], t[0].encode()),
        reverse=True,
    )
    depth = len(order)
    out = []
    for i, (doc, score) in enumerate(order):
        if doc in judged:
            rel = judged[doc] >= level
        elif unjudged == "nonrel":
            rel = False
        else:
            continue
        rank = i + 1
        v = 1.0 - (rank - 1) / depth if values == "rank" else score
        out.append((v, rel))
    return out


def normalise(vals: list[float], lo: float, hi: float) -> list[float]:
    return [(v - lo) / (hi - lo) if hi - lo > 0 else 1.0 for v in vals]


def histogram(pairs: list[tuple[float, bool]], bins: int) -> tuple[list[int], list[int]]:
    h_r = [0] * bins
    h_nr = [0] * bins
    for v, rel in pairs:
        k = min(max(math.floor(v * bins), 0), bins - 1)
        if rel:
            h_r[k] += 1
        else:
            h_nr[k] += 1
    return h_r, h_nr


def do_hsa(h_r: list[int], h_nr: list[int]) -> tuple[float, float, int]:
    """(DO, HSA, supported bins) of two histograms; NaN where undefined."""
    bins = len(h_r)
    if sum(h_r) == 0 or sum(h_nr) == 0:
        sup = sum(1 for a, b in zip(h_r, h_nr, strict=True) if a and b)
        return NAN, NAN, sup
    xs, os_, do = [], [], 0.0
    for k in range(bins):
        if h_r[k] > 0 and h_nr[k] > 0:
            do += math.log(min(h_r[k], h_nr[k]))
            xs.append((k + 0.5) / bins)
            os_.append(math.log(h_r[k] / h_nr[k]))
    if len(xs) < 2:
        return do, NAN, len(xs)
    mx = sum(xs) / len(xs)
    mo = sum(os_) / len(os_)
    num = sum((x - mx) * (o - mo) for x, o in zip(xs, os_, strict=True))
    den = sum((x - mx) ** 2 for x in xs)
    return do, num / den, len(xs)


def analyse(
    qrels: dict[str, dict[str, int]],
    runs: dict[str, dict[str, dict[str, float]]],
    *,
    values: str = "rank",
    bins: int = 20,
    normalize: str = "query",
    pooled: bool = True,
    unjudged: str = "exclude",
    level: int = 1,
    compat: int = 9,
) -> dict[str, dict]:
    """Per run: pooled -> {do, hsa, sup, n_rel, n_nonrel}; else {query: {...}, "all": {do, hsa}}."""
    out: dict[str, dict] = {}
    for run, rq in runs.items():
        per_q = {
            q: query_values(
                ranking, qrels[q], values=values, level=level, unjudged=unjudged, compat=compat
            )
            for q, ranking in rq.items()
            if q in qrels and ranking
        }
        if values == "score":
            if normalize == "run":
                allv = [v for pairs in per_q.values() for v, _ in pairs]
                lo, hi = (min(allv), max(allv)) if allv else (0.0, 1.0)
                per_q = {
                    q: list(
                        zip(normalise([v for v, _ in p], lo, hi), [r for _, r in p], strict=True)
                    )
                    for q, p in per_q.items()
                }
            else:
                per_q = {
                    q: list(
                        zip(
                            normalise([v for v, _ in p], min(v for v, _ in p), max(v for v, _ in p))
                            if p
                            else [],
                            [r for _, r in p],
                            strict=True,
                        )
                    )
                    for q, p in per_q.items()
                }
        if pooled:
            pairs = [x for p in per_q.values() for x in p]
            h_r, h_nr = histogram(pairs, bins)
            do, hsa, sup = do_hsa(h_r, h_nr)
            out[run] = {"do": do, "hsa": hsa, "sup": sup, "n_rel": sum(h_r), "n_nonrel": sum(h_nr)}
        else:
            res: dict = {}
            for q, p in per_q.items():
                h_r, h_nr = histogram(p, bins)
                do, hsa, sup = do_hsa(h_r, h_nr)
                res[q] = {
                    "do": do,
                    "hsa": hsa,
                    "sup": sup,
                    "n_rel": sum(h_r),
                    "n_nonrel": sum(h_nr),
                }
            dos = [r["do"] for r in res.values() if not math.isnan(r["do"])]
            hsas = [r["hsa"] for r in res.values() if not math.isnan(r["hsa"])]
            res["all"] = {
                "do": sum(dos) / len(dos) if dos else NAN,
                "hsa": sum(hsas) / len(hsas) if hsas else NAN,
            }
            out[run] = res
    return out
