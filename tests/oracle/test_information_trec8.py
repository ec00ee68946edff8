"""RIC, joint RIC and information difference on real TREC-8 runs against the brute force."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.analysis import information as inf
from tests.reference import information as ref

RUNS = ["input.INQ604.gz", "input.Flab8atd2.gz", "input.att99atdc.gz"]

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


def test_trec8_against_brute_force(trec8_dir):
    base = trec8_dir
    qrels = fasteval.load_qrels(base / "qrels.trec8.adhoc.gz")
    runs = fasteval.load_runs([base / "runs" / r for r in RUNS])
    # the two queries with the fewest judgments keep the brute force to seconds
    small = qrels.group_by("query_id").len().sort("len").head(2)["query_id"].to_list()
    qrels = qrels.filter(pl.col("query_id").is_in(small))
    runs = runs.filter(pl.col("query_id").is_in(small))
    qd = {q: {} for q in small}
    for q, d, g in qrels.iter_rows():
        qd[q][d] = g
    rd: dict[str, dict[str, dict[str, float]]] = {}
    for r, q, d, s in runs.select("run_id", "query_id", "doc_id", "score").iter_rows():
        rd.setdefault(r, {}).setdefault(q, {})[d] = s
    d = inf.pair_data(qrels, runs)
    names = d.run_names
    assert len(names) == 3
    ric = d.ric_per_run()
    for i, n in enumerate(names):
        want = ref.mean_over_queries(qd, [rd[n]], ref.joint_ric_query)
        assert abs(ric[i] - want) <= 1e-12, n
        assert 0.0 < ric[i] < 1.0
    mean, _ = d.joint_ric([names])
    want = ref.mean_over_queries(qd, [rd[n] for n in names], ref.joint_ric_query)
    assert abs(mean[0] - want) <= 1e-12
    a, b = inf.all_pairs(3)
    ids, _ = d.information_difference(a, b)
    for k in range(3):
        want = ref.mean_over_queries(
            qd,
            [rd[names[a[k]]], rd[names[b[k]]]],
            lambda qr, rr, lv: ref.id_query(qr, rr[0], rr[1], lv),
        )
        assert abs(ids[k] - want) <= 1e-12
