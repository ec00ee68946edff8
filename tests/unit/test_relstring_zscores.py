"""relstring (string-valued measure) and -Z z-scores, against naive references.

The trec_eval test suite cases (out.test.aq/aql/aqZ) are in
``tests/oracle/test_trec_eval_suite.py``; these tests cover the API shape, the
-M/-J interplay, the z-score rules and the error messages.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.cli import main
from fasteval.errors import InputFormatError, MeasureError
from fasteval.io.zscores import read_zscores
from tests.reference import naive

S = pl.String
docs = [f"d{i}" for i in range(14)]


def _frames(judg: dict[str, int], ranking: list[str], qid: str = "q"):
    qrels = pl.DataFrame(
        [(qid, d, g) for d, g in judg.items()] or [(qid, "zz", 0)],
        schema={"query_id": S, "doc_id": S, "relevance": pl.Int32},
        orient="row",
    )
    n = len(ranking)
    runs = pl.DataFrame(
        [("r", qid, d, float(n - i)) for i, d in enumerate(ranking)],
        schema={"run_id": S, "query_id": S, "doc_id": S, "score": pl.Float64},
        orient="row",
    )
    return qrels, runs


@settings(max_examples=150, deadline=None)
@given(
    judg=st.dictionaries(st.sampled_from(docs), st.integers(-3, 12), min_size=1),
    ranking=st.lists(st.sampled_from(docs), min_size=1, max_size=14, unique=True),
    n=st.integers(0, 16),
    depth=st.one_of(st.none(), st.integers(1, 15)),
    judged_only=st.booleans(),
)
def test_relstring_matches_naive(judg, ranking, n, depth, judged_only):
    qrels, runs = _frames(judg, ranking)
    df = fasteval.evaluate(
        qrels, runs, [f"relstring.{n}"], max_depth=depth, judged_only=judged_only, compat=10
    )
    run = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
    rels = naive.ranking(run, judg, compat=10, max_depth=depth, judged_only=judged_only)
    assert df["text"].to_list() == [naive.relstring(rels, n)]
    assert df["value"].to_list() == [None]
    assert df["measure"].to_list() == [f"relstring_{n}"]


def test_relstring_table_shape():
    qrels, runs = _frames({"d1": 1, "d2": 0, "d3": 12, "d4": -1}, ["d3", "d9", "d4", "d2", "d1"])
    df = fasteval.evaluate(qrels, runs, ["map", "relstring", "P_5"])
    assert df.columns == ["run_id", "query_id", "measure", "value", "text"]
    # the order asked (issue 47; trec_eval's text puts relstring after P); no 'all' row for it
    assert df["measure"].to_list() == ["map", "relstring", "P_5", "map", "P_5"]
    row = df.filter(pl.col("measure") == "relstring").row(0, named=True)
    assert row["text"] == ">-.01" and row["value"] is None and row["query_id"] == "q"
    assert df.filter(pl.col("measure") != "relstring")["text"].null_count() == 4
    # without relstring, no text column; with per_query=False, no relstring rows
    assert "text" not in fasteval.evaluate(qrels, runs, ["map"]).columns
    summary = fasteval.evaluate(qrels, runs, ["map", "relstring"], per_query=False)
    assert summary["measure"].to_list() == ["map"]


def test_relstring_trec_format_quotes():
    qrels, runs = _frames({"d1": 2}, ["d1", "d2"])
    from fasteval.io.writers import format_trec
    from fasteval.measures.parser import parse_measures

    ms = parse_measures(["runid", "relstring.3", "num_ret"])
    text = format_trec(fasteval.evaluate(qrels, runs, ["runid", "relstring.3", "num_ret"]), ms)
    assert text.splitlines() == [
        "num_ret               \tq\t2",
        "relstring_3           \tq\t'2-'",
        "runid                 \tall\tr",
        "num_ret               \tall\t2",
    ]


@pytest.mark.parametrize("bad", ["relstring.x", "relstring.1,2", "relstring.-3"])
def test_relstring_bad_parameter(bad):
    with pytest.raises(MeasureError, match="relstring"):
        fasteval.parse_measures([bad])


def test_explicit_parameters_replace_nickname_defaults():
    names = [m.name for m in fasteval.parse_measures(["all_trec", "relstring.20", "P.5"])]
    assert "relstring_20" in names and "relstring" not in names
    assert [n for n in names if n.startswith("P_")] == ["P_5"]
    # but an explicitly named default is kept
    names = [m.name for m in fasteval.parse_measures(["all_trec", "P.7", "P_10"])]
    assert sorted(n for n in names if n.startswith("P_")) == ["P_10", "P_7"]


# ---- z-scores ---------------------------------------------------------------------


def _two_queries():
    qrels = pl.DataFrame(
        {
            "query_id": ["a", "a", "b", "b"],
            "doc_id": ["x", "y", "x", "z"],
            "relevance": [1, 0, 1, 1],
        },
        schema={"query_id": S, "doc_id": S, "relevance": pl.Int32},
    )
    runs = pl.DataFrame(
        {
            "run_id": ["r"] * 4,
            "query_id": ["a", "a", "b", "b"],
            "doc_id": ["y", "x", "x", "w"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    return qrels, runs


@settings(max_examples=60, deadline=None)
@given(
    means=st.lists(st.floats(-2, 2), min_size=4, max_size=4),
    stds=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5]), min_size=4, max_size=4),
    present=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_zscores_match_naive(means, stds, present):
    qrels, runs = _two_queries()
    measures = ["map", "num_ret"]
    raw = fasteval.evaluate(qrels, runs, measures)
    keys = [(q, m) for q in ("a", "b") for m in measures]
    ref = pl.DataFrame(
        [(q, m, mu, sd) for (q, m), mu, sd, p in zip(keys, means, stds, present, strict=True) if p],
        schema={"query_id": S, "measure": S, "mean": pl.Float64, "stddev": pl.Float64},
        orient="row",
    )
    z = fasteval.evaluate(qrels, runs, measures, zscores=ref)
    rows = zip(keys, means, stds, present, strict=True)
    table = {(q, m): (mu, sd) for (q, m), mu, sd, p in rows if p}
    raw_v = {(q, m): v for q, m, v in raw.select("query_id", "measure", "value").iter_rows()}
    got = {(q, m): v for q, m, v in z.select("query_id", "measure", "value").iter_rows()}
    expect = {}
    for q, m in keys:
        mu, sd = table.get((q, m), (None, None))
        expect[(q, m)] = naive.zscore(raw_v[(q, m)], mu, sd)
        assert got[(q, m)] == pytest.approx(expect[(q, m)], abs=1e-12)
    # aggregates from the z-scores: map averages, num_ret sums
    assert got[("all", "map")] == pytest.approx((expect[("a", "map")] + expect[("b", "map")]) / 2)
    assert got[("all", "num_ret")] == pytest.approx(
        expect[("a", "num_ret")] + expect[("b", "num_ret")]
    )


def test_zscore_cli_prints_z_names_with_decimals(write):
    q = write("q", "a 0 x 1\na 0 y 0\n")
    r = write("r", "a Q0 y 1 2.0 run\na Q0 x 2 1.0 run\n")
    z = write("z", "# reference\na map 0.25 0.25\n\na num_ret 3 2\n")
    res = CliRunner().invoke(
        main,
        ["eval", str(q), str(r), "-q", "-m", "map", "-m", "num_ret", "-m", "num_q", "-Z", str(z)],
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        "Znum_ret               \ta\t-0.5000",
        "Zmap                   \ta\t1.0000",
        "Znum_q                 \tall\t1.0000",
        "Znum_ret               \tall\t-0.5000",
        "Zmap                   \tall\t1.0000",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a map 0.1\n", r"z:1: expected 4 fields .* found 3"),
        ("a map 0.1 0.2 extra\n", r"z:1: expected 4 fields"),
        ("a map 0.1 0.2\na P_5 abc 1\n", r"z:2: mean 'abc' is not a number"),
        ("a map 0.1 x\n", r"z:1: stddev 'x' is not a number"),
        ("a map 0.1 -1\n", r"z:1: stddev '-1' is negative"),
        (
            "a map 0.1 1\n\na map 0.2 1\n",
            r"z:3: query 'a' measure 'map' repeated \(first on line 1\)",
        ),
        ("# only a comment\n", r"no z-score lines"),
    ],
)
def test_malformed_zscore_file(write, text, message):
    z = write("z", text)
    with pytest.raises(InputFormatError, match=message):
        read_zscores(z)
    q = write("q", "a 0 x 1\n")
    r = write("r", "a Q0 x 1 1.0 run\n")
    res = CliRunner().invoke(main, ["eval", str(q), str(r), "-Z", str(z)])
    assert res.exit_code == 1
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1


def test_zscore_nan_entries_give_nan(write):
    # trec_eval 9.0.8's own zscores_file has 'nan' entries
    z = read_zscores(write("z", "a map nan nan\n"))
    assert math.isnan(z.table[("a", "map")][0])
    q = write("q", "a 0 x 1\n")
    r = write("r", "a Q0 x 1 1.0 run\n")
    df = fasteval.evaluate(q, r, ["map"], zscores=z)
    assert all(math.isnan(v) for v in df["value"])


def test_missing_zscore_file(tmp_path):
    with pytest.raises(InputFormatError, match="no such file"):
        read_zscores(tmp_path / "nope")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("a", "map", 0.1, -1.0)], r"<table>, row 1: stddev -1.0 is negative"),
        (
            [("a", "map", 0.1, 1.0), ("a", "map", 0.2, 1.0)],
            r"row 2: .* repeated \(first at row 1\)",
        ),
        ([("a", "map", "x", 1.0)], r"row 1: mean 'x' is not a number"),
    ],
)
def test_malformed_zscore_frame(rows, message):
    import polars as pl

    from fasteval.io.zscores import zscores_from_frame

    df = pl.DataFrame(rows, schema=["query_id", "measure", "mean", "stddev"], orient="row")
    with pytest.raises(InputFormatError, match=message):
        zscores_from_frame(df)
    good = zscores_from_frame(df.head(0))
    assert len(good) == 0
