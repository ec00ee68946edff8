"""Diversity measures on generated data: pyndeval and the naive reference agree with the kernels."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from fasteval.engine.diversity import diversity_evaluate
from tests.oracle._pyndeval import compare, oracle, order_docs
from tests.property.strategies import diversity_archives, examples
from tests.reference.ndeval_naive import topic_measures

TOL = 1e-9


@examples(60)
@given(
    data=diversity_archives(),
    order=st.sampled_from(["rank", "traditional", "pyndeval"]),
    alpha=st.sampled_from([0.5, 0.0, 1.0, 0.3]),
    beta=st.sampled_from([0.5, 0.9, 1.0]),
    level=st.sampled_from([1, 2]),
)
def test_matches_pyndeval(data, order: str, alpha: float, beta: float, level: int) -> None:
    qrels, runs = data
    got = diversity_evaluate(
        qrels, runs, order=order, alpha=alpha, beta=beta, relevance_level=level
    )
    want = oracle(qrels, runs, order=order, alpha=alpha, beta=beta, level=level)
    assert compare(got, want) <= TOL


@examples(40)
@given(
    data=diversity_archives(), alpha=st.sampled_from([0.5, 0.25]), depth=st.sampled_from([None, 3])
)
def test_matches_naive_any_cutoff(data, alpha: float, depth: int | None) -> None:
    qrels, runs = data
    cutoffs = [1, 3, 20, 37]
    names = [
        f"{f}@{k}"
        for f in ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "P_IA", "strec")
        for k in cutoffs
    ]
    names += ["NRBP", "nNRBP", "MAP_IA"]
    got = diversity_evaluate(qrels, runs, names, alpha=alpha, order="traditional", max_depth=depth)
    have = {(r, q, m): v for r, q, m, v in got.iter_rows() if q != "all"}
    judg: dict[str, dict[str, set[int]]] = {}
    for q, s, d, g in qrels.iter_rows():
        if g >= 1:
            judg.setdefault(q, {}).setdefault(d, set()).add(s)
    n = 0
    for (run, qid), g in runs.group_by(["run_id", "query_id"]):
        if qid not in set(qrels["query_id"]):
            continue
        ranking = order_docs(
            list(zip(g["doc_id"], g["score"], g["rank"], strict=True)), "traditional"
        )
        ranking = ranking[:depth] if depth else ranking
        want = topic_measures(ranking, judg.get(qid, {}), cutoffs, alpha=alpha)
        for m in names:
            h, w = have[(run, qid, m)], want[m]
            assert (math.isnan(h) and math.isnan(w)) or abs(h - w) <= TOL, (run, qid, m, h, w)
            n += 1
    assert n > 0


def test_thread_count_and_row_order_do_not_matter() -> None:
    import numba

    rng = np.random.default_rng(5)
    qrels = pl.DataFrame(
        {
            "query_id": rng.integers(1, 6, 400).astype(str),
            "subtopic": rng.integers(1, 7, 400),
            "doc_id": [f"d{i}" for i in rng.integers(0, 80, 400)],
            "relevance": rng.integers(0, 3, 400),
        }
    ).unique(["query_id", "subtopic", "doc_id"])
    runs = pl.DataFrame(
        {
            "run_id": np.repeat([f"r{i}" for i in range(20)], 250),
            "query_id": np.tile(np.repeat(["1", "2", "3", "4", "5"], 50), 20),
            "doc_id": [f"d{i}" for i in np.tile(np.arange(50), 100)],
            "score": rng.random(5000).round(1),
            "rank": np.tile(np.arange(1, 51), 100),
        }
    )
    base = diversity_evaluate(qrels, runs, order="traditional")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = diversity_evaluate(
            qrels, runs.sample(fraction=1.0, shuffle=True, seed=3), order="traditional"
        )
    finally:
        numba.set_num_threads(before)
    assert base.sort(["run_id", "query_id", "measure"]).equals(
        one.sort(["run_id", "query_id", "measure"])
    )
