"""Tukey's HSD in compare against scipy.stats.tukey_hsd and statsmodels' pairwise_tukeyhsd."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fasteval.analysis import statistics as sg
from fasteval.analysis.comparison import compare_table

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(2, 6), st.integers(3, 30), st.integers(0, 2**31 - 1), st.booleans())
def test_tukey_equals_scipy(k, n, seed, unequal):
    rng = np.random.default_rng(seed)
    groups = [
        rng.normal(rng.normal(0, 0.5), 1.0, n + (int(rng.integers(0, 5)) if unequal else 0))
        for _ in range(k)
    ]
    want = scipy_stats.tukey_hsd(*groups).pvalue
    np.testing.assert_allclose(sg.tukey_hsd(groups), want, rtol=1e-10, atol=1e-12)


def _table(X: np.ndarray, runs: list[str]) -> pl.DataFrame:
    rows = [
        (r, f"q{j}", "P@5", float(X[i, j])) for i, r in enumerate(runs) for j in range(X.shape[1])
    ]
    return pl.DataFrame(rows, schema=["run_id", "query_id", "measure", "value"], orient="row")


def test_compare_tukey_equals_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.multicomp")
    rng = np.random.default_rng(5)
    runs = ["a", "b", "c", "d"]
    X = np.round(rng.uniform(0, 1, (4, 25)) * 5) / 5  # P@5-like values
    X[1] = np.clip(X[1] + 0.2, 0, 1)
    cmp = compare_table(_table(X, runs), test="tukey", correction="holm")
    res = sm.pairwise_tukeyhsd(X.ravel(), np.repeat(runs, 25))
    g = res.groupsunique
    pairs = [(g[i], g[j]) for i, j in zip(*np.triu_indices(4, 1), strict=True)]
    want = dict(zip(pairs, res.pvalues, strict=True))
    got = cmp.table.filter(pl.col("p_value").is_not_null())
    assert got.height == 6
    for r in got.iter_rows(named=True):
        key = tuple(sorted((r["run_id"], r["baseline"])))
        # statsmodels reports p to about 1e-3 (its own studentized-range table)
        assert abs(r["p_value"] - want[key]) < 2e-3, (key, r["p_value"], want[key])
        assert r["p_corrected"] == r["p_value"]  # no further correction
    assert cmp.correction == "none"
    assert "Tukey" in cmp.to_text()


def test_compare_tukey_with_a_baseline_uses_all_runs():
    rng = np.random.default_rng(1)
    runs = ["a", "b", "c"]
    X = rng.uniform(0, 1, (3, 20))
    cmp = compare_table(_table(X, runs), baseline="a", test="tukey")
    want = scipy_stats.tukey_hsd(*X).pvalue
    got = cmp.table.filter(pl.col("run_id") != "a")
    for r in got.iter_rows(named=True):
        np.testing.assert_allclose(r["p_value"], want[runs.index(r["run_id"]), 0], rtol=1e-10)


def test_cli_compare_takes_tukey(tmp_path):
    from fasteval.cli import main

    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d < 2)}\n" for q in range(6) for d in range(4)))
    paths = []
    rng = np.random.default_rng(0)
    for r in ("x", "y", "z"):
        p = tmp_path / f"{r}.run"
        p.write_text(
            "".join(
                f"{q} Q0 d{d} {i} {s:.3f} {r}\n"
                for q in range(6)
                for i, (d, s) in enumerate(zip(rng.permutation(4), [4.0, 3, 2, 1], strict=True))
            )
        )
        paths.append(str(p))
    res = CliRunner().invoke(main, ["compare", str(qrels), *paths, "--test", "tukey"])
    assert res.exit_code == 0, res.output
    assert "Tukey" in res.output
