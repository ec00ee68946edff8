"""ir_measures' Compat, Accuracy, SetAP, SetRelP, SetP(relative=True), SetF(beta=...).

Against the slow references in ``tests/reference/ir_measures_naive.py``, the
Compat values ir_measures' test suite publishes (from Clarke's own code), and
ir_measures' providers themselves (compat, accuracy, pytrec_eval).
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fasteval
from tests.conftest import shared_path
from tests.reference import ir_measures_naive as naive

S = pl.String
DOCS = [f"d{i}" for i in range(10)]

judgments = st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1)
rankings = st.lists(st.sampled_from([*DOCS, "x", "y"]), min_size=1, max_size=12, unique=True)


def _values(judg: dict[str, int], ranking: list[str], names: list[str]) -> dict[str, float]:
    qrels = pl.DataFrame(
        [("1", d, g) for d, g in judg.items()],
        schema={"query_id": S, "doc_id": S, "relevance": pl.Int32},
        orient="row",
    )
    runs = pl.DataFrame(
        [("r", "1", d, float(len(ranking) - i)) for i, d in enumerate(ranking)],
        schema={"run_id": S, "query_id": S, "doc_id": S, "score": pl.Float64},
        orient="row",
    )
    df = fasteval.evaluate(qrels, runs, names, per_query=True, compat=10)
    return dict(df.filter(pl.col("query_id") == "1").select("measure", "value").iter_rows())


@settings(max_examples=200, deadline=None)
@given(judg=judgments, ranking=rankings, p=st.sampled_from([0.5, 0.8, 0.95]), k=st.integers(1, 13))
def test_against_naive_references(judg, ranking, p, k):
    names = [f"Compat(p={p})", f"Compat(p={p},normalize=False)", "Accuracy", f"Accuracy@{k}"]
    names.append("Accuracy(rel=2)")
    got = _values(judg, ranking, names)
    assert got[names[0]] == pytest.approx(naive.compat(ranking, judg, p), abs=1e-12)
    assert got[names[1]] == pytest.approx(naive.compat(ranking, judg, p, False), abs=1e-12)
    # undefined (no relevant document in the top k): no row, as ir_measures reports none
    for name, want in (
        ("Accuracy", naive.accuracy(ranking, judg)),
        (f"Accuracy@{k}", naive.accuracy(ranking, judg, k=k)),
        ("Accuracy(rel=2)", naive.accuracy(ranking, judg, 2)),
    ):
        if math.isnan(want):
            assert name not in got
        else:
            assert got[name] == pytest.approx(want, abs=1e-12)


@pytest.mark.realdata
def test_compat_matches_the_published_values():
    base = shared_path("peer_tests", "ir_measures")
    rows = [
        ln.split("\t")
        for ln in (base / "expected_values.tsv").read_text().splitlines()
        if not ln.startswith("#") and ln.split("\t")[4].startswith("Compat")
    ]
    assert len(rows) == 7
    names = sorted({r[4] for r in rows})
    df = fasteval.evaluate(base / "compat.qrels", base / "compat.run", names, compat=10)
    got = {(m, q): v for _, q, m, v in df.iter_rows()}
    for r in rows:
        assert got[(r[4], r[5])] == pytest.approx(float(r[6]), abs=1e-9), r[4:6]


@settings(max_examples=60, deadline=None)
@given(judg=judgments, ranking=rankings, k=st.integers(1, 13))
def test_against_ir_measures_providers(judg, ranking, k):
    irm = pytest.importorskip("ir_measures")
    qrels = [irm.Qrel("1", d, g) for d, g in judg.items()]
    run = [irm.ScoredDoc("1", d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
    cases = {
        irm.compat: ["Compat", "Compat(p=0.8)", "Compat(p=0.9,normalize=False)"],
        irm.pytrec_eval: ["SetAP", "SetRelP", "SetP(relative=True)", "SetF(beta=0.5)", "SetF"],
    }
    top = ranking[:k]
    rels = [judg.get(d, 0) >= 1 for d in top]
    if not all(rels):  # ir_measures fails when every document in the top k is relevant
        cases[irm.accuracy] = [f"Accuracy@{k}"]
    for provider, names in cases.items():
        measures = [irm.parse_measure(n) for n in names]
        want = {
            (str(m.measure), m.query_id): m.value for m in provider.iter_calc(measures, qrels, run)
        }
        got = _values(judg, ranking, names)
        for n, m in zip(names, measures, strict=True):
            assume(("1" in {q for _, q in want}) or provider is not irm.pytrec_eval)
            if provider is irm.accuracy and not any(rels):  # undefined: no row on either side
                assert (str(m), "1") not in want and n not in got, n
                continue
            assert got[n] == pytest.approx(want[(str(m), "1")], abs=1e-9), n
