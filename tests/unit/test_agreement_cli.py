"""`fasteval ranks` and `fasteval agree`, and the figures: written, inputs checked,
bad input a one-line error with exit status 1."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import fasteval
from fasteval.analysis.agreement import simulate_assessor
from fasteval.cli import main
from fasteval.errors import ParameterError
from tests.conftest import SAMPLE_DATA as DATA
from tests.conftest import one_line_error

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


def _run(args: list[str]):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def noisy(tmp_path_factory) -> Path:
    q = simulate_assessor(
        fasteval.load_qrels(QRELS), flip_relevant=0.3, flip_nonrelevant=0.1, drop=0.2, seed=5
    )
    path = tmp_path_factory.mktemp("qrels") / "noisy.qrels"
    lines = [f"{r[0]} 0 {r[1]} {r[2]}" for r in q.iter_rows()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ranks_prints_and_writes(tmp_path) -> None:
    res = _run(["ranks", QRELS, RUNS, "-m", "P_10", "-B", "100", "--seed", "3"])
    assert res.exit_code == 0, res.output
    df = pl.read_csv(io.StringIO(res.output), separator="\t")
    want = fasteval.rank_intervals(QRELS, RUNS, "P_10", B=100, seed=3)
    assert df["run_id"].to_list() == want["run_id"].to_list()
    assert df["rank_high"].to_list() == want["rank_high"].to_list()
    out = tmp_path / "ranks.parquet"
    res = _run(["ranks", QRELS, RUNS, "-B", "50", "-o", out, "--plot", tmp_path / "r.png"])
    assert res.exit_code == 0, res.output
    assert pl.read_parquet(out).columns == ["run_id", "mean", "rank", "rank_low", "rank_high"]
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_agree_prints_and_writes(tmp_path, noisy) -> None:
    res = _run(["agree", QRELS, noisy, "-r", RUNS, "-m", "map", "-B", "50"])
    assert res.exit_code == 0, res.output
    assert "# rankings" in res.output and "# significance" in res.output
    labels = res.output.split("# labels\n")[1].split("# rankings")[0]
    assert pl.read_csv(io.StringIO(labels), separator="\t").height == 1  # the overall row
    out = tmp_path / "agree.csv"
    res = _run(
        ["agree", QRELS, noisy, "-r", RUNS, "-B", "50", "-o", out, "--plot", tmp_path / "a.svg"]
    )
    assert res.exit_code == 0, res.output
    for part in ("labels", "rankings", "significance", "means"):
        assert (tmp_path / f"agree.{part}.csv").exists(), part
    rankings = pl.read_csv(tmp_path / "agree.rankings.csv")
    assert rankings["other"].unique().to_list() == ["noisy.qrels"] and rankings.height == 3
    assert "<svg" in (tmp_path / "a.svg").read_text()
    res = _run(["agree", QRELS, noisy, "-o", tmp_path / "labels_only.tsv"])
    assert res.exit_code == 0 and (tmp_path / "labels_only.labels.tsv").exists()


def test_bad_input_is_one_line(tmp_path, noisy) -> None:
    one_line_error(_run(["ranks", QRELS, RUNS, "-B", "0"]), "B must be >= 1", "got 0")
    one_line_error(_run(["ranks", QRELS, RUNS, "-o", tmp_path / "x.xlsx"]), "'.xlsx'")
    one_line_error(_run(["agree", QRELS, noisy, "-r", RUNS, "-B", "-3"]), "got -3")
    one_line_error(_run(["agree", QRELS, noisy, "-r", RUNS, "-m", "nope"]), "'nope'")
    elsewhere = tmp_path / "elsewhere.qrels"
    elsewhere.write_text("999 0 no_such_doc 1\n")
    one_line_error(_run(["agree", QRELS, elsewhere]), "no judgment", "in common")
    one_line_error(_run(["agree", QRELS, noisy, "--plot", tmp_path / "a.png"]), "--runs")


def test_figure_inputs_are_checked(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from fasteval.plots.agreement import plot_agreement, plot_rank_intervals
    from fasteval.plots.compare import mean_intervals

    res = fasteval.agreement(QRELS, QRELS)  # no runs: no means to draw
    with pytest.raises(ParameterError, match="with runs"):
        plot_agreement(res, tmp_path / "a.png")
    with pytest.raises(ParameterError, match="rank_intervals' columns"):
        plot_rank_intervals(pl.DataFrame({"run_id": ["a"]}), tmp_path / "r.png")
    cmp = fasteval.compare(QRELS, RUNS, baseline="sample2")
    assert mean_intervals(cmp, tmp_path / "c.png").stat().st_size > 1000
    pairs = fasteval.compare(QRELS, RUNS, ["map"])  # no baseline: every pair
    assert mean_intervals(pairs, tmp_path / "p.png").stat().st_size > 1000
    with pytest.raises(ParameterError, match="not in the comparison"):
        mean_intervals(cmp, tmp_path / "c.png", measures=["bpref"])
