"""Qrels with judgment groups (-R qrels_jg): reader, *_avgjg measures vs a naive reference.

The trec_eval test-suite case (qrels.123 -> out.test.qrels_jg) is in
``tests/oracle/test_trec_eval_suite.py``.
"""

from __future__ import annotations

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.cli import main
from fasteval.engine.judgment_groups import evaluate_jg
from fasteval.errors import InputFormatError, MeasureError, ParameterError
from fasteval.io.qrels_jg import read_qrels_jg
from tests.reference import naive

S = pl.String
docs = [f"d{i}" for i in range(10)]
CUTS = (1, 3, 5)
MULTS = (0.2, 1.0, 1.6)
MEASURES = ["map_avgjg", "P_avgjg.1,3,5", "Rprec_mult_avgjg.0.2,1.0,1.6"]


def _naive_avgjg(groups: list[dict[str, int]], ranking: list[str]) -> dict[str, float]:
    run = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
    acc: dict[str, float] = {}
    for judg in groups:
        rels = naive.ranking(run, judg, compat=10)
        R = sum(1 for g in judg.values() if g >= 1)
        vals = {"map_avgjg": naive.measures(rels, judg)["map"]}
        for k in CUTS:
            vals[f"P_avgjg_{k}"] = naive.precision_at(rels, k, 1)
        for x in MULTS:
            vals[f"Rprec_mult_avgjg_{x:.2f}"] = naive.rprec_mult(rels, R, x)
        for name, v in vals.items():
            acc[name] = acc.get(name, 0.0) + v / len(groups)
    return acc


@settings(max_examples=120, deadline=None)
@given(
    groups=st.lists(
        st.dictionaries(st.sampled_from(docs), st.integers(-1, 3), min_size=1),
        min_size=1,
        max_size=4,
    ),
    ranking=st.lists(st.sampled_from(docs), min_size=1, max_size=10, unique=True),
)
def test_avgjg_matches_naive(groups, ranking):
    qrels = pl.DataFrame(
        [("q", f"g{j}", d, r) for j, judg in enumerate(groups) for d, r in judg.items()],
        schema={"query_id": S, "judgment_group": S, "doc_id": S, "relevance": pl.Int64},
        orient="row",
    )
    runs = pl.DataFrame(
        [("r", "q", d, float(len(ranking) - i)) for i, d in enumerate(ranking)],
        schema={"run_id": S, "query_id": S, "doc_id": S, "score": pl.Float64},
        orient="row",
    )
    df = fasteval.evaluate(qrels, runs, MEASURES, rel_format="qrels_jg", compat=10)
    got = dict(df.filter(pl.col("query_id") == "q").select("measure", "value").iter_rows())
    want = _naive_avgjg(groups, ranking)
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1e-12), k


def test_plain_qrels_have_one_group(write):
    q = write("q", "a 0 x 1\na 0 y 0\nb 0 z 1\n")
    r = write("r", "a Q0 y 1 2.0 run\na Q0 x 2 1.0 run\nb Q0 z 1 1.0 run\n")
    base = fasteval.evaluate(q, r, ["map", "P.1,2"])
    jg = fasteval.evaluate(q, r, ["map_avgjg", "P_avgjg.1,2"])
    assert jg["value"].to_list() == base["value"].to_list()
    assert jg["measure"].to_list() == [
        m.replace("map", "map_avgjg").replace("P_", "P_avgjg_") for m in base["measure"]
    ]


def test_groups_per_query_and_missing_group(write):
    # query a judged by two groups, b by one: b's value is its only group's
    q = write("q", "a g1 x 1\na g2 x 0\na g2 y 1\nb g1 z 1\n")
    r = write("r", "a Q0 x 1 2.0 run\na Q0 y 2 1.0 run\nb Q0 z 1 1.0 run\n")
    df = evaluate_jg(q, r, ["P_avgjg.1"])
    got = dict(df.select("query_id", "value").iter_rows())
    assert got == {"a": 0.5, "b": 1.0, "all": 0.75}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a g x\n", r"q:1: expected at least 4 columns"),
        ("a g x 1\na g y one\n", r"q:2: relevance is not an integer: 'one'"),
        (
            "a g x 1\n# c\na g x 0\n",
            r"q:3: document 'x' judged twice for query 'a' in judgment group 'g' \(first at",
        ),
        # the tokenizer's message says why no judgment was found (named after the file)
        ("# nothing\n", r"q: no lines found \(the file is empty or all comments\)"),
    ],
)
def test_malformed_qrels_jg(write, text, message):
    q = write("q", text)
    with pytest.raises(InputFormatError, match=message):
        read_qrels_jg(q)
    r = write("r", "a Q0 x 1 1.0 run\n")
    res = CliRunner().invoke(main, ["eval", str(q), str(r), "-R", "qrels_jg"])
    assert res.exit_code == 1 and "Traceback" not in res.output


def test_same_doc_in_two_groups_is_fine(write):
    q = write("q", "a g1 x 1\na g2 x 0\n")
    assert len(read_qrels_jg(q)) == 2


def test_lenient_skips_and_warns(write):
    q = write("q", "a g x 1\nbad line\n")
    with pytest.warns(UserWarning, match="skipped 1"):
        assert len(read_qrels_jg(q, lenient=True)) == 1


def test_only_avgjg_measures(write):
    q = write("q", "a g x 1\n")
    r = write("r", "a Q0 x 1 1.0 run\n")
    with pytest.raises(MeasureError, match="ndcg cannot be computed"):
        fasteval.evaluate(q, r, ["ndcg"], rel_format="qrels_jg")
    with pytest.raises(ParameterError, match="unknown relevance format"):
        fasteval.evaluate(q, r, ["map"], rel_format="nope")


def test_second_group_of_an_unretrieved_query(write):
    q = write("q", "a g1 x 1\nb g1 z 1\nb g2 z 0\n")
    r = write("r", "a Q0 x 1 1.0 run\n")
    df = evaluate_jg(q, r, ["map_avgjg"])
    assert dict(df.select("query_id", "value").iter_rows()) == {"a": 1.0, "all": 1.0}
