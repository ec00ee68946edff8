"""DO / HSA: kernels against the naive reference (tests/reference/hsa_naive.py)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.analysis import hsa
from fasteval.errors import ParameterError, SchemaError
from tests.property.strategies import adhoc_frames
from tests.reference import hsa_naive

TOL = 1e-12
DOCS = [f"d{i}" for i in range(12)]
SCORES = [0.0, 1.0, 0.5, -2.0, 3.25, 100000.15461, 100000.1546, 1e-9]


def frames(qrels, runs):
    return adhoc_frames(qrels, runs)


@st.composite
def collections(draw):
    n_q = draw(st.integers(1, 3))
    qrels = {}
    for q in range(n_q):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=10))
        qrels[str(q)] = {d: draw(st.integers(-1, 2)) for d in judged}
    runs = {}
    for r in range(draw(st.integers(1, 3))):
        run = {}
        for q in range(n_q + 1):
            if draw(st.booleans()) or (q == 0 and not run):
                docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
                run[str(q)] = {d: draw(st.sampled_from(SCORES)) for d in docs}
        runs[f"r{r}"] = run
    return qrels, runs


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= TOL * max(1.0, abs(b))


def check(qrels, runs, **kw):
    q, r = frames(qrels, runs)
    ref = hsa_naive.analyse(
        qrels,
        runs,
        values=kw.get("values", "rank"),
        bins=kw.get("bins", 20),
        normalize=kw.get("normalize", "query"),
        pooled=kw.get("pooled", True),
        unjudged=kw.get("unjudged", "exclude"),
    )
    try:
        df = hsa.histogram_analysis(q, r, **kw)
    except fasteval.DataMismatchError:
        # a run sharing no query with the qrels: the engine refuses it, as evaluate() does
        assert any(not (set(rq) & set(qrels)) for rq in runs.values())
        return None
    if kw.get("pooled", True):
        assert df["run_id"].to_list() == sorted(runs, key=list(runs).index)
        for row in df.iter_rows(named=True):
            e = ref[row["run_id"]]
            assert close(row["do"], e["do"]), (row, e)
            assert close(row["hsa"], e["hsa"]), (row, e)
            assert row["supported_bins"] == e["sup"]
            assert (row["n_rel"], row["n_nonrel"]) == (e["n_rel"], e["n_nonrel"])
            assert (row["reason"] is None) == (not math.isnan(row["hsa"]))
    else:
        for row in df.iter_rows(named=True):
            e = ref[row["run_id"]][row["query_id"]]
            assert close(row["do"], e["do"]), (row, e)
            assert close(row["hsa"], e["hsa"]), (row, e)
            if row["query_id"] != "all":
                assert row["supported_bins"] == e["sup"]
                assert (row["n_rel"], row["n_nonrel"]) == (e["n_rel"], e["n_nonrel"])
    return df


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    collections(),
    st.sampled_from(["rank", "score"]),
    st.sampled_from([1, 2, 3, 7, 20]),
    st.sampled_from(["query", "run"]),
    st.booleans(),
    st.sampled_from(["exclude", "nonrel"]),
)
def test_kernels_match_reference(coll, values, bins, normalize, pooled, unjudged):
    qrels, runs = coll
    check(
        qrels, runs, values=values, bins=bins, normalize=normalize, pooled=pooled, unjudged=unjudged
    )


def test_hand_example():
    # 4 relevant at the top, 4 non-relevant below: rank values 1, .875, ..., .125
    docs = {f"d{i}": float(10 - i) for i in range(8)}
    qrels = {"1": {f"d{i}": int(i < 4) for i in range(8)}}
    df = check(qrels, {"r": {"1": docs}}, bins=2)
    # value .5 (rank 5) is in the upper bin: upper 4 rel + 1 nonrel, lower 3 nonrel
    assert df["supported_bins"][0] == 1 and df["do"][0] == 0.0 and math.isnan(df["hsa"][0])
    assert df["reason"][0] == "1 supported bin(s): HSA needs at least 2"
    # relevant at ranks 1, 2, 6: upper bin 2 rel / 3 nonrel, lower 1 rel / 2 nonrel
    qrels = {"1": {f"d{i}": int(i in (0, 1, 5)) for i in range(8)}}
    df = check(qrels, {"r": {"1": docs}}, bins=2)
    assert df["do"][0] == pytest.approx(math.log(2))
    assert df["hsa"][0] == pytest.approx((math.log(2 / 3) - math.log(1 / 2)) / 0.5)


@pytest.mark.parametrize("values", ["rank", "score"])
def test_edge_cases(values):
    runs = {"r": {"1": {"a": 1.0, "b": 1.0, "c": 1.0}, "2": {"a": 0.0, "b": 1.0}}}
    # all scores equal (constant range -> 1.0), single bin
    check({"1": {"a": 1, "b": 0, "c": 0}, "2": {"a": 0, "b": 1}}, runs, values=values, bins=1)
    # empty relevant set
    df = check({"1": {"a": 0, "b": 0}, "2": {"b": 0}}, runs, values=values)
    assert math.isnan(df["do"][0]) and df["reason"][0] == "no relevant documents with values"
    # values exactly 0 and 1 (score min-max) land in the first and last bins
    df = check(
        {"1": {"a": 1, "b": 0}, "2": {"a": 0, "b": 1}}, runs, values=values, bins=4, pooled=False
    )
    assert df.height == 3


def test_no_nonrelevant_reason():
    df = hsa.histogram_analysis(
        pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}),
        pl.DataFrame({"run_id": ["r"], "query_id": ["1"], "doc_id": ["a"], "score": [1.0]}),
    )
    assert df["reason"][0] == "no non-relevant documents with values"


def test_sample_equals_prefiltered_qrels():
    rng = np.random.default_rng(7)
    qrels = {str(q): {f"d{i}": int(rng.random() < 0.3) for i in range(40)} for q in range(5)}
    runs = {
        f"r{k}": {q: {f"d{i}": float(rng.random()) for i in range(50)} for q in qrels}
        for k in range(4)
    }
    q, r = frames(qrels, runs)
    for s in (0, 3, 10, 1000):
        a = hsa.histogram_analysis(q, r, nonrel_sample=s, seed=3)
        kept = hsa.sample_judgments(q, s, seed=3)
        # row order of the qrels does not change the sample
        kept2 = hsa.sample_judgments(q.reverse(), s, seed=3)
        assert kept.sort(["query_id", "doc_id"]).equals(kept2.sort(["query_id", "doc_id"]))
        per_q = kept.group_by("query_id").agg((pl.col("relevance") < 1).sum().alias("n"))
        full = q.group_by("query_id").agg((pl.col("relevance") < 1).sum().alias("n"))
        both = per_q.join(full, on="query_id", suffix="_all")
        assert (both["n"] == np.minimum(both["n_all"], s)).all()
        b = hsa.histogram_analysis(kept, r)
        assert a.equals(b)
    # a different seed draws a different sample
    assert not hsa.sample_judgments(q, 3, seed=3).equals(hsa.sample_judgments(q, 3, seed=4))


def test_scores_entry_points_agree_with_runs():
    rng = np.random.default_rng(1)
    qrels = {str(q): {f"d{i}": int(rng.random() < 0.3) for i in range(30)} for q in range(4)}
    runs = {
        f"m{k}": {q: {d: float(rng.normal()) for d in qrels[q]} for q in qrels} for k in range(3)
    }
    q, r = frames(qrels, runs)
    for normalize in ("query", "run"):
        a = hsa.histogram_analysis(q, r, values="score", normalize=normalize)
        b = hsa.histogram_analysis_scores(q, r, normalize=normalize)
        assert a.sort("run_id").equals(b.sort("run_id"))
        ref = hsa_naive.analyse(qrels, runs, values="score", normalize=normalize)
        for row in b.iter_rows(named=True):
            assert close(row["hsa"], ref[row["run_id"]]["hsa"])
        # bare arrays, one model
        one = r.filter(pl.col("run_id") == "m1").join(q, on=["query_id", "doc_id"])
        one = one.sort("query_id", maintain_order=True)
        off = np.concatenate(
            [[0], np.cumsum(one.group_by("query_id", maintain_order=True).len()["len"].to_numpy())]
        )
        h = hsa.histogram_arrays(
            one["score"].to_numpy(), (one["relevance"] >= 1).to_numpy(), off, normalize=normalize
        )
        assert close(float(h.hsa[0]), ref["m1"]["hsa"]) and close(float(h.do[0]), ref["m1"]["do"])
    pq = hsa.histogram_analysis_scores(q, r, pooled=False)
    assert pq.filter(pl.col("query_id") == "all").height == 3


def test_parameter_errors():
    q = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    r = pl.DataFrame({"run_id": ["r"], "query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    for kw in (
        {"values": "prob"},
        {"bins": 0},
        {"bins": 2.5},
        {"normalize": "all"},
        {"unjudged": "keep"},
        {"nonrel_sample": -1},
        {"nonrel_sample": 5, "unjudged": "nonrel"},
    ):
        with pytest.raises(ParameterError):
            hsa.histogram_analysis(q, r, **kw)
    with pytest.raises(SchemaError):
        hsa.histogram_analysis_scores(q, r.drop("score"))
    with pytest.raises(ParameterError):
        hsa.histogram_arrays(np.zeros(3), np.zeros(3), np.array([0, 2]))


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_matches_reference(trec8_dir):
    """Ten TREC-8 runs: kernels vs the naive reference, rank and score values."""
    import gzip

    qpath = trec8_dir / "qrels.trec8.adhoc.gz"
    runs_dir = trec8_dir / "runs"
    names = [
        "input.INQ603.gz",
        "input.uwmt8a0.gz",
        "input.1.gz",
        "input.Flab8as.gz",
        "input.CL99XT.gz",
        "input.weaver2.gz",
        "input.AntHoc1.gz",
        "input.8manexT3D1N0.gz",
        "input.apl8p.gz",
        "input.ok8amxc.gz",
    ]
    files = [runs_dir / n for n in names if (runs_dir / n).exists()]
    assert len(files) == len(names)
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(qpath, "rt") as f:
        for line in f:
            qid, _, doc, g = line.split()
            qrels.setdefault(qid, {})[doc] = int(g)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for p in files:
        with gzip.open(p, "rt") as f:
            for line in f:
                qid, _, doc, _, score, tag = line.split()[:6]
                runs.setdefault(tag, {}).setdefault(qid, {})[doc] = float(score)
    for kw in (
        {"values": "rank"},
        {"values": "score", "normalize": "run"},
        {"values": "score", "pooled": False, "bins": 7},
    ):
        df = hsa.histogram_analysis(qpath, files, **kw)
        ref = hsa_naive.analyse(qrels, runs, **kw)
        assert df.height >= len(names)
        for row in df.iter_rows(named=True):
            e = (
                ref[row["run_id"]]
                if kw.get("pooled", True)
                else ref[row["run_id"]][row["query_id"]]
            )
            assert close(row["do"], e["do"]) and close(row["hsa"], e["hsa"]), (kw, row, e)


def test_thread_count_and_row_order_do_not_matter():
    import numba

    rng = np.random.default_rng(11)
    n_runs, n_q, n_d = 30, 10, 200
    qrels = pl.DataFrame(
        {
            "query_id": np.repeat([f"q{i}" for i in range(n_q)], 60).tolist(),
            "doc_id": [f"d{j}" for _ in range(n_q) for j in rng.choice(n_d, 60, replace=False)],
            "relevance": rng.integers(-1, 3, n_q * 60).astype(np.int32),
        }
    )
    n = n_runs * n_q * n_d
    runs = pl.DataFrame(
        {
            "run_id": np.repeat([f"r{i}" for i in range(n_runs)], n_q * n_d).tolist(),
            "query_id": np.tile(np.repeat([f"q{i}" for i in range(n_q)], n_d), n_runs).tolist(),
            "doc_id": np.tile([f"d{j}" for j in range(n_d)], n_runs * n_q).tolist(),
            "score": rng.normal(size=n).round(2),
        }
    )
    before = numba.get_num_threads()
    try:
        for kw in ({}, {"values": "score", "normalize": "run"}, {"pooled": False}):
            numba.set_num_threads(1)
            a = hsa.histogram_analysis(qrels, runs, **kw)
            numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
            b = hsa.histogram_analysis(qrels, runs, **kw)
            c = hsa.histogram_analysis(qrels, runs.sample(fraction=1.0, shuffle=True, seed=2), **kw)
            assert a.equals(b)
            assert a.sort(a.columns[:2]).equals(c.sort(c.columns[:2]))
    finally:
        numba.set_num_threads(before)
