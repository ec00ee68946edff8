"""RIC, joint RIC and information difference against the brute-force reference (SPEC 5)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.analysis import information as inf
from tests.property.strategies import adhoc_frames
from tests.reference import information as ref

DOCS = [f"d{i:02d}" for i in range(25)] + ["D1", "d1", "a", "ab"]
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-12


@st.composite
def collections(draw, max_runs=4):
    """Graded qrels with negative grades; runs with ties, unjudged docs, missing queries."""
    n_q = draw(st.integers(1, 4))
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_q):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=18))
        if judged:
            qrels[str(100 + q)] = {d: draw(st.integers(-1, 3)) for d in judged}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for r in range(draw(st.integers(1, max_runs))):
        run: dict[str, dict[str, float]] = {}
        for q in range(n_q + 1):
            if draw(st.booleans()):
                docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=20))
                scores = draw(
                    st.lists(
                        st.sampled_from([0.0, 1.0, 1.5, -2.0, 3.25, 7.0]),
                        min_size=len(docs),
                        max_size=len(docs),
                    )
                )
                run[str(100 + q)] = dict(zip(docs, scores, strict=True))
        runs[f"run{r}"] = run
    return qrels, runs


def frames(qrels, runs):
    return adhoc_frames(qrels, runs)


def usable(qrels, runs):
    return bool(qrels) and all(any(q in qrels for q in run) for run in runs.values())


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= TOL


@SETTINGS
@given(collections(), st.integers(0, 3))
def test_ric_matches_reference(data, level):
    qrels, runs = data
    assume(usable(qrels, runs))
    q, r = frames(qrels, runs)
    got = fasteval.ric(q, r, relevance_level=level, per_query=True)
    seen = {(a, b): v for a, b, v in got.iter_rows()}
    assert runs  # usable() holds: every run below is checked
    for rid, run in runs.items():
        vals = []
        for qid, qr in qrels.items():
            if qid not in run:
                continue
            v = ref.joint_ric_query(qr, [run[qid]], level)
            if v is None:
                assert (rid, qid) not in seen
                continue
            vals.append(v)
            assert close(seen[(rid, qid)], v), (rid, qid)
            assert -TOL <= seen[(rid, qid)] <= 1 + TOL
        want = sum(vals) / len(vals) if vals else float("nan")
        assert close(seen[(rid, "all")], want)


@SETTINGS
@given(collections(), st.integers(1, 2))
def test_joint_ric_and_id_match_reference(data, level):
    qrels, runs = data
    assume(usable(qrels, runs))
    q, r = frames(qrels, runs)
    d = inf.pair_data(q, r, relevance_level=level)
    names = d.run_names
    rl = [runs[n] for n in names]
    # joint RIC of every prefix of the runs (k = 1 is RIC)
    sets = [names[: k + 1] for k in range(len(names))]
    mean, _ = d.joint_ric(sets)
    assert len(sets) == len(runs) > 0
    for k, s in enumerate(sets):
        want = ref.mean_over_queries(qrels, rl[: k + 1], ref.joint_ric_query, level)
        assert close(mean[k], want), s
    # information difference of all pairs, both orders, and of a run with itself
    pairs = [(a, b) for a in names for b in names]
    got = inf.information_difference(q, r, pairs, relevance_level=level)
    vals = {(a, b): v for a, b, v in got.iter_rows()}
    for a, b in pairs:
        want = ref.mean_over_queries(
            qrels, [runs[a], runs[b]], lambda qr, rr, lv: ref.id_query(qr, rr[0], rr[1], lv), level
        )
        assert close(vals[(a, b)], want), (a, b)
        assert close(vals[(a, b)], vals[(b, a)])
        if a == b:
            assert math.isnan(want) or abs(vals[(a, b)]) <= TOL


@SETTINGS
@given(collections())
def test_pair_tables_are_consistent(data):
    """Margins of the joint table are the single-run counts; n equals the pair count."""
    qrels, runs = data
    assume(usable(qrels, runs))
    q, r = frames(qrels, runs)
    d = inf.pair_data(q, r)
    a, b = inf.all_pairs(len(d.run_names))
    aa = np.concatenate([a, b, np.arange(len(d.run_names))])
    bb = np.concatenate([b, a, np.arange(len(d.run_names))])
    p_i, q_i, t = d.pair_counts(aa, bb)
    assert (t >= 0).all()
    assert (t.sum(axis=1) == d.n_pairs[q_i]).all()
    for side, runs_ in ((0, aa), (1, bb)):
        g = d.gmap[runs_[p_i], q_i]
        want = np.where(g[:, None] >= 0, d.cdz[np.maximum(g, 0)], 0)
        want[g < 0, 2] = d.n_pairs[q_i[g < 0]]
        tt = t.reshape(-1, 3, 3)
        marg = tt.sum(axis=2 - side)  # (correct, unretrieved, wrong)
        assert (marg[:, 0] == want[:, 0]).all()
        assert (marg[:, 1] == want[:, 2]).all()
        assert (marg[:, 2] == want[:, 1]).all()


def test_ric_hand_example():
    """Two relevant, two non-relevant docs; run ranks r1 n1 r2 (n2 unretrieved).

    Pairs (rel, nonrel): r1n1 +, r1n2 +, r2n1 -, r2n2 +: c = 3, d = 1, z = 0.
    RIC = 1 - H2(3/4).
    """
    q = pl.DataFrame(
        {"query_id": ["1"] * 4, "doc_id": ["r1", "r2", "n1", "n2"], "relevance": [1, 1, 0, 0]}
    )
    r = pl.DataFrame(
        {
            "run_id": ["x"] * 4,
            "query_id": ["1"] * 4,
            "doc_id": ["r1", "n1", "r2", "n3"],
            "score": [4.0, 3.0, 2.0, 1.0],
        }
    )
    got = fasteval.ric(q, r)["RIC"][0]
    h2 = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert got == pytest.approx(1 - h2, abs=1e-15)
