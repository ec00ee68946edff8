"""ir_measures' parameters and spellings on the diversity measures: rel=, alpha=, beta=, α_.

Against ir_measures' pyndeval provider (ndeval in C) on generated diversity
qrels and runs, and against the same measures with the call's own
relevance_level / alpha / beta (several passes merged into one table).
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.engine.diversity import diversity_evaluate
from fasteval.errors import MeasureError

S = pl.String
DOCS = [f"d{i}" for i in range(8)]

NAMES = [
    "alpha_nDCG(rel=2)@5",
    "α_nDCG@10",
    "α_DCG(alpha=0.7)@5",
    "ERR_IA(rel=2)@10",
    "nERR_IA@10",
    "NRBP(alpha=0.3, beta=0.8)",
    "nNRBP(rel=2)",
    "AP_IA(rel=2)",
    "P_IA(rel=2)@5",
    "StRecall(rel=2)@5",
]


@st.composite
def diversity_data(draw: st.DrawFn) -> tuple[list[tuple[str, str, str, int]], list[str]]:
    qrels = [
        (q, f"s{s}", d, draw(st.integers(0, 3)))
        for q in ("1", "2")
        for s in range(draw(st.integers(2, 3)))
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
    ]
    ranking = draw(st.lists(st.sampled_from([*DOCS, "x"]), min_size=1, max_size=9, unique=True))
    return qrels, ranking


def _frames(qrels, ranking):
    q = pl.DataFrame(
        qrels,
        schema={"query_id": S, "subtopic": S, "doc_id": S, "relevance": pl.Int32},
        orient="row",
    )
    r = pl.DataFrame(
        [
            ("r", qid, d, i + 1, float(len(ranking) - i))
            for qid in ("1", "2")
            for i, d in enumerate(ranking)
        ],
        schema={"run_id": S, "query_id": S, "doc_id": S, "rank": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    return q, r


@settings(max_examples=30, deadline=None)
@given(data=diversity_data())
def test_matches_ir_measures_pyndeval(data):
    irm = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    qrels, ranking = data
    assume(any(g >= 2 for *_, g in qrels))
    measures = [irm.parse_measure(n) for n in NAMES]
    iq = [irm.Qrel(q, d, g, s) for q, s, d, g in qrels]
    run = [
        irm.ScoredDoc(q, d, float(len(ranking) - i))
        for q in ("1", "2")
        for i, d in enumerate(ranking)
    ]
    # one measure per call: pyndeval keeps state between evaluators, so ir_measures' several
    # invocations (one per rel=/alpha=/beta=) in one call give zeros after the first
    want = {
        (str(m.measure), m.query_id): m.value
        for one in measures
        for m in irm.pyndeval.iter_calc([one], iq, run)
    }
    df = fasteval.evaluate(*_frames(qrels, ranking), NAMES)
    got = {(m, q): v for _, q, m, v in df.filter(pl.col("query_id") != "all").iter_rows()}
    for name, m in zip(NAMES, measures, strict=True):
        for q in ("1", "2"):
            if (str(m), q) in want:
                assert got[(name, q)] == pytest.approx(want[(str(m), q)], abs=1e-9, nan_ok=True), (
                    name,
                    q,
                )


@settings(max_examples=30, deadline=None)
@given(data=diversity_data(), level=st.integers(1, 3), alpha=st.sampled_from([0.2, 0.5, 0.9]))
def test_a_parameter_is_the_calls_option_for_that_measure(data, level, alpha):
    q, r = _frames(*data)
    mixed = diversity_evaluate(
        q, r, [f"alpha_nDCG(rel={level},alpha={alpha})@5", "ERR_IA@5", f"strec(rel={level})@5"]
    )
    alone = diversity_evaluate(
        q, r, ["alpha_nDCG@5", "strec@5"], relevance_level=level, alpha=alpha
    )
    plain = diversity_evaluate(q, r, ["ERR_IA@5"])
    rows = mixed.filter(pl.col("measure").str.starts_with("alpha"))
    assert (
        rows["value"].to_list()
        == alone.filter(pl.col("measure") == "alpha_nDCG@5")["value"].to_list()
    )
    assert (
        mixed.filter(pl.col("measure") == "ERR_IA@5")["value"].to_list() == plain["value"].to_list()
    )
    # one table: per query the three measures in the order asked, then the 'all' rows
    assert mixed["measure"].to_list()[:3] == [
        f"alpha_nDCG(rel={level},alpha={alpha})@5",
        "ERR_IA@5",
        f"strec(rel={level})@5",
    ]
    assert mixed["query_id"].to_list()[-3:] == ["all"] * 3


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ("ERR_IA(alpha=0.5)@5", "parameter 'alpha=0.5' is not supported"),
        ("alpha_nDCG(rel=x)@5", "rel must be an integer, got 'x'"),
        ("NRBP(beta=2)", "beta must be in [0, 1]"),
    ],
)
def test_bad_parameters(bad, needle):
    from fasteval.measures.diversity import parse_diversity_measures

    with pytest.raises(MeasureError, match=needle.replace("[", r"\[").replace("(", r"\(")):
        parse_diversity_measures([bad])


def test_studies_refuse_per_measure_parameters():
    from fasteval.analysis.study_scorers import DiversityScorer

    q, r = _frames([("1", "s0", "d0", 1), ("1", "s1", "d1", 2)], ["d0", "d1"])
    with pytest.raises(MeasureError, match="not supported in studies"):
        DiversityScorer.from_inputs(q, r, ["alpha_nDCG(rel=2)@5"])
    assert DiversityScorer.from_inputs(q, r, ["α_nDCG@5"]).names == ["α_nDCG@5"]


def test_ndeval_columns_keep_the_parameters():
    from fasteval.io.writers import format_ndeval

    q, r = _frames([("1", "s0", "d0", 1), ("1", "s1", "d1", 2)], ["d0", "d1"])
    df = diversity_evaluate(q, r, ["alpha_nDCG@5", "alpha_nDCG(rel=2)@5"])
    assert format_ndeval(df).splitlines()[0] == "runid,topic,alpha-nDCG@5,alpha_nDCG(rel=2)@5"
