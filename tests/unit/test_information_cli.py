"""The RIC hook in evaluate, and the ric / infodiff / correlate commands."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import fasteval
from fasteval.analysis import information as inf
from fasteval.analysis.information import map_bins, pairs_within_bins
from fasteval.cli import SAMPLE_DIR, main
from fasteval.errors import ParameterError

QRELS = str(SAMPLE_DIR / "sample.qrels")
RUNS = str(SAMPLE_DIR / "sample_runs.parquet")


def test_evaluate_hook_matches_ric():
    ev = fasteval.evaluate(QRELS, RUNS, ["map", "RIC"], per_query=True)
    direct = fasteval.ric(QRELS, RUNS, per_query=True)
    got = ev.filter(pl.col("measure") == "RIC").select("run_id", "query_id", "value")
    assert got.rows() == direct.rows()
    # rows stay grouped per run, the aggregates last
    first = ev.filter(pl.col("run_id") == ev["run_id"][0])
    assert first["query_id"][-1] == "all" and first["query_id"][-2] == "all"
    only = fasteval.evaluate(QRELS, RUNS, "RIC", per_query=False)
    assert only["measure"].unique().to_list() == ["RIC"]
    assert only.height == len(direct["run_id"].unique())


def test_joint_ric_public_api():
    d = inf.pair_data(QRELS, RUNS)
    names = d.run_names
    one = fasteval.joint_ric(QRELS, RUNS, names[:1])
    assert one == pytest.approx(float(d.ric_per_run()[0]), abs=1e-12)
    two = fasteval.joint_ric(QRELS, RUNS, names[:2])
    per_q = fasteval.joint_ric(QRELS, RUNS, names[:2], per_query=True)
    assert two == pytest.approx(per_q["joint_RIC"].mean(), abs=1e-12)
    assert two >= one - 1e-12  # more systems never carry less information
    # id = 2 I(R1,R2;Q) - I(R1;Q) - I(R2;Q), query by query
    idf = fasteval.information_difference(QRELS, RUNS, [(names[0], names[1])])
    _, pq = d.information_difference(np.array([0]), np.array([1]))
    ric = d.ric_values()
    g0, g1 = d.gmap[0], d.gmap[1]
    ok = ~np.isnan(pq[0])
    want = 2 * per_q["joint_RIC"].to_numpy() - ric[g0[ok]] - ric[g1[ok]]
    assert np.allclose(pq[0, ok], want, atol=1e-12)
    assert idf["id"][0] == pytest.approx(pq[0, ok].mean(), abs=1e-12)
    with pytest.raises(ParameterError, match="unknown run id"):
        fasteval.joint_ric(QRELS, RUNS, ["nope"])
    with pytest.raises(ParameterError, match="non-empty"):
        fasteval.joint_ric(QRELS, RUNS, [])


def test_all_pairs_frame():
    df = fasteval.information_difference(QRELS, RUNS)
    n = len(inf.pair_data(QRELS, RUNS).run_names)
    assert df.height == n * (n - 1) // 2
    assert df.columns == ["run_a", "run_b", "id"]
    assert (df["id"] >= -1e-12).all()


def test_bins():
    bins = map_bins(np.array([0.1, 0.12, 0.45, 0.9, 0.88]), 4)
    assert bins.tolist() == [0, 0, 1, 3, 3]
    a, b = pairs_within_bins(bins)
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == [(0, 1), (3, 4)]


def test_cli_commands(tmp_path):
    r = CliRunner()
    out = r.invoke(main, ["ric", QRELS, RUNS])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0] == "run_id\tRIC"
    out = r.invoke(main, ["infodiff", QRELS, RUNS, "--bin-by", "map", "--bins", "3", "--top", "2"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].split("\t")[:3] == ["run_a", "run_b", "id"] and len(lines) == 3
    ids = [float(x.split("\t")[2]) for x in lines[1:]]
    assert ids == sorted(ids)
    p = tmp_path / "c.csv"
    out = r.invoke(main, ["correlate", QRELS, RUNS, "--format", "csv", "-o", str(p)])
    assert out.exit_code == 0, out.output
    df = pl.read_csv(p)
    assert {"tau_a", "tau_b", "spearman", "pearson", "tau_ap", "information_tau"} <= set(df.columns)
    assert not math.isnan(df["information_tau"][0])
    out = r.invoke(main, ["eval", "-m", "RIC", QRELS, RUNS])
    assert out.exit_code == 0 and "RIC" in out.output
    out = r.invoke(main, ["correlate", QRELS, RUNS, "-b", "P"])
    assert out.exit_code == 1 and "exactly one measure" in out.output


def test_plots(tmp_path):
    pytest.importorskip("matplotlib")
    from fasteval.plots.information import id_vs_delta_ap, ric_vs_measures

    d = inf.pair_data(QRELS, RUNS)
    p1 = ric_vs_measures(d, tmp_path / "ric.png")
    p2 = id_vs_delta_ap(d, tmp_path / "id.png", n_pairs=10)
    for p in (p1, p2):
        assert p.exists() and p.stat().st_size > 1000
