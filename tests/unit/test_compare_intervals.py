"""compare()'s intervals and effect sizes equal scipy's t intervals and the d_z formula."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval.analysis import statistics as sg
from fasteval.comparison import compare_table
from fasteval.errors import ParameterError


def _table(X: np.ndarray, runs: list[str]) -> pl.DataFrame:
    """A per-query evaluation table of one measure from a (runs, queries) matrix (NaN: missing)."""
    rows = []
    for i, r in enumerate(runs):
        for j in range(X.shape[1]):
            if not math.isnan(X[i, j]):
                rows.append({"run_id": r, "query_id": f"q{j}", "measure": "m", "value": X[i, j]})
    return pl.DataFrame(rows)


def _scipy_interval(x: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = scipy.stats.t.interval(level, x.shape[0] - 1, loc=x.mean(), scale=scipy.stats.sem(x))
    return float(lo), float(hi)


@pytest.mark.parametrize("seed", range(12))
def test_intervals_and_effect_size_equal_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_runs, n_q = int(rng.integers(2, 6)), int(rng.integers(3, 60))
    X = rng.random((n_runs, n_q)).round(int(rng.integers(1, 4)))
    runs = [f"r{i}" for i in range(n_runs)]
    level = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    cmp = compare_table(_table(X, runs), baseline="r0", ci_level=level)
    for row in cmp.table.iter_rows(named=True):
        i = runs.index(row["run_id"])
        lo, hi = _scipy_interval(X[i], level)
        assert row["ci_low"] == pytest.approx(lo, abs=1e-12)
        assert row["ci_high"] == pytest.approx(hi, abs=1e-12)
        if i == 0:  # the baseline's own row
            assert row["diff_ci_low"] is None and row["effect_size"] is None
            continue
        d = X[i] - X[0]
        ci = scipy.stats.ttest_rel(X[i], X[0]).confidence_interval(level)
        if np.std(d) > 0:
            assert row["diff_ci_low"] == pytest.approx(ci.low, abs=1e-12)
            assert row["diff_ci_high"] == pytest.approx(ci.high, abs=1e-12)
            assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


def test_missing_queries_pair_on_common_and_count_zero_with_complete() -> None:
    X = np.array([[0.5, 0.2, np.nan, 0.9], [0.4, 0.1, 0.3, 0.2]])
    tab = _table(X, ["a", "b"])
    plain = compare_table(tab, baseline="b").table.filter(pl.col("run_id") == "a")
    plain = plain.row(0, named=True)
    lo, hi = _scipy_interval(np.array([0.5, 0.2, 0.9]), 0.95)
    assert (plain["ci_low"], plain["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    d = np.array([0.1, 0.1, 0.7])
    ci = scipy.stats.ttest_rel(d, np.zeros(3)).confidence_interval(0.95)
    assert (plain["diff_ci_low"], plain["diff_ci_high"]) == pytest.approx((ci.low, ci.high))
    full = compare_table(tab, baseline="b", complete=True).table
    row = full.filter(pl.col("run_id") == "a").row(0, named=True)
    lo, hi = _scipy_interval(np.array([0.5, 0.2, 0.0, 0.9]), 0.95)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert row["effect_size"] == pytest.approx(
        np.mean([0.1, 0.1, -0.3, 0.7]) / np.std([0.1, 0.1, -0.3, 0.7], ddof=1)
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 10), min_size=2, max_size=40),
    st.floats(0.5, 0.999),
)
def test_interval_contains_mean_and_widens_with_level(vals: list[int], level: float) -> None:
    x = np.array(vals, float) / 10
    lo, hi = sg.t_interval(x, level)
    assert lo <= x.mean() + 1e-12 and x.mean() - 1e-12 <= hi
    lo2, hi2 = sg.t_interval(x, min(0.9999, level + 0.0005))
    assert lo2 <= lo + 1e-12 and hi <= hi2 + 1e-12
    assume(np.std(x) > 0)
    want = scipy.stats.t.interval(level, len(x) - 1, loc=x.mean(), scale=scipy.stats.sem(x))
    assert (lo, hi) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_degenerate_cases() -> None:
    assert all(math.isnan(v) for v in sg.t_interval(np.array([0.3]), 0.95))
    assert sg.t_interval(np.full(4, 0.25), 0.95) == (0.25, 0.25)
    assert math.isnan(sg.cohens_dz(np.full(4, 0.1)))  # sd 0: no effect size in sd units
    assert math.isnan(sg.cohens_dz(np.array([0.1])))


def test_renders_show_intervals_and_effect_sizes() -> None:
    rng = np.random.default_rng(3)
    X = rng.random((3, 20)).round(2)
    cmp = compare_table(_table(X, ["a", "b", "c"]), baseline="a")
    row = cmp.table.filter(pl.col("run_id") == "b").row(0, named=True)
    shown = f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
    diff_shown = f"[{row['diff_ci_low']:.4f}, {row['diff_ci_high']:.4f}]"
    for text in (cmp.to_text(), cmp.to_markdown(), cmp.to_latex(), cmp.to_html()):
        assert shown in text and diff_shown in text
        assert f"{row['effect_size']:+.2f}" in text
    assert "d_z" in cmp.to_text()
    pairs = compare_table(_table(X, ["a", "b", "c"]))
    for r in ("a", "b", "c"):
        iv = pairs.intervals.filter(pl.col("run_id") == r).row(0, named=True)
        assert f"[{iv['ci_low']:.4f}, {iv['ci_high']:.4f}]" in pairs.to_text()


def test_latex_puts_the_mark_before_the_interval() -> None:
    X = np.vstack([np.linspace(0.5, 0.9, 30), np.linspace(0.1, 0.3, 30)])
    tex = compare_table(_table(X, ["a", "b"]), baseline="a").to_latex()
    assert "$^{*}$ [" in tex


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_bad_level_is_one_line_error(level: float) -> None:
    X = np.random.default_rng(0).random((2, 5))
    with pytest.raises(ParameterError, match="ci_level must be in"):
        compare_table(_table(X, ["a", "b"]), baseline="a", ci_level=level)


def test_complete_interval_counts_queries_no_run_has() -> None:
    """With -c the mean divides by every qrels query: the interval is around that mean."""
    import fasteval
    from tests.conftest import SAMPLE_DATA

    qrels = fasteval.load_qrels(SAMPLE_DATA / "sample.qrels")
    runs = pl.read_parquet(SAMPLE_DATA / "sample_runs.parquet").filter(pl.col("query_id") != "101")
    cmp = fasteval.compare(qrels, runs, ["map"], baseline="sample1", complete=True)
    table = fasteval.evaluate(qrels, runs, ["map"], per_query=True, complete=True)
    for row in cmp.table.iter_rows(named=True):
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
        pq = table.filter((pl.col("run_id") == row["run_id"]) & (pl.col("query_id") != "all"))
        x = np.concatenate([pq["value"].to_numpy(), [0.0]])  # query 101: no run has it
        lo, hi = _scipy_interval(x, 0.95)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
