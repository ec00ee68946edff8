"""``fasteval hsa`` and the HSA plots."""

from __future__ import annotations

import io

import polars as pl
from click.testing import CliRunner

from fasteval.analysis.hsa import histogram_analysis, histogram_analysis_prepared
from fasteval.cli import main
from fasteval.engine import prepare
from tests.conftest import SAMPLE_DATA as DATA

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


def test_cli_table_matches_api(tmp_path):
    res = CliRunner().invoke(main, ["hsa", str(QRELS), str(RUNS), "--bins", "10"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if not ln.startswith("#")]
    got = pl.read_csv(io.StringIO("\n".join(lines)), separator="\t")
    want = histogram_analysis(QRELS, RUNS, bins=10)
    assert got["run_id"].cast(pl.String).to_list() == want["run_id"].to_list()
    diff = (got["hsa"] - want["hsa"]).abs().max()
    assert diff is not None and diff < 1e-5


def test_cli_options_and_plots(tmp_path):
    out = tmp_path / "h.parquet"
    res = CliRunner().invoke(
        main,
        [
            "hsa",
            str(QRELS),
            str(RUNS),
            "--values",
            "score",
            "--normalize",
            "run",
            "--sample",
            "5",
            "--format",
            "parquet",
            "-o",
            str(out),
            "--plot",
            str(tmp_path / "figs"),
        ],
    )
    assert res.exit_code == 0, res.output
    df = pl.read_parquet(out)
    assert df.height > 0 and (df["n_nonrel"] <= 5 * df["n_queries"]).all()
    pngs = sorted((tmp_path / "figs").glob("*.png"))
    assert len(pngs) == df.height + 1 and all(p.stat().st_size > 1000 for p in pngs)
    res = CliRunner().invoke(main, ["hsa", str(QRELS), str(RUNS), "-q", "--format", "json"])
    assert res.exit_code == 0 and '"all"' in res.stdout


def test_cli_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1\n")
    res = CliRunner().invoke(main, ["hsa", str(bad), str(RUNS)])
    assert res.exit_code == 1
    assert res.stderr.startswith("fasteval: error:") and "Traceback" not in res.output
    res = CliRunner().invoke(
        main, ["hsa", str(QRELS), str(RUNS), "--sample", "3", "--unjudged", "nonrel"]
    )
    assert res.exit_code == 1 and "nonrel_sample" in res.stderr


def test_plot_two_runs(tmp_path):
    from fasteval.plots.hsa import plot_runs

    prep = prepare(QRELS, RUNS)
    df, hist = histogram_analysis_prepared(prep, return_histograms=True)
    p = tmp_path / "pair.png"
    plot_runs(hist, [0, 1], df["run_id"].to_list()[:2], p)
    assert p.exists() and p.stat().st_size > 1000
