"""Robustness studies: exactness at p = 1, seeding per unit, resume, plug-in scorers, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from fasteval import evaluate, studies
from fasteval.analysis import correlation as corr
from fasteval.analysis import studies as st
from fasteval.analysis import variants as var
from fasteval.cli import main
from fasteval.engine import prepare
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from tests.conftest import SAMPLE_DATA as DATA

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


@pytest.fixture(scope="module")
def prep():
    return prepare(QRELS, RUNS)


def test_rate_one_reproduces_full_scores(prep) -> None:
    res = studies.subsample(prepared=prep, measures=["map", "ndcg"], rates=[1.0], reps=3)
    tau = res.units.filter(pl.col("statistic") == "tau")["value"]
    assert (tau == 1.0).all()
    assert (res.units.filter(pl.col("statistic") == "rmse")["value"] == 0.0).all()
    want = evaluate(QRELS, RUNS, ["map", "ndcg"], per_query=False)
    got = res.full.join(want, on=["run_id", "measure"])
    assert got.height == want.height
    assert (got["value"] == got["value_right"]).all()


def test_units_are_independent_of_order(prep) -> None:
    a = studies.subsample(prepared=prep, measures="map", rates=[0.1, 0.3, 0.6], reps=4, seed=9)
    b = studies.subsample(prepared=prep, measures="map", rates=[0.6, 0.1], reps=2, seed=9)
    key = ["setting", "rep", "measure", "statistic"]
    joined = b.units.join(a.units, on=key)
    assert joined.height == b.units.height
    assert (joined["value"] == joined["value_right"]).all()
    c = studies.subsample(prepared=prep, measures="map", rates=[0.1, 0.3, 0.6], reps=4, seed=10)
    assert not c.units["value"].equals(a.units["value"])


def test_unit_equals_direct_computation(prep) -> None:
    res = studies.subsample(prepared=prep, measures="map", rates=[0.2], reps=2, seed=4)
    sc = var.AdhocScorer(["map"])
    full = sc(prep.enc)[:, 0]
    rng = st.unit_rng(4, "subsample", round(0.2 * 1_000_000), 1)
    keep = var.subsample_mask(prep.enc, 0.2, rng)
    v = sc(var.apply_mask(prep.enc, keep))[:, 0]
    row = res.units.filter(
        (pl.col("rep") == 1) & (pl.col("statistic") == "tau") & (pl.col("measure") == "map")
    )
    assert row["value"][0] == corr.kendall_tau(full, v, "b")


def test_summary_statistics(prep) -> None:
    res = studies.subsample(prepared=prep, measures="P_10", rates=[0.1], reps=6, seed=2)
    vals = res.units.filter(pl.col("statistic") == "tau")["value"].to_numpy()
    row = res.summary.filter(pl.col("statistic") == "tau")
    assert row["n"][0] == 6
    assert row["mean"][0] == pytest.approx(vals.mean())
    assert row["min"][0] == vals.min()
    assert row["max"][0] == vals.max()
    half = 2.570581835636314 * vals.std(ddof=1) / np.sqrt(6)  # t_{0.975, 5}
    assert row["ci_high"][0] == pytest.approx(vals.mean() + half, rel=1e-9)
    assert row["ci_low"][0] == pytest.approx(vals.mean() - half, rel=1e-9)


def test_resume_skips_finished_settings(prep, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "s"
    kw = {"prepared": prep, "measures": ["map"], "rates": [0.1, 0.5], "reps": 3, "seed": 1}
    first = studies.subsample(out_dir=out, **kw)
    assert (out / "setting=0.1.parquet").exists()
    (out / "setting=0.5.parquet").unlink()  # as if interrupted during 0.5
    calls: list[str] = []
    real = st.run_unit

    def counting(ctx, setting, rep, seed):
        calls.append(setting.label)
        return real(ctx, setting, rep, seed)

    monkeypatch.setattr(st, "run_unit", counting)
    again = studies.subsample(out_dir=out, **kw)
    assert calls == ["0.5"] * 3
    assert again.units.equals(first.units)
    assert again.summary.equals(first.summary)
    with pytest.raises(ParameterError, match="different study"):
        studies.subsample(out_dir=out, **{**kw, "seed": 2})


def test_pool_depth_study(prep) -> None:
    res = studies.pool_depth(prepared=prep, measures=["map"], depths=[1, 5, 50])
    assert res.units["rep"].unique().to_list() == [0]
    sc = var.AdhocScorer(["map"])
    full = sc(prep.enc)[:, 0]
    for d in (1, 5, 50):
        v = sc(var.apply_mask(prep.enc, var.pool_depth_mask(prep.enc, d)))[:, 0]
        got = res.units.filter((pl.col("setting") == str(d)) & (pl.col("statistic") == "tau"))
        assert got["value"][0] == corr.kendall_tau(full, v, "b")
    judged = res.summary.filter(pl.col("statistic") == "tau")["judgments"].to_list()
    assert judged == sorted(judged)


def test_leave_one_group_out(prep) -> None:
    names = prep.enc.run_names
    groups = {r: f"g{i // 3}" for i, r in enumerate(names)}
    res = studies.leave_out(prepared=prep, measures=["map"], groups=groups, depth=10)
    assert sorted(res.units["setting"].unique().to_list()) == sorted(set(groups.values()))
    sc = var.AdhocScorer(["map"])
    full = sc(prep.enc)[:, 0]
    left = np.array([groups[r] == "g1" for r in names])
    v = sc(var.apply_mask(prep.enc, var.leave_out_mask(prep.enc, left, depth=10)))[:, 0]
    got = res.units.filter((pl.col("setting") == "g1") & (pl.col("statistic") == "rmse"))
    assert got["value"][0] == pytest.approx(float(np.sqrt(np.mean((full - v) ** 2))), abs=0)
    shares = studies.leave_out(prepared=prep, measures=["map"], rates=[0.25, 0.5], reps=3)
    assert shares.summary.filter(pl.col("statistic") == "tau").height == 2


class RelRetScorer:
    """A plug-in scorer: relevant documents retrieved per run (from enc.rel only)."""

    names = ("relret",)

    def __call__(self, enc: Encoded) -> np.ndarray:
        lens = enc.ends - enc.starts
        runs = np.repeat(enc.group_run, lens)
        pos = np.concatenate([np.arange(a, b) for a, b in zip(enc.starts, enc.ends, strict=True)])
        hits = (enc.rel[pos] >= 1).astype(np.float64)
        return np.bincount(runs, weights=hits, minlength=len(enc.run_names))


def test_plugin_scorer(prep) -> None:
    res = studies.subsample(prepared=prep, scorer=RelRetScorer(), rates=[0.2, 1.0], reps=2)
    assert res.units["measure"].unique().to_list() == ["relret"]
    one = res.units.filter((pl.col("setting") == "1") & (pl.col("statistic") == "rmse"))
    assert (one["value"] == 0.0).all()
    low = res.units.filter((pl.col("setting") == "0.2") & (pl.col("statistic") == "rmse"))
    assert (low["value"] > 0).all()


def test_bad_parameters(prep) -> None:
    with pytest.raises(ParameterError, match="rate must be in"):
        studies.subsample(prepared=prep, measures="map", rates=[0.0])
    with pytest.raises(ParameterError, match="positive integers"):
        studies.pool_depth(prepared=prep, measures="map", depths=[0])
    with pytest.raises(ParameterError, match="no group"):
        studies.leave_out(prepared=prep, measures="map", groups={"x": "y"})


def test_plot(prep, tmp_path: Path) -> None:
    from fasteval.plots.studies import plot_study

    res = studies.subsample(prepared=prep, measures=["map", "P_10"], rates=[0.1, 0.5], reps=3)
    p = plot_study(res.summary, tmp_path / "tau.png", xlabel="rate")
    assert p.exists() and p.stat().st_size > 1000
    groups = {r: f"g{i // 2}" for i, r in enumerate(prep.enc.run_names)}
    res = studies.leave_out(prepared=prep, measures="map", groups=groups)
    p = plot_study(res.summary, tmp_path / "g.png", statistic="tau_ap")
    assert p.stat().st_size > 1000


def test_cli(tmp_path: Path) -> None:
    out = tmp_path / "o"
    args = ["study", "subsample", str(QRELS), str(RUNS), "-m", "map", "--rates", "0.2,1"]
    r = CliRunner().invoke(main, [*args, "--reps", "3", "-o", str(out), "--seed", "5"])
    assert r.exit_code == 0, r.output
    for f in ("summary.csv", "summary.parquet", "full.parquet", "tau.png", "setting=0.2.parquet"):
        assert (out / f).stat().st_size > 0
    summary = pl.read_csv(out / "summary.csv")
    assert {"mean", "ci_low", "ci_high", "min", "max"} <= set(summary.columns)
    again = CliRunner().invoke(main, [*args, "--reps", "3", "-o", str(out), "--seed", "5"])
    assert again.exit_code == 0
    assert pl.read_csv(out / "summary.csv").equals(summary)
    bad = CliRunner().invoke(main, [*args[:-1], "0.2,x", "-o", str(tmp_path / "b")])
    assert bad.exit_code == 1
    assert "comma-separated numbers" in bad.output
    assert "Traceback" not in bad.output
    groups = tmp_path / "groups"
    runs = prepare(QRELS, RUNS).enc.run_names
    groups.write_text("".join(f"{r} G{i % 2}\n" for i, r in enumerate(runs)))
    lo = CliRunner().invoke(
        main,
        ["study", "leave-out", str(QRELS), str(RUNS), "-m", "map", "--groups", str(groups),
         "--pool-depth", "20", "-o", str(tmp_path / "lo"), "--no-plot"],
    )  # fmt: skip
    assert lo.exit_code == 0, lo.output
    assert (tmp_path / "lo" / "setting=G1.parquet").exists()
    pd = CliRunner().invoke(
        main,
        ["study", "pool-depth", str(QRELS), str(RUNS), "--depths", "1-3,10",
         "-o", str(tmp_path / "pd"), "--no-plot"],
    )  # fmt: skip
    assert pd.exit_code == 0, pd.output
    assert len(list((tmp_path / "pd").glob("setting=*.parquet"))) == 4


def test_units_of_one_context_from_many_threads_equal_the_serial_result():
    """The masker reuses buffers: threads sharing a context (a Dask worker's) take turns."""
    from concurrent.futures import ThreadPoolExecutor

    from fasteval.analysis import studies as st

    q = "fasteval/data/sample.qrels"
    r = "fasteval/data/sample_runs.parquet"
    ctx, settings, _ = st.PLANNERS["subsample"](q, r, ["map", "P_10"], rates=[0.3, 0.6])
    units = [(s, rep) for s in settings for rep in range(6)]
    serial = [st.run_unit(ctx, s, rep, 7) for s, rep in units]
    with ThreadPoolExecutor(4) as ex:
        threaded = list(ex.map(lambda u: st.run_unit(ctx, u[0], u[1], 7), units))
    assert threaded == serial
