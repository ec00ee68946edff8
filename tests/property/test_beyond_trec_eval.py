"""Measures trec_eval does not have: ERR/nERR, NCG, Judged, J-K nDCG.

Checked against the naive references in ``tests/reference/naive.py``, the gdeval
values transcribed in ``peer_tests`` and ir_measures, and the textbook example of
SPEC section 2.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from tests.conftest import shared_path
from tests.reference import naive

S = pl.String


def _evaluate(judg: dict[str, int], ranking: list[str], measures: list[str]) -> dict[str, float]:
    qrels = pl.DataFrame(
        [("q", d, g) for d, g in judg.items()],
        schema={"query_id": S, "doc_id": S, "relevance": pl.Int32},
        orient="row",
    )
    n = len(ranking)
    runs = pl.DataFrame(
        [("r", "q", d, float(n - i)) for i, d in enumerate(ranking)],
        schema={"run_id": S, "query_id": S, "doc_id": S, "score": pl.Float64},
        orient="row",
    )
    df = fasteval.evaluate(qrels, runs, measures, per_query=True)
    return dict(df.filter(pl.col("query_id") == "q").select("measure", "value").iter_rows())


docs = [f"d{i}" for i in range(12)]


@settings(max_examples=150, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(docs), st.integers(-1, 4), min_size=1),
    ranking=st.lists(st.sampled_from(docs), min_size=1, max_size=12, unique=True),
    k=st.integers(1, 15),
)
def test_against_naive_references(judg, ranking, k):
    got = _evaluate(judg, ranking, [f"ERR@{k}", f"nERR@{k}", f"NCG@{k}", f"Judged@{k}"])
    grades = [judg.get(d, 0) for d in ranking]
    judged = list(judg.values())
    assert got[f"ERR@{k}"] == pytest.approx(naive.err_at(grades, k), abs=1e-12)
    assert got[f"nERR@{k}"] == pytest.approx(naive.nerr_at(grades, judged, k), abs=1e-12)
    assert got[f"NCG@{k}"] == pytest.approx(naive.ncg_at(grades, judged, k), abs=1e-12)
    in_qrels = [d in judg for d in ranking]
    assert got[f"Judged@{k}"] == pytest.approx(naive.judged_at(in_qrels, k), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(docs), st.integers(0, 4), min_size=1),
    ranking=st.lists(st.sampled_from(docs), min_size=1, max_size=12, unique=True),
)
def test_jk_ndcg_with_fractional_gains_against_naive(judg, ranking):
    gain = {0: 0.0, 1: 0.2, 2: 0.5, 3: 0.6, 4: 1.0}
    spec = "jk_ndcg.1=0.2,2=0.5,3=0.6,4=1"
    got = _evaluate(judg, ranking, [spec])[f"jk_ndcg_{spec[8:]}"]
    want = naive.jk_ndcg([gain[judg.get(d, 0)] for d in ranking], [gain[g] for g in judg.values()])
    assert got == pytest.approx(want, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(docs), st.integers(-1, 4), min_size=1),
    ranking=st.lists(st.sampled_from(docs), min_size=1, max_size=12, unique=True),
)
def test_dcg_ideal_dcg_and_jk_dcg_against_naive(judg, ranking):
    """No stored trec_eval output has dcg or ideal_dcg (they are not in all_trec)."""
    got = _evaluate(judg, ranking, ["dcg", "ideal_dcg", "jk_dcg", "ndcg"])
    grades = [max(judg.get(d, 0), 0) for d in ranking]
    judged = list(judg.values())
    assert got["dcg"] == pytest.approx(naive.dcg(grades), abs=1e-12)
    assert got["ideal_dcg"] == pytest.approx(naive.ideal_dcg(judged), abs=1e-12)
    assert got["jk_dcg"] == pytest.approx(naive.jk_dcg([float(g) for g in grades]), abs=1e-12)
    if got["ideal_dcg"] > 0:
        assert got["ndcg"] == pytest.approx(got["dcg"] / got["ideal_dcg"], abs=1e-12)


def test_textbook_jk_ndcg_example():
    """SPEC section 2: gains [1.0, 0.6, 0, 0.8, 0, 1.0, 0, 0, 0, 0, 0, 0, 0.2, 0] -> 0.84 at 14."""
    gains = [1.0, 0.6, 0, 0.8, 0, 1.0, 0, 0, 0, 0, 0, 0, 0.2, 0]
    grade_of = {0: 0, 0.2: 1, 0.6: 3, 0.8: 4, 1.0: 5}
    ranking = [f"d{i:02d}" for i in range(len(gains))]
    judg = {d: grade_of[g] for d, g in zip(ranking, gains, strict=True)}
    got = _evaluate(judg, ranking, ["jk_ndcg.1=0.2,3=0.6,4=0.8,5=1"])
    assert round(got["jk_ndcg_1=0.2,3=0.6,4=0.8,5=1"], 2) == 0.84


def _expected_gdeval() -> list[tuple[str, str, float]]:
    path = shared_path("peer_tests", "ir_measures", "expected_values.tsv")
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        f = line.split("\t")
        if f[1] == "gdeval.pl" and f[4].startswith("ERR@"):
            out.append((f[4], f[5], float(f[6])))
    return out


@pytest.mark.realdata
def test_err_matches_gdeval_transcribed_values():
    base = shared_path("peer_tests", "ir_measures")
    expected = _expected_gdeval()
    assert len(expected) == 6
    df = fasteval.evaluate(base / "toy_gdeval.qrels", base / "toy.run", ["ERR@20", "ERR@2"])
    got = {(m, q): v for _, q, m, v in df.iter_rows()}
    for m, q, want in expected:
        # gdeval prints 5 decimals
        assert got[(m, q)] == pytest.approx(want, abs=5e-6), (m, q)


@settings(max_examples=25, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(docs), st.integers(-1, 3), min_size=1),
    ranking=st.lists(st.sampled_from(docs), min_size=1, max_size=12, unique=True),
    k=st.integers(1, 15),
)
def test_judged_matches_ir_measures(judg, ranking, k):
    import ir_measures

    qrels = [ir_measures.Qrel("q", d, g) for d, g in judg.items()]
    run = [ir_measures.ScoredDoc("q", d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(f"Judged@{k}")], qrels, run)
    got = _evaluate(judg, ranking, [f"Judged@{k}"])
    assert got[f"Judged@{k}"] == pytest.approx(next(iter(want.values())), abs=1e-12)
