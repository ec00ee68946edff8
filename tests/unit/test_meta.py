"""Meta-evaluation: significance kernels vs a slow reference and scipy; correlation tables."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.special
import scipy.stats

from fasteval import evaluate
from fasteval.analysis import correlation as corr
from fasteval.analysis import meta, statistics
from tests.conftest import SAMPLE_DATA as DATA
from tests.reference import significance as ref


def _matrix(seed: int, n_sys: int = 7, n_q: int = 13) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.random((n_sys, n_q)).round(2)  # rounding makes ties
    X[1] = X[0]  # identical systems
    X[2] = X[0] + 0.25  # constant difference
    return X


@pytest.mark.parametrize("seed", range(6))
def test_pair_tests_match_reference(seed: int) -> None:
    X = _matrix(seed)
    B, R = 300, 200
    res = statistics.pair_tests(X, B=B, R=R, seed=seed)
    idx = statistics.resamples(X.shape[1], B, seed).tolist()
    signs = statistics.sign_flips(X.shape[1], R, seed).tolist()
    for k, (a, b) in enumerate(zip(res["a"], res["b"], strict=True)):
        x, y = X[a].tolist(), X[b].tolist()
        assert res["t"][k] == ref.t_stat([u - v for u, v in zip(x, y, strict=True)])
        hits = ref.bootstrap_hits(x, y, idx)
        assert res["hits_bootstrap"][k] == hits
        assert res["p_bootstrap"][k] == ref.monte_carlo_p(hits, B)
        hits = ref.randomisation_hits(x, y, signs, statistics.RAND_TOL)
        assert res["hits_randomisation"][k] == hits
        assert res["p_randomisation"][k] == ref.monte_carlo_p(hits, R)
    # the degenerate pairs: identical systems never differ; a constant shift always
    # does, and its p-value is the smallest possible, 1 / (B + 1), never 0
    k01 = int(np.flatnonzero((res["a"] == 0) & (res["b"] == 1))[0])
    k02 = int(np.flatnonzero((res["a"] == 0) & (res["b"] == 2))[0])
    assert res["p_bootstrap"][k01] == 1.0
    assert res["p_bootstrap"][k02] == 1 / (B + 1)


def test_t_test_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(9, 25))
    res = statistics.pair_tests(X, B=0, R=0)
    for k, (a, b) in enumerate(zip(res["a"], res["b"], strict=True)):
        st = scipy.stats.ttest_rel(X[a], X[b])
        assert res["t"][k] == pytest.approx(st.statistic, rel=1e-12)
        assert res["p_t"][k] == pytest.approx(st.pvalue, rel=1e-9, abs=1e-15)
    assert np.isnan(res["p_bootstrap"]).all()
    assert np.isnan(res["p_randomisation"]).all()


@pytest.mark.parametrize("df", [1.0, 4.0, 29.0, 49.0, 200.0])
def test_student_t_matches_the_incomplete_beta(df: float) -> None:
    # P(|T| >= t) = I_{df/(df+t^2)}(df/2, 1/2): another route than stdtr; it loses
    # digits as t -> 0 (x next to 1), so only moderate t are compared tightly
    t = np.array([0.01, 0.5, 1.0, 2.0, 3.5, 10.0, 40.0])
    want = scipy.special.betainc(df / 2, 0.5, df / (df + t * t))
    np.testing.assert_allclose(statistics.student_t_sf2(t, df), want, rtol=1e-9, atol=1e-300)
    assert statistics.student_t_sf2(np.array([0.0, np.inf, -np.inf]), df).tolist() == [1, 0, 0]


def test_student_t_quantiles_from_the_table() -> None:
    # two-sided 5% critical values of Student's t (any statistics table)
    for df, q in ((1, 12.7062), (4, 2.7764), (9, 2.2622), (29, 2.0452), (120, 1.9799)):
        assert statistics.student_t_ppf(0.975, df) == pytest.approx(q, abs=5e-5)


@pytest.mark.parametrize("seed", range(20))
def test_wilcoxon_exact_equals_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    d = rng.permutation(np.arange(1, n + 1)) * 0.1 * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    assert statistics.wilcoxon_method(d) == "exact"
    assert statistics.wilcoxon(d) == pytest.approx(ref.wilcoxon_exact(d.tolist()), rel=1e-12)


def test_adjustments_match_reference() -> None:
    rng = np.random.default_rng(5)
    p = rng.random(40) ** 3
    p[3] = p[7]  # a tie
    np.testing.assert_allclose(statistics.holm(p), ref.holm(p.tolist()), rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        statistics.benjamini_hochberg(p), ref.benjamini_hochberg(p.tolist()), rtol=0, atol=1e-15
    )


def test_significance_and_power_tables() -> None:
    table = evaluate(DATA / "sample.qrels", DATA / "sample_runs.parquet", ["map", "P_10"])
    sig = meta.significance(table, "map", B=200, R=200, seed=1)
    n_runs = table["run_id"].n_unique()
    assert sig.height == n_runs * (n_runs - 1) // 2
    assert {"p_bootstrap_holm", "p_t_bh", "p_randomisation_holm"} <= set(sig.columns)
    assert (sig["p_bootstrap_holm"] >= sig["p_bootstrap"]).all()
    # the Monte Carlo p-values are (hits + 1) / (B + 1), as in compare: never 0
    assert sig["p_bootstrap"].min() >= 1 / 201 and sig["p_randomisation"].min() >= 1 / 201
    dp = meta.discriminative_power(table, ["map", "P_10"], B=200, seed=1)
    assert dp["pairs"].to_list() == [sig.height] * 2
    want = float((sig["p_bootstrap"] < 0.05).mean())
    assert dp.filter(dp["measure"] == "map")["discriminative_power"][0] == want
    # same seed, same answer; another seed, resamples differ
    again = meta.significance(table, "map", B=200, R=200, seed=1)
    assert again.equals(sig)


def test_correlation_table() -> None:
    table = evaluate(DATA / "sample.qrels", DATA / "sample_runs.parquet", ["map", "P_10", "ndcg"])
    ct = meta.correlation_table(table, top_k=4)
    assert ct.height == 6 * 2
    all_rows = table.filter(table["query_id"] == "all")
    a = all_rows.filter(all_rows["measure"] == "map")["value"].to_numpy()
    b = all_rows.filter(all_rows["measure"] == "ndcg")["value"].to_numpy()
    row = ct.filter(
        (ct["measure_a"] == "map") & (ct["measure_b"] == "ndcg") & (ct["systems"] == "all")
    )
    assert row["kendall_tau_b"][0] == corr.kendall_tau(a, b, "b")
    assert row["tau_ap"][0] == corr.tau_ap(a, b)
    top = ct.filter(
        (ct["measure_a"] == "map") & (ct["measure_b"] == "ndcg") & (ct["systems"] == "top 4")
    )
    sel = np.argsort(-a, kind="stable")[:4]
    assert top["n"][0] == 4
    assert top["spearman"][0] == corr.spearman(a[sel], b[sel])


def test_scipy_is_imported_only_when_a_test_runs() -> None:
    """scipy.stats takes ~0.5 s to import: the statistics load it when they are called."""
    code = (
        "import sys\n"
        "import fasteval.analysis.meta, fasteval.analysis.statistics, fasteval.comparison\n"
        "import fasteval.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy.stats', 'scipy.special'))))\n"
        "from fasteval.analysis import statistics\n"
        "statistics.paired_t([0.1, 0.3, -0.2])\n"
        "print('scipy.special' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]


@pytest.mark.parametrize("df", [3.0, 24.0, 191.0, 1000.0])
def test_student_t_near_zero_is_one_minus_twice_the_density(df: float) -> None:
    """p(t) = 1 - 2 f(0) t + O(t^3): where the former continued fraction lost digits."""
    f0 = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    for t in (1e-9, 6e-7, 1e-5):
        want = 1.0 - 2.0 * f0 * t
        assert statistics.student_t_sf2(np.array([t]), df)[0] == pytest.approx(want, rel=1e-13)
