"""ir_measures measure objects, aliases and parameters, as evaluate and compare take them."""

from __future__ import annotations

import math

import polars as pl
import pytest

from fasteval import evaluate, load_qrels, load_runs
from fasteval.errors import MeasureError
from fasteval.measures.ir_measures_names import canonical, normalise_measures, split_judged_only
from tests.conftest import SAMPLE_DATA as DATA

irm = pytest.importorskip("ir_measures")

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("MAP", "AP"),
        ("MRR", "RR"),
        ("NDCG@10", "nDCG@10"),
        ("Recall@100", "R@100"),
        ("Precision@5", "P@5"),
        ("BPref", "Bpref"),
        ("RPrec", "Rprec"),
        ("map", "map"),
        ("P.5,10", "P.5,10"),
        ("nDCG(dcg='log2')@10", "nDCG@10"),
        ("AP(judged_only=False)", "AP"),
        ("P(rel=2)@5", "P(rel=2)@5"),
        ("NumRet(rel=1)", "NumRelRet"),
        ("NumRet(rel=2)", "NumRelRet(rel=2)"),
        ("RBP(p=0.5)", "rbp.p=0.5"),
    ],
)
def test_strings(given: str, want: str) -> None:
    assert canonical(given) == want


def test_objects() -> None:
    assert canonical(irm.MAP) == "AP"
    assert canonical(irm.nDCG @ 10) == "nDCG@10"
    assert canonical(irm.P(rel=2) @ 5) == "P(rel=2)@5"
    assert canonical(irm.RBP) == "rbp.p=0.8"  # ir_measures' default p, not trec_eval's 0.9
    assert canonical(irm.RBP(p=0.95)) == "rbp.p=0.95"
    assert canonical(irm.NumRelRet) == "NumRelRet"


def test_judged_only_applies_to_all_or_none() -> None:
    assert split_judged_only(["AP(judged_only=True)", "P(judged_only=True)@10"]) == (
        ["AP", "P@10"],
        True,
    )
    with pytest.raises(MeasureError, match="not for every measure"):
        normalise_measures([irm.AP(judged_only=True), irm.P @ 10])
    # gdeval's nDCG@k (exponential gains, with a cutoff) is fasteval's ndcg_exp
    assert canonical("nDCG(dcg='exp-log2')@10") == "ndcg_exp.10"
    with pytest.raises(MeasureError, match="exp-log2"):
        canonical("nDCG(dcg='exp-log2', rel=2)@10")


def test_evaluate_takes_objects_and_judged_only() -> None:
    a = evaluate(QRELS, RUNS, [irm.AP(judged_only=True)], per_query=False)
    b = evaluate(QRELS, RUNS, ["map"], judged_only=True, per_query=False)
    assert a["value"].to_list() == b["value"].to_list()
    assert a["measure"].unique().to_list() == ["AP"]
    one = evaluate(QRELS, RUNS, irm.MAP, per_query=False)
    assert (
        one["value"].to_list() == evaluate(QRELS, RUNS, "map", per_query=False)["value"].to_list()
    )


def _exp_ndcg(ranked: list[str], grades: dict[str, int]) -> float:
    """nDCG with gains 2^g - 1 and discount log2(i + 1), ideal over all judged grades."""
    dcg = sum((2 ** grades.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def test_exp_log2_ndcg_equals_the_burges_formula() -> None:
    got = evaluate(QRELS, RUNS, [irm.nDCG(dcg="exp-log2")], compat=10)
    q = load_qrels(QRELS)
    grades: dict[str, dict[str, int]] = {}
    for qid, d, g in q.iter_rows():
        grades.setdefault(qid, {})[d] = g
    assert max(g for gs in grades.values() for g in gs.values()) >= 2  # graded: gains differ
    runs = load_runs(RUNS).filter(pl.col("run_id") == "sample2")
    per = got.filter((pl.col("run_id") == "sample2") & (pl.col("query_id") != "all"))
    for (qid,), part in runs.group_by("query_id"):
        ranked = (
            part.with_columns(pl.col("doc_id").cast(pl.Binary).alias("b"))
            .sort(["score", "b"], descending=True)["doc_id"]
            .to_list()
        )
        want = _exp_ndcg(ranked, grades.get(qid, {}))
        have = per.filter(pl.col("query_id") == qid)["value"]
        if want == 0.0 and have.len() == 0:
            continue
        assert have[0] == pytest.approx(want, rel=1e-12), qid


def test_compare_takes_ir_measures_objects() -> None:
    from fasteval import compare

    cmp = compare(QRELS, RUNS, [irm.MAP, irm.nDCG @ 10], baseline="sample1")
    assert cmp.measures == ["AP", "nDCG@10"]
    plain = compare(QRELS, RUNS, ["map", "ndcg_cut_10"], baseline="sample1")
    a = cmp.table.drop("measure")
    b = plain.table.drop("measure")
    assert a.equals(b)
