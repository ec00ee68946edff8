"""Every command that takes a measure takes every name the API takes, ir_measures' included.

One parser (:func:`fasteval.measures.parser.parse_measure`, and
:func:`fasteval.measures.parser.output_names` for the rows a name gives) serves
``evaluate``, ``eval``, ``compare``, ``study``, ``correlate``, ``infodiff`` and
``fuse-study``; each is run here with each spelling, and the output keeps the
name asked for (``MAP`` stays ``MAP``, ``Recall@100`` stays ``Recall@100``) with
the value of the measure it stands for.
"""

from __future__ import annotations

import io

import polars as pl
import pytest
from click.testing import CliRunner

import fasteval
from fasteval.cli import main
from fasteval.errors import MeasureError
from fasteval.measures.catalog import output_name
from fasteval.measures.parser import output_names, parse_measure

# ir_measures spelling -> a fasteval spelling of the same measure
SPELLINGS = {
    "MAP": "map",
    "MRR": "recip_rank",
    "NDCG": "ndcg",
    "NDCG@10": "ndcg_cut_10",
    "Recall@100": "recall_100",
    "Precision@10": "P_10",
    "BPref": "bpref",
    "RPrec": "Rprec",
    "nDCG@10": "ndcg_cut.10",
    "P(rel=2)@5": "P(rel=2)@5",
    "MAP@100": "map_cut_100",
    "MRR@10": "RR@10",
    "AP": "map",
}

# four runs over three queries, graded qrels (0..2): distinct rankings for the correlations
QRELS = "".join(f"{q} 0 d{d} {(d * q) % 3}\n" for q in (1, 2, 3) for d in range(12))


def _run(tag: str, shift: int) -> str:
    return "".join(
        f"{q} Q0 d{(d + shift * q) % 12} {d + 1} {20 - d} {tag}\n"
        for q in (1, 2, 3)
        for d in range(10)
    )


@pytest.fixture
def data(write):
    q = write("qrels", QRELS)
    runs = [write(f"run{i}", _run(f"r{i}", i)) for i in range(4)]
    return str(q), [str(r) for r in runs]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _invoke(runner: CliRunner, args: list[str]) -> str:
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_evaluate_keeps_the_name_and_the_value(data, name):
    qrels, runs = data
    df = fasteval.evaluate(qrels, runs, [name, SPELLINGS[name]], per_query=True)
    out = output_name(SPELLINGS[name])
    got = df.filter(pl.col("measure") == name).sort("run_id", "query_id")
    want = df.filter(pl.col("measure") == out).sort("run_id", "query_id")
    assert got.height == want.height > 0
    assert got["value"].to_list() == want["value"].to_list()


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_eval_command(runner, data, name):
    qrels, runs = data
    text = _invoke(runner, ["eval", qrels, *runs, "-m", name, "-m", SPELLINGS[name], "-q"])
    out = output_name(SPELLINGS[name])
    rows = [ln.split("\t") for ln in text.splitlines() if not ln.startswith("runid")]
    mine = [(q, v) for m, q, v in rows if m.strip() == name]
    other = [(q, v) for m, q, v in rows if m.strip() == out]
    assert mine and mine == other


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_compare_command(runner, data, name):
    qrels, runs = data
    text = _invoke(runner, ["compare", qrels, *runs, "-m", name, "--format", "csv"])
    df = pl.read_csv(io.StringIO(text))
    assert set(df["measure"].to_list()) == {name}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_correlate_command(runner, data, name):
    qrels, runs = data
    other = SPELLINGS[name]
    args = ["correlate", qrels, *runs, "--format", "csv", "-a", name, "-b", other]
    df = pl.read_csv(io.StringIO(_invoke(runner, [*args, "--given", name])))
    # the same measure under two names: the system rankings agree exactly
    assert df["n_systems"].to_list() == [4]
    assert df["tau_b"].to_list() == [1.0] or df["tau_b"].is_nan().all()
    for b in ("P_10", "MRR", "NDCG@10", "RIC"):
        df = pl.read_csv(io.StringIO(_invoke(runner, [*args[:-1], b, "--given", "MAP"])))
        assert df["n_systems"].to_list() == [4]


@pytest.mark.parametrize("name", [*SPELLINGS, "P.5"])
def test_infodiff_bin_by(runner, data, name):
    qrels, runs = data
    text = _invoke(runner, ["infodiff", qrels, *runs, "--bin-by", name, "--format", "csv"])
    cols = pl.read_csv(io.StringIO(text)).columns
    assert f"{output_name(name)}_a" in cols


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_study_command(runner, data, tmp_path, name):
    qrels, runs = data
    out = tmp_path / "study"
    args = ["study", "subsample", qrels, *runs, "-m", name, "-o", str(out), "--no-plot"]
    text = _invoke(runner, [*args, "--no-progress"])
    assert name in text


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_fuse_study_command(runner, data, tmp_path, name):
    qrels, runs = data
    out = tmp_path / "fs.csv"
    args = ["fuse-study", qrels, *runs, "--measure", name, "-n", "2", "--size", "2"]
    _invoke(runner, [*args, "-o", str(out), "--no-progress"])
    assert name in pl.read_csv(out).columns


def test_demo_command(runner):
    text = _invoke(runner, ["demo", "-m", "MAP", "-m", "Recall@100"])
    assert {ln.split("\t")[0].strip() for ln in text.splitlines()} >= {"MAP", "Recall@100"}


@pytest.mark.parametrize(
    ("name", "names"),
    [
        ("MAP", ["MAP"]),
        ("P.5,10", ["P_5", "P_10"]),
        ("RIC", ["RIC"]),
        ("alpha-nDCG@20", ["alpha_nDCG@20"]),
        ("NumQ", ["NumQ"]),
    ],
)
def test_output_names(name, names):
    assert output_names(name) == names


@pytest.mark.parametrize("bad", ["Precision", "Recall", "MAPP", "NDCG@x"])
def test_bad_spellings_are_one_line_errors(runner, data, bad):
    qrels, runs = data
    with pytest.raises(MeasureError):
        parse_measure(bad)
    for cmd in (["eval", qrels, *runs, "-m", bad], ["correlate", qrels, *runs, "-a", bad]):
        res = runner.invoke(main, cmd)
        assert res.exit_code == 1
        assert res.output.startswith("fasteval: error:") and res.output.count("\n") == 1


def test_several_measures_for_one_option_is_an_error(runner, data):
    qrels, runs = data
    res = runner.invoke(main, ["correlate", qrels, *runs, "-a", "MAP", "-b", "P.5,10"])
    assert res.exit_code == 1
    assert "-b must name exactly one measure" in res.output


def test_numq_is_one_per_query_as_ir_measures(data):
    irm = pytest.importorskip("ir_measures")
    qrels, runs = data
    df = fasteval.evaluate(qrels, runs[0], ["NumQ"], per_query=True)
    per_q = df.filter(pl.col("query_id") != "all")
    want_q = {
        m.query_id: m.value
        for m in irm.iter_calc([irm.NumQ], irm.read_trec_qrels(qrels), irm.read_trec_run(runs[0]))
    }
    assert dict(per_q.select("query_id", "value").iter_rows()) == want_q
    want = irm.calc_aggregate([irm.NumQ], irm.read_trec_qrels(qrels), irm.read_trec_run(runs[0]))
    assert df.filter(pl.col("query_id") == "all")["value"].to_list() == [want[irm.NumQ]]


def test_eval_takes_judged_only_as_minus_j(runner, write):
    qrels = str(write("q", "1 0 a 1\n1 0 b 0\n"))
    run = str(write("r", "1 Q0 x 1 3.0 r\n1 Q0 a 2 2.0 r\n"))  # x unjudged: AP 0.5, with -J 1
    a = _invoke(runner, ["eval", qrels, run, "-m", "AP(judged_only=True)"])
    b = _invoke(runner, ["eval", qrels, run, "-m", "AP", "-J"])
    assert a == b == f"{'AP':<22}\tall\t1.0000\n"
