"""Inputs from where users hold them: pandas, dict-of-dicts, named-tuple records, column names."""

from __future__ import annotations

from collections import namedtuple

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from fasteval import evaluate, load_qrels, load_runs
from fasteval.errors import InputFormatError, SchemaError
from fasteval.io.tables import as_qrels, as_run
from tests.conftest import SAMPLE_DATA as DATA

pd = pytest.importorskip("pandas")

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"
MEASURES = ["map", "P_10", "ndcg_cut_10", "recip_rank"]


@pytest.fixture(scope="module")
def frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    q = load_qrels(QRELS)
    r = load_runs(RUNS).filter(pl.col("run_id").is_in(["sample1", "sample2"]))
    return q, r


@pytest.fixture(scope="module")
def want(frames) -> pl.DataFrame:
    q, r = frames
    return evaluate(q, r, MEASURES).sort("run_id", "query_id", "measure")


def _same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    assert_frame_equal(got.sort("run_id", "query_id", "measure"), want)


def test_pandas_with_pyterrier_column_names(frames, want) -> None:
    q, r = frames
    pq = q.rename({"query_id": "qid", "doc_id": "docno", "relevance": "label"}).to_pandas()
    pr = r.rename({"query_id": "qid", "doc_id": "docno", "run_id": "name"}).to_pandas()
    pr["docid"] = range(len(pr))  # PyTerrier's internal number: must not be taken as the id
    pr["query"] = "some text"
    _same(evaluate(pq, pr, MEASURES), want)


def test_pandas_one_run_without_run_id_gets_a_default_name(frames) -> None:
    q, r = frames
    one = r.filter(pl.col("run_id") == "sample1").drop("run_id", "rank").to_pandas()
    got = evaluate(q.to_pandas(), one, ["map"], per_query=False)
    assert got["run_id"].to_list() == ["run"]
    two = r.filter(pl.col("run_id") == "sample2").drop("run_id").to_pandas()
    got = evaluate(q, [one, two], ["map"], per_query=False)
    assert got["run_id"].to_list() == ["run1", "run2"]  # two unnamed runs are never merged


def test_dict_of_dicts_as_pytrec_eval_and_ranx_take_them(frames, want) -> None:
    q, r = frames
    qd: dict[str, dict[str, int]] = {}
    for qid, doc, rel in q.iter_rows():
        qd.setdefault(qid, {})[doc] = rel
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for run, qid, doc, _, score in r.iter_rows():
        runs.setdefault(run, {}).setdefault(qid, {})[doc] = score
    _same(evaluate(qd, runs, MEASURES), want)
    one = evaluate(qd, runs["sample1"], MEASURES)
    assert one["run_id"].unique().to_list() == ["run"]
    assert_frame_equal(
        one.drop("run_id").sort("query_id", "measure"),
        want.filter(pl.col("run_id") == "sample1").drop("run_id").sort("query_id", "measure"),
    )


def test_ir_measures_and_ir_datasets_records(frames, want) -> None:
    irm = pytest.importorskip("ir_measures")
    q, r = frames
    qrels = [irm.Qrel(a, b, c) for a, b, c in q.iter_rows()]
    TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])
    gen = (TrecQrel(a, b, c, "0") for a, b, c in q.iter_rows())  # ir_datasets qrels_iter()
    for name in ("sample1", "sample2"):
        sub = r.filter(pl.col("run_id") == name)
        run = [irm.ScoredDoc(a, b, s) for _, a, b, _, s in sub.iter_rows()]
        w = want.filter(pl.col("run_id") == name).drop("run_id")
        for qr in (qrels, gen if name == "sample1" else qrels):
            got = evaluate(qr, run, MEASURES)
            assert_frame_equal(got.drop("run_id").sort("query_id", "measure"), w)


def test_explicit_columns_mapping(frames) -> None:
    q, r = frames
    odd = q.rename({"query_id": "topic_no", "doc_id": "document", "relevance": "j"})
    got = as_qrels(odd, columns={"topic_no": "query_id", "document": "doc_id", "j": "relevance"})
    assert_frame_equal(got, q)
    run = as_run(r.drop("run_id").rename({"score": "sim"}), columns={"sim": "score"}, name="x")
    assert run["run_id"].unique().to_list() == ["x"]


def test_bad_foreign_inputs_give_one_line_errors(frames) -> None:
    q, _ = frames
    with pytest.raises(SchemaError, match=r"(?s)missing column\(s\) relevance.*hint: map them"):
        evaluate(q.drop("relevance").to_pandas(), RUNS, ["map"])
    with pytest.raises(SchemaError, match="columns= names"):
        as_qrels(q, columns={"nope": "query_id"})
    with pytest.raises(
        InputFormatError,
        match=r"query '1', document 'b': relevance must be an integer grade, got 0\.5",
    ):
        evaluate({"1": {"a": 1, "b": 0.5}}, RUNS, ["map"])
    with pytest.raises(InputFormatError, match="document 'b': score is not a number: 'high'"):
        evaluate(q, {"1": {"a": 1.0, "b": "high"}}, ["map"])


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ({"1": {"a": 1.0, "b": "x"}}, r"^run dict, query '1', document 'b': score is not a number"),
        ({"1": {"a": 1.0, "b": None}}, r"^run dict, query '1', document 'b': score is not a num"),
        ({"1": {"a": 1.0, None: 2.0}}, r"^run dict, query '1': the document id is None"),
        ({"1": {"a": 1.0}, "2": {"c": float("nan")}}, r"query '2', document 'c': score is not a f"),
        ({"r": {"1": {"a": float("inf")}}}, r"^run dict, run 'r', query '1', document 'a': score"),
    ],
)
def test_bad_dict_values_name_the_query_and_document(frames, run, message) -> None:
    q, _ = frames
    with pytest.raises(InputFormatError, match=message) as e:
        evaluate(q, run, ["map"])
    assert "\n" not in str(e.value)  # one line
    with pytest.raises(InputFormatError, match="empty"):
        evaluate({}, RUNS, ["map"])
    with pytest.raises(SchemaError, match="cannot read run from a int"):
        evaluate(q, iter([1, 2]), ["map"])
    with pytest.raises(SchemaError, match="iterable of int"):
        evaluate(iter([1, 2]), RUNS, ["map"])


def test_jsonl_and_wide_table(frames, tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from fasteval.cli import main
    from fasteval.engine.table import wide_table
    from fasteval.io.writers import format_jsonl

    q, r = frames
    df = evaluate(q, r, ["map", "P_10"])
    recs = [json.loads(line) for line in format_jsonl(df).splitlines()]
    assert len(recs) == df.height
    assert list(recs[0]) == ["query_id", "measure", "value", "run_id"]
    assert [(x["run_id"], x["query_id"], x["measure"], x["value"]) for x in recs] == df.rows()
    wide = wide_table(df)
    assert wide.columns == ["name", "map", "P_10"]
    agg = df.filter(pl.col("query_id") == "all")
    for name, m, v in zip(wide["name"], wide["map"], wide["P_10"], strict=True):
        sel = agg.filter(pl.col("run_id") == name)
        assert (m, v) == tuple(sel.sort("measure")["value"].to_list()[::-1])
    qp, rp = tmp_path / "q.parquet", tmp_path / "r.parquet"
    q.write_parquet(qp)
    r.write_parquet(rp)
    res = CliRunner().invoke(main, ["eval", str(qp), str(rp), "-m", "map", "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.output.splitlines()]
    assert {x["run_id"] for x in lines} == {"sample1", "sample2"}
    assert all(x["query_id"] == "all" and x["measure"] == "map" for x in lines)


def test_generators_of_paths_and_of_records(frames, want, tmp_path) -> None:
    irm = pytest.importorskip("ir_measures")
    q, r = frames
    paths = []
    for name in ("sample1", "sample2"):
        p = tmp_path / f"{name}.parquet"
        r.filter(pl.col("run_id") == name).write_parquet(p)
        paths.append(p)
    _same(evaluate(q, (p for p in paths), MEASURES), want)  # a generator of paths, as before
    sub = r.filter(pl.col("run_id") == "sample1")
    gen = (irm.ScoredDoc(a, b, s) for _, a, b, _, s in sub.iter_rows())
    got = evaluate(q, gen, MEASURES)
    assert_frame_equal(
        got.drop("run_id").sort("query_id", "measure"),
        want.filter(pl.col("run_id") == "sample1").drop("run_id"),
    )


@pytest.mark.parametrize("what", ["qrels", "run"])
def test_dict_of_non_dicts_names_the_query(frames, what) -> None:
    # the first query's value checked once, where every query's is: the query named
    q, _ = frames
    bad = {"1": [("a", 1)]}
    args = (bad, RUNS) if what == "qrels" else (q, bad)
    with pytest.raises(SchemaError, match=rf"^{what} dict, query '1': expected a dict \{{doc_id"):
        evaluate(*args, ["map"])
