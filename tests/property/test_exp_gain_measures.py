"""gdeval's nDCG@k (exponential gains), ranx's dcg_burges@k / hits@k / f1@k, NumRelRet@k.

Against the slow references in ``tests/reference/gain_naive.py`` (property
tests), the gdeval values transcribed from ir_measures' test suite, gdeval.pl
itself through ir_measures' provider (where perl is installed), and ranx (every
family whose row in ``tests/comparisons.py`` names it).
"""

from __future__ import annotations

import re
import shutil

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fasteval
from tests.comparisons import BY_FAMILY, families
from tests.conftest import shared_path
from tests.reference import gain_naive

S = pl.String
DOCS = [f"d{i}" for i in range(12)]


def _frames(judg: dict[str, int], ranking: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
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
    return qrels, runs


def _values(judg: dict[str, int], ranking: list[str], names: list[str]) -> dict[str, float]:
    qrels, runs = _frames(judg, ranking)
    df = fasteval.evaluate(qrels, runs, names, per_query=True)
    return dict(df.filter(pl.col("query_id") == "q").select("measure", "value").iter_rows())


@settings(max_examples=200, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 4), min_size=1),
    ranking=st.lists(st.sampled_from([*DOCS, "x"]), min_size=1, max_size=13, unique=True),
    k=st.integers(1, 15),
)
def test_against_naive_references(judg, ranking, k):
    names = [f"nDCG(dcg='exp-log2')@{k}", f"ndcg_exp.{k}", f"dcg_exp.{k}", f"hits@{k}"]
    got = _values(judg, ranking, [*names, f"NumRelRet@{k}"])
    grades = [max(judg.get(d, 0), 0) for d in ranking]
    judged = [g for g in judg.values() if g > 0]
    want_ndcg = gain_naive.exp_ndcg_at(grades, judged, k)
    assert got[names[0]] == pytest.approx(want_ndcg, abs=1e-12)
    assert got[f"ndcg_exp_{k}"] == got[names[0]]
    assert got[f"dcg_exp_{k}"] == pytest.approx(gain_naive.exp_dcg_at(grades, k), abs=1e-12)
    assert got[f"hits@{k}"] == gain_naive.hits_at(grades, k) == got[f"NumRelRet@{k}"]


def test_aggregates_hits_is_a_mean_numrelret_a_sum():
    qrels = pl.DataFrame(
        {"query_id": ["1", "2"], "doc_id": ["a", "b"], "relevance": [1, 1]},
        schema={"query_id": S, "doc_id": S, "relevance": pl.Int32},
    )
    runs = pl.DataFrame(
        {"run_id": ["r"] * 2, "query_id": ["1", "2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]}
    )
    df = fasteval.evaluate(qrels, runs, ["hits@5", "NumRelRet@5"], per_query=False)
    assert dict(df.select("measure", "value").iter_rows()) == {"hits@5": 1.0, "NumRelRet@5": 2.0}


def _gdeval_expected() -> list[tuple[str, str, float]]:
    path = shared_path("peer_tests", "ir_measures", "expected_values.tsv")
    out = []
    for line in path.read_text().splitlines():
        f = line.split("\t")
        if not line.startswith("#") and f[1] == "gdeval.pl" and f[4].startswith("nDCG@"):
            out.append((f[4].replace("nDCG", "nDCG(dcg='exp-log2')"), f[5], float(f[6])))
    return out


@pytest.mark.realdata
def test_matches_gdeval_transcribed_values():
    base = shared_path("peer_tests", "ir_measures")
    expected = _gdeval_expected()
    assert len(expected) == 6
    names = sorted({m for m, _, _ in expected})
    df = fasteval.evaluate(base / "toy_gdeval.qrels", base / "toy.run", names)
    got = {(m, q): v for _, q, m, v in df.iter_rows()}
    for m, q, want in expected:  # gdeval prints 5 decimals
        assert got[(m, q)] == pytest.approx(want, abs=5e-6), (m, q)


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
@settings(max_examples=20, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(DOCS), st.integers(0, 4), min_size=1),
    ranking=st.lists(st.sampled_from([*DOCS, "x"]), min_size=1, max_size=13, unique=True),
    k=st.integers(1, 15),
)
def test_matches_gdeval_itself(judg, ranking, k):
    irm = pytest.importorskip("ir_measures")
    assume(any(g > 0 for g in judg.values()))
    measure = irm.parse_measure(f"nDCG(dcg='exp-log2')@{k}")
    qrels = [irm.Qrel("7", d, g) for d, g in judg.items()]
    run = [irm.ScoredDoc("7", d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
    want = {m.query_id: m.value for m in irm.gdeval.iter_calc([measure], qrels, run)}
    got = _values(judg, ranking, [str(measure)])
    assert got[str(measure)] == pytest.approx(want["7"], abs=5e-6)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(DOCS), st.integers(0, 4), min_size=1),
    ranking=st.lists(st.sampled_from([*DOCS, "x"]), min_size=1, max_size=13, unique=True),
    k=st.integers(1, 15),
)
def test_matches_ranx(judg, ranking, k):
    """Each family whose row in tests/comparisons.py names ranx as oracle, in ranx's spelling."""
    ranx = pytest.importorskip("ranx")
    assume(any(g > 0 for g in judg.values()))
    qrels = ranx.Qrels({"q": {d: g for d, g in judg.items()}})
    run = ranx.Run({"q": {d: float(len(ranking) - i) for i, d in enumerate(ranking)}})
    names = [re.sub(r"@\d+$", f"@{k}", BY_FAMILY[f].tools["ranx"]) for f in families("ranx")]
    want = ranx.evaluate(qrels, run, names, make_comparable=True)
    got = _values(judg, ranking, names)
    for n in names:
        assert got[n] == pytest.approx(float(want[n]), abs=1e-9), n
