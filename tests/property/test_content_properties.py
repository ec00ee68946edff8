"""Properties of the content measures (SPEC 9), by hypothesis."""

from __future__ import annotations

import math

import numba
import numpy as np
import polars as pl
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fasteval.analysis import content as ac
from fasteval.io.collection import from_texts

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.sampled_from([f"t{i}" for i in range(12)])


@st.composite
def proportional_world(draw: st.DrawFn) -> tuple[list[str], list[str], int]:
    """Relevant documents that all share one term distribution (multiples of a base doc)."""
    base = draw(st.lists(words, min_size=1, max_size=6))
    mults = draw(st.lists(st.integers(1, 4), min_size=1, max_size=6))
    others = draw(st.lists(st.lists(words, max_size=6), max_size=5))
    texts = [" ".join(base * m) for m in mults] + [" ".join(o) for o in others]
    ids = [f"d{i}" for i in range(len(texts))]
    return ids, texts, len(mults)


@SETTINGS
@given(proportional_world(), st.integers(1, 8), st.randoms(use_true_random=False))
def test_top_k_exactly_r_in_same_proportions_scores_one(world, extra_k, rnd) -> None:
    ids, texts, n_rel = world
    coll = from_texts(ids, texts)
    rel = ids[:n_rel]
    k = n_rel
    order = rel[:]
    rnd.shuffle(order)
    rest = ids[n_rel:]
    assume(all(coll.counts_of(d) for d in rel))
    qrels = pl.DataFrame({"query_id": ["q"] * n_rel, "doc_id": rel, "relevance": [1] * n_rel})
    ranked = order + rest
    runs = pl.DataFrame(
        {
            "run_id": ["r"] * len(ranked),
            "query_id": ["q"] * len(ranked),
            "doc_id": ranked,
            "score": [float(len(ranked) - i) for i in range(len(ranked))],
        }
    )
    names = [f"LMJS@{k}", f"LMKL(lambda=0)@{k}", f"LMJS@{k + extra_k}"]
    t = ac.content_evaluate(qrels, runs, coll, names, per_query=False)
    v = dict(t.select("measure", "value").iter_rows())
    assert abs(v[f"LMJS@{k}"] - 1.0) <= 1e-12
    assert abs(v[f"LMKL(lambda=0)@{k}"] - 1.0) <= 1e-12  # KL 0: identical models
    # deeper, other documents enter and the score can only be <= 1
    assert v[f"LMJS@{k + extra_k}"] <= 1.0 + 1e-12


@st.composite
def random_world(draw: st.DrawFn):
    n_docs = draw(st.integers(2, 15))
    texts = [" ".join(draw(st.lists(words, max_size=8))) for _ in range(n_docs)]
    ids = [f"d{i}" for i in range(n_docs)]
    n_q = draw(st.integers(1, 3))
    qrels = []
    for q in range(n_q):
        docs = draw(st.lists(st.sampled_from([*ids, "gone"]), min_size=1, max_size=6, unique=True))
        for d in docs:
            qrels.append((f"q{q}", d, draw(st.integers(-1, 2))))
    runs = []
    for r in range(draw(st.integers(1, 3))):
        for q in range(n_q):
            docs = draw(st.lists(st.sampled_from([*ids, "x"]), min_size=1, max_size=8, unique=True))
            for d in docs:
                runs.append((f"r{r}", f"q{q}", d, float(draw(st.integers(0, 3)))))
    return ids, texts, qrels, runs


@SETTINGS
@given(random_world(), st.randoms(use_true_random=False))
def test_independent_of_row_order_and_threads(world, rnd) -> None:
    ids, texts, qrels, runs = world
    coll = from_texts(ids, texts)
    q = pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row")
    r = pl.DataFrame(runs, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    names = ["LMJS@3", "LMKL@2"]
    base = ac.content_evaluate(q, r, coll, names)
    perm = list(range(r.height))
    rnd.shuffle(perm)
    qperm = list(range(q.height))
    rnd.shuffle(qperm)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        shuffled = ac.content_evaluate(q[qperm], r[perm], coll, names)
    finally:
        numba.set_num_threads(old)
    key = ["run_id", "query_id", "measure"]
    a = base.sort(key)
    b = shuffled.sort(key)
    assert a.select(key).equals(b.select(key))
    av, bv = a["value"].to_numpy(), b["value"].to_numpy()
    assert np.array_equal(np.isnan(av), np.isnan(bv))
    assert np.array_equal(av[~np.isnan(av)], bv[~np.isnan(bv)])


@SETTINGS
@given(random_world())
def test_empty_relevant_sets_are_nan_and_counted(world) -> None:
    ids, texts, qrels, runs = world
    coll = from_texts(ids, texts)
    q = pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row")
    r = pl.DataFrame(runs, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    ev = ac.evaluate_content(q, r, coll, "LMJS@4")
    per = ev.table.filter(pl.col("query_id") != "all")
    counts = {d: sum(coll.counts_of(d).values()) for d in ids}
    no_rel = set()
    no_text = set()
    for qid, grp in q.group_by("query_id"):
        rel = [d for d, g in zip(grp["doc_id"], grp["relevance"], strict=True) if g >= 1]
        if not rel:
            no_rel.add(qid[0])
        elif not any(counts.get(d, 0) > 0 for d in rel):
            no_text.add(qid[0])
    nan_q = set(per.filter(pl.col("value").is_nan())["query_id"].to_list())
    assume(per.height > 0)
    assert nan_q == (no_rel | no_text) & set(per["query_id"].to_list())
    assert ev.report.nan_queries[ac.REASON_NO_RELEVANT] == len(no_rel & nan_q)
    assert ev.report.nan_queries[ac.REASON_NOT_IN_COLLECTION] == len(no_text & nan_q)
    ok = per.filter(~pl.col("value").is_nan())["value"].to_numpy()
    assert ((ok >= -1e-12) & (ok <= 1 + 1e-12)).all()
    for v in ev.table.filter(pl.col("query_id") == "all")["value"].to_list():
        assert math.isnan(v) or -1e-12 <= v <= 1 + 1e-12
