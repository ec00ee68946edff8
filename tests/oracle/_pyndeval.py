"""pyndeval (ndeval 4.5 in C) as the oracle for the diversity measures.

pyndeval orders a run itself (score descending, docno ascending), so to check
another ordering we hand it scores that encode the order we want: minus the
position in that order. Qrels go in sorted by subtopic so pyndeval's global
subtopic numbering (first appearance) keeps the subtopics' numeric order,
the order in which ndeval sums gains.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import polars as pl

pyndeval = __import__("pytest").importorskip("pyndeval")

MEASURES = [
    *(f"{f}@{k}" for f in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG") for k in (5, 10, 20)),
    "NRBP",
    "nNRBP",
    "MAP-IA",
    *(f"{f}@{k}" for f in ("P-IA", "strec") for k in (5, 10, 20)),
]


def canonical(ndeval_name: str) -> str:
    """``alpha-nDCG@20`` -> ``alpha_nDCG@20`` (fasteval's name)."""
    return ndeval_name.replace("-IA", "_IA").replace("alpha-", "alpha_")


def order_docs(rows: list[tuple[str, float, int]], order: str) -> list[str]:
    """Documents ``(doc, score, rank)`` of one ranking in ``order``, written out plainly."""
    if order == "rank":
        return [d for d, _, _ in sorted(rows, key=lambda r: r[2])]
    if order == "pyndeval":
        return [d for d, _, _ in sorted(rows, key=lambda r: (-r[1], r[0]))]
    by_doc_desc = sorted(rows, key=lambda r: r[0].encode(), reverse=True)
    return [d for d, _, _ in sorted(by_doc_desc, key=lambda r: -r[1])]


def oracle(
    qrels: pl.DataFrame,
    runs: pl.DataFrame,
    *,
    order: str = "rank",
    alpha: float = 0.5,
    beta: float = 0.5,
    level: int = 1,
) -> dict[tuple[str, str, str], float]:
    """``{(run_id, query_id, fasteval measure name): value}`` from pyndeval.

    ``qrels``: query_id, subtopic (int), doc_id, relevance; ``runs``: run_id,
    query_id, doc_id, score, rank.
    """
    q = qrels.sort("subtopic", maintain_order=True)
    tuples = [
        (r["query_id"], str(r["subtopic"]), r["doc_id"], int(r["relevance"]))
        for r in q.iter_rows(named=True)
    ]
    ev = pyndeval.RelevanceEvaluator(
        tuples, MEASURES, relevance_level=level, alpha=alpha, beta=beta
    )
    out: dict[tuple[str, str, str], float] = {}
    groups: dict[tuple[str, str], list[tuple[str, float, int]]] = defaultdict(list)
    for r in runs.iter_rows(named=True):
        groups[(r["run_id"], r["query_id"])].append((r["doc_id"], r["score"], r["rank"]))
    by_run: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    for (run, qid), rows in sorted(groups.items()):
        docs = order_docs(rows, order)
        by_run[run].extend((qid, d, -float(i)) for i, d in enumerate(docs))
    for run, recs in by_run.items():
        res = ev.evaluate(recs)
        for qid, vals in res.items():
            for m, v in vals.items():
                out[(run, qid, canonical(m))] = float(v)
    return out


def compare(got: pl.DataFrame, want: dict[tuple[str, str, str], float]) -> float:
    """Max abs difference over every (run, query, measure) of ``want``; all must be present."""
    per_q = got.filter(pl.col("query_id") != "all")
    have = {
        (r, q, m): v
        for r, q, m, v in per_q.select("run_id", "query_id", "measure", "value").iter_rows()
    }
    assert set(have) == set(want), (
        f"keys differ: only fasteval {sorted(set(have) - set(want))[:5]}, "
        f"only pyndeval {sorted(set(want) - set(have))[:5]}"
    )
    worst = 0.0
    for k, w in want.items():
        h = have[k]
        if np.isnan(w) or np.isnan(h):
            assert np.isnan(w) and np.isnan(h), (k, h, w)
            continue
        worst = max(worst, abs(h - w))
    return worst
