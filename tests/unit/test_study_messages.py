"""Issue 17, class 7: studies say what they print, resume and extend, and survive damage."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from fasteval.analysis.studies import subsample
from fasteval.cli import main
from fasteval.errors import FastevalWarning, ParameterError
from tests.conftest import SAMPLE_DATA as DATA

QRELS = str(DATA / "sample.qrels")
RUNS = str(DATA / "sample_runs.parquet")


def _study(out: Path, *extra: str):
    args = ["study", "subsample", QRELS, RUNS, "--no-plot", "-o", str(out), *extra]
    return CliRunner().invoke(main, args, prog_name="fasteval")


def test_table_names_its_statistic_and_information_tau_in_bits(tmp_path):
    res = _study(tmp_path / "s", "-m", "map", "--rates", "0.5", "--reps", "12")
    assert res.exit_code == 0, res.output
    title = res.stdout.splitlines()[0]
    assert "Kendall's tau (b)" in title
    assert "info_tau_bits" in res.stdout and "bits" in title and "not a correlation" in title
    assert "rough" not in res.stderr  # 12 repetitions: no warning
    assert "resumed" not in res.stderr


def test_few_repetitions_warn_about_the_interval(tmp_path):
    res = _study(tmp_path / "s", "-m", "map", "--rates", "0.5", "--reps", "3")
    assert res.exit_code == 0, res.output
    assert "warning: confidence intervals from 3 repetition(s) are rough" in res.stderr


def test_resume_says_how_many_units_were_done(tmp_path):
    out = tmp_path / "s"
    assert _study(out, "-m", "map", "--rates", "0.5", "--reps", "3").exit_code == 0
    res = _study(out, "-m", "map", "--rates", "0.5,0.3", "--reps", "4")
    assert res.exit_code == 0, res.output
    assert f"resumed the study in {out}: 3 of 8 units were already done" in res.stderr


def test_changing_only_measures_names_measures_not_data(tmp_path):
    out = tmp_path / "s"
    assert _study(out, "-m", "map", "--rates", "0.5", "--reps", "2").exit_code == 0
    res = _study(out, "-m", "P_10", "--rates", "0.5", "--reps", "2")
    assert res.exit_code == 1
    err = res.stderr.strip()
    assert "differs in measures: map -> P_10" in err, err
    assert "data" not in err.split("|")[0] and "scores" not in err, err


def test_extending_reps_and_rates_equals_a_fresh_run_of_the_larger_plan(tmp_path):
    small, big = tmp_path / "small", tmp_path / "fresh"
    subsample(QRELS, RUNS, ["map", "P_10"], rates=[0.5], reps=2, seed=3, out_dir=small)
    grown = subsample(QRELS, RUNS, ["map", "P_10"], rates=[0.3, 0.5], reps=4, seed=3, out_dir=small)
    fresh = subsample(QRELS, RUNS, ["map", "P_10"], rates=[0.3, 0.5], reps=4, seed=3, out_dir=big)
    assert grown.resumed == 2 and fresh.resumed == 0
    assert_frame_equal(grown.units, fresh.units)
    assert_frame_equal(grown.summary, fresh.summary)
    for name in ("setting=0.5.parquet", "setting=0.3.parquet", "summary.parquet"):
        assert_frame_equal(pl.read_parquet(small / name), pl.read_parquet(big / name))
    # fewer repetitions than saved: the first ones, as a fresh run of the smaller plan
    less = subsample(QRELS, RUNS, ["map", "P_10"], rates=[0.5], reps=3, seed=3, out_dir=small)
    alone = subsample(QRELS, RUNS, ["map", "P_10"], rates=[0.5], reps=3, seed=3)
    assert less.resumed == 3
    assert_frame_equal(less.units, alone.units)
    assert pl.read_parquet(small / "setting=0.5.parquet")["rep"].max() == 3  # nothing lost
    # another seed is another study
    with pytest.raises(ParameterError, match=r"differs in seed: 3 -> 4"):
        subsample(QRELS, RUNS, ["map", "P_10"], rates=[0.5], reps=2, seed=4, out_dir=small)


@pytest.mark.parametrize("damage", [b"", b"PAR1 half a file", b"not parquet at all"])
def test_damaged_part_file_is_recomputed_with_a_warning(tmp_path, damage):
    out = tmp_path / "s"
    first = subsample(QRELS, RUNS, ["map"], rates=[0.5, 0.3], reps=2, out_dir=out)
    (out / "setting=0.5.parquet").write_bytes(damage)
    with pytest.warns(FastevalWarning, match=r"setting=0\.5\.parquet: damaged part file"):
        again = subsample(QRELS, RUNS, ["map"], rates=[0.5, 0.3], reps=2, out_dir=out)
    assert again.resumed == 2  # the undamaged setting
    assert_frame_equal(again.units, first.units)
    assert_frame_equal(
        pl.read_parquet(out / "setting=0.5.parquet"), first.units.filter(pl.col("setting") == "0.5")
    )


@pytest.mark.parametrize("damage", ["", '{"kind": "subs', "[1, 2]"])
def test_empty_or_corrupt_study_json_is_rewritten_with_a_warning(tmp_path, damage):
    out = tmp_path / "s"
    first = subsample(QRELS, RUNS, ["map"], rates=[0.5], reps=2, out_dir=out)
    (out / "study.json").write_text(damage)
    with pytest.warns(FastevalWarning, match=r"study\.json is damaged"):
        again = subsample(QRELS, RUNS, ["map"], rates=[0.5], reps=2, out_dir=out)
    assert again.resumed == 0  # part files cannot be matched to a study: recomputed
    assert_frame_equal(again.units, first.units)
    import json

    assert json.loads((out / "study.json").read_text())["measures"] == ["map"]
    # and the CLI says so in one warning line, exit 0
    (out / "study.json").write_text(damage)
    res = _study(out, "-m", "map", "--rates", "0.5", "--reps", "2")
    assert res.exit_code == 0, res.output
    assert "fasteval: warning:" in res.stderr and "study.json is damaged" in res.stderr
