"""The C/W/L measures ir_measures takes from cwl_eval: INST, INSQ, BPM, SDCG, NERR8-11, RBP(rel=).

Against the slow reference in ``tests/reference/cwl_naive.py``, the cwl_eval
values ir_measures' test suite publishes (1e-4, as it asserts), and cwl_eval
itself through ir_measures' provider where ``cwl-eval`` is installed.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.measures.parser import parse_measure
from fasteval.measures.registry import FAMILIES
from tests.conftest import shared_path
from tests.reference import cwl_naive

S = pl.String
DOCS = [f"d{i}" for i in range(10)]
judgments = st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1)
rankings = st.lists(st.sampled_from([*DOCS, "x", "y"]), min_size=1, max_size=12, unique=True)

# (ir_measures name, naive name, a, min_rel, max_rel, k)
CASES = [
    ("INST(T=1.0, max_rel=3)", "inst", 1.0, 0, 3, 0),
    ("INST(T=2.0, min_rel=1, max_rel=3)", "inst", 2.0, 1, 3, 0),
    ("INSQ(T=2.0, max_rel=3)", "insq", 2.0, 0, 3, 0),
    ("BPM(T=1.0, max_rel=3)@5", "bpm", 1.0, 0, 3, 5),
    ("SDCG(max_rel=3)@5", "sdcg", 0.0, 0, 3, 5),
    ("NERR8(max_rel=3)@6", "nerr8", 0.0, 0, 3, 6),
    ("NERR9(max_rel=2)@6", "nerr9", 0.0, 0, 2, 6),
    ("NERR10(p=0.8, max_rel=3)", "nerr10", 0.8, 0, 3, 0),
    ("NERR11(T=2.0, max_rel=3)", "nerr11", 2.0, 0, 3, 0),
    ("RBP(p=0.9, rel=2)", "rbp_bin", 0.9, 2, 2, 0),
]


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


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(judg=judgments, ranking=rankings)
def test_against_naive_reference(judg, ranking):
    got = _values(judg, ranking, [c[0] for c in CASES])
    grades = [judg.get(d) for d in ranking]
    for name, kind, a, lo, hi, k in CASES:
        assert got[name] == pytest.approx(
            cwl_naive.measure(kind, grades, a, lo, hi, k), abs=1e-12
        ), name


@pytest.mark.realdata
def test_matches_the_published_cwl_eval_values():
    base = shared_path("peer_tests", "ir_measures")
    rows = [
        ln.split("\t")
        for ln in (base / "expected_values.tsv").read_text().splitlines()
        if ln.startswith("tests/test_cwl_eval.py")
        and not ln.split("\t")[4].startswith(("AP", "P@", "RR"))
    ]
    assert len(rows) == 36
    names = sorted({r[4] for r in rows})
    df = fasteval.evaluate(base / "cwl.qrels", base / "cwl.run", names, compat=10)
    got = {(m, q): v for _, q, m, v in df.iter_rows()}
    for r in rows:
        assert got[(r[4], r[5])] == pytest.approx(float(r[6]), abs=1e-4), r[4:6]


@settings(max_examples=25, deadline=None)
@given(judg=judgments, ranking=rankings)
def test_matches_cwl_eval(judg, ranking):
    irm = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    names = [c[0] for c in CASES]
    measures = [irm.parse_measure(n) for n in names]
    qrels = [irm.Qrel("1", d, g) for d, g in judg.items()]
    run = [irm.ScoredDoc("1", d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
    want = {str(m.measure): m.value for m in irm.cwl_eval.iter_calc(measures, qrels, run)}
    got = _values(judg, ranking, names)
    for n, m in zip(names, measures, strict=True):
        assert got[n] == pytest.approx(want[str(m)], abs=1e-9), n


# the C/W/L families whose first parameter has a name (T or p) and a default
NAMED_FIRST = sorted((f.name, f.defaults[0]) for f in FAMILIES.values() if f.cwl)


@pytest.mark.parametrize(("family", "default"), NAMED_FIRST)
def test_a_trec_style_name_takes_ir_measures_defaults(family: str, default: float) -> None:
    """``nerr10`` alone means NERR10 with ir_measures' first parameter (p = 0.9, not 1,
    which would make it NERR8 without a cutoff); so for every C/W/L family with one."""
    (trec,) = parse_measure(family)
    assert trec.params[0] == default, (family, trec.params)
