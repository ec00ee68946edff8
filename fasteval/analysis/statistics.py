"""Statistics: paired tests, Tukey's HSD, multiple-comparison corrections, resampling.

The one module the meta-evaluation (:mod:`fasteval.analysis.meta`) and the
comparison of runs (:mod:`fasteval.analysis.comparison`) take their tests from.
The tests take the per-query differences ``d = x - y`` of two systems over the
queries both have (the caller decides which queries those are):

* ``t``: the two-sided paired t-test, ``t = mean(d) / (sd(d) / sqrt(n))``,
  ``n - 1`` degrees of freedom, ``p = P(|T| >= |t|)`` (scipy's ``stdtr``, as
  ``ttest_rel`` computes it). When every difference is 0 the p-value is 1
  (scipy returns NaN there); when the differences are constant and not 0, it is 0.
* ``wilcoxon``: the two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon``).
  Zero differences are dropped (``zero_method="wilcox"``); tied absolute
  differences get their average rank. With at most 50 non-zero differences, no
  zero difference and no tie, the p-value is exact (``method="exact"``:
  ``2 min(P(W+ >= w), P(W+ <= w))``, capped at 1); otherwise the normal
  approximation with the tie correction of the variance and no continuity
  correction (``method="asymptotic"``). scipy's ``method="auto"`` differs only
  for ties or zeros among at most 13 differences, where it runs a permutation
  test instead. Every difference 0: p = 1.
* ``randomization`` (Fisher's sign-flip test) and ``bootstrap`` (Sakai's ASL
  over the centred differences): the numba kernels of
  :mod:`fasteval.kernels.bootstrap`, seeded, over all pairs of systems at once
  (:func:`pair_tests`). The p-value is :func:`monte_carlo_p`,
  ``(hits + 1) / (B + 1)`` (Phipson & Smyth 2010), so it is never 0 and its
  smallest value is ``1 / (B + 1)``. Ties: a sign flip ``s`` is a hit when
  ``|sum s_i d_i| >= |sum d_i| - 1e-9 sum |d_i|``. Discrete measures (P@k, RR)
  make many flips tie *exactly* with the observed statistic, but the float sums
  of a flip and of the observed differences round differently, so a comparison
  without tolerance drops some of those ties and under-estimates p (ranx
  compares differences of means that way). With the tolerance, the test run
  over all ``2^n`` flips equals the exact count in integers (checked for
  ``n <= 12`` in ``tests/unit/test_fisher_exact.py``).
* ``tukey`` (Tukey's honestly significant difference, Tukey-Kramer for unequal
  sizes): not a paired test; all runs of one measure are the groups of a
  one-way layout, ``q_ij = |mean_i - mean_j| / sqrt(MSE / 2 (1/n_i + 1/n_j))``
  with ``MSE`` the pooled within-run variance on ``N - k`` degrees of freedom,
  and ``p_ij = P(Q_{k, N-k} >= q_ij)`` from scipy's studentized range
  distribution (as ``scipy.stats.tukey_hsd`` and ranx's
  ``compare(stat_test="tukey")`` compute it). It controls the family-wise error
  over all pairs itself, so no further correction applies.

Corrections (``holm``, ``bonferroni``, ``bh``, ``none``) adjust the p-values of
one family; NaN p-values (a pair with fewer than 2 common queries) are left out
of the family and stay NaN. Benjamini-Hochberg is scipy's
``false_discovery_control``; scipy has no Holm or Bonferroni, which are three
lines of numpy here (checked against statsmodels' ``multipletests``).

scipy is imported inside the functions that need it: importing this module
(and ``fasteval eval``) does not load it.

What stays numpy or numba, and why (the timings: benchmarks/RESULTS.md,
"Figures moved out of the code"):

* :func:`pair_tests` (bootstrap and randomisation together) stays a numba
  kernel: ``scipy.stats.permutation_test`` is far slower per pair, and
  discriminative power runs it over thousands of pairs.
* the t distribution is ``scipy.special.stdtr`` / ``stdtrit``, much faster than
  the former hand-written incomplete beta (a continued fraction in numpy) and
  its bisection for the quantile. Against it on 100,000 random ``(t, df)``: for
  ``|t| >= 0.01`` and ``p > 1e-100`` within 5.7e-12 relative; for smaller ``|t|``
  up to 1.9e-7, where ``I_x(df/2, 1/2)`` with ``x = df / (df + t^2)`` next to 1 lost digits and
  ``stdtr`` keeps them (``p = 1 - 2 f(0) |t|`` to first order, checked in
  ``tests/unit/test_meta.py``; it is also the value ``ttest_rel`` reports).
  Quantiles: at most 1e-12 apart (the bisection's own precision).
* Wilcoxon against the former hand-written test on 5,000 random difference
  vectors with ties and zeros: exact p-values identical, the normal
  approximation within 2.5e-15 relative.

References
----------
Smucker, M. D., Allan, J., & Carterette, B. (2007). A comparison of statistical
significance tests for information retrieval evaluation. CIKM '07.
Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR '06.
Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero.
Statistical Applications in Genetics and Molecular Biology 9(1).
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate.
Tukey, J. W. (1949). Comparing individual means in the analysis of variance.
Biometrics 5(2); Kramer, C. Y. (1956). Extension of multiple range tests to
group means with unequal numbers of replications. Biometrics 12(3).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fasteval import parallel
from fasteval.errors import ParameterError
from fasteval.kernels import bootstrap as kb

TESTS = ("t", "wilcoxon", "randomization", "bootstrap", "tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
MONTE_CARLO = ("randomization", "bootstrap")
RAND_TOL = 1e-9
"""Relative tolerance of a sign flip's tie with the observed statistic (see above)."""

_TEST_ALIASES = {
    "ttest": "t",
    "t-test": "t",
    "student": "t",
    "randomisation": "randomization",
    "permutation": "randomization",
    "fisher": "randomization",
    "signed-rank": "wilcoxon",
    "hsd": "tukey",
    "tukey-hsd": "tukey",
    "tukey_hsd": "tukey",
}
_CORR_ALIASES = {
    "benjamini-hochberg": "bh",
    "fdr_bh": "bh",
    "fdr": "bh",
    "bonf": "bonferroni",
    "holm-bonferroni": "holm",
    "": "none",
}


def _scipy_special() -> Any:
    import scipy.special  # noqa: PLC0415 (lazy: `fasteval eval` does not load scipy)

    return scipy.special


def _scipy_stats() -> Any:
    import scipy.stats  # noqa: PLC0415 (lazy: `fasteval eval` does not load scipy)

    return scipy.stats


# --------------------------------------------------------------------------- names


def test_name(test: str) -> str:
    """The canonical name of a test (one of :data:`TESTS`).

    Parameters
    ----------
    test
        A name or an alias (``ttest``, ``fisher``, ``permutation``, ``hsd``, ...).

    Returns
    -------
    str
        One of :data:`TESTS`.
    """
    t = str(test).lower().strip()
    t = _TEST_ALIASES.get(t, t)
    if t not in TESTS:
        msg = f"unknown test {test!r}; choose one of {', '.join(TESTS)}"
        raise ParameterError(msg)
    return t


def correction_name(correction: str | None) -> str:
    """The canonical name of a correction: ``holm``, ``bonferroni``, ``bh`` or ``none``.

    Parameters
    ----------
    correction
        A name or an alias (``fdr_bh``, ``benjamini-hochberg``, ``bonf``, ...);
        ``None`` is ``none``.

    Returns
    -------
    str
        One of :data:`CORRECTIONS`.
    """
    c = "none" if correction is None else str(correction).lower().strip()
    c = _CORR_ALIASES.get(c, c)
    if c not in CORRECTIONS:
        msg = f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}"
        raise ParameterError(msg)
    return c


# --------------------------------------------------------------------------- distributions


def student_t_sf2(t: np.ndarray, df: float) -> np.ndarray:
    """Two-sided p-value ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom.

    Parameters
    ----------
    t
        t statistics (``+-inf`` give 0).
    df
        Degrees of freedom.

    Returns
    -------
    numpy.ndarray
        ``2 * scipy.special.stdtr(df, -|t|)``, float64.
    """
    t = np.asarray(t, dtype=np.float64)
    out: np.ndarray = 2.0 * _scipy_special().stdtr(df, -np.abs(t))
    return out


def student_t_ppf(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom.

    Parameters
    ----------
    q
        Probability in (0, 1).
    df
        Degrees of freedom.

    Returns
    -------
    float
        ``scipy.special.stdtrit(df, q)``.
    """
    return float(_scipy_special().stdtrit(df, q))


# --------------------------------------------------------------------------- one pair


def paired_t(d: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test on differences ``d``.

    Parameters
    ----------
    d
        Per-query differences.

    Returns
    -------
    float
        ``P(|T_{n-1}| >= |t|)``, ``t = mean(d) / (s / sqrt(n))`` with ``s`` the
        sample standard deviation. All differences 0: 1.0; constant non-zero
        differences: 0.0; fewer than 2 differences: NaN.
    """
    d = np.asarray(d, np.float64)
    n = d.shape[0]
    if n < 2:
        return math.nan
    mean = float(d.mean())
    sq = float(((d - mean) ** 2).sum())
    if sq <= 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / (math.sqrt(sq / (n - 1)) / math.sqrt(n))
    return float(student_t_sf2(np.array([t]), n - 1.0)[0])


def wilcoxon_method(d: np.ndarray) -> str:
    """scipy's ``method`` our rule picks: ``exact`` or ``asymptotic``.

    Parameters
    ----------
    d
        Per-query differences.

    Returns
    -------
    str
        ``"exact"`` for at most 50 differences, none 0 and no tied absolute
        value; else ``"asymptotic"``.
    """
    d = np.asarray(d, np.float64)
    nz = d[d != 0.0]
    n_distinct = np.unique(np.abs(nz)).shape[0]
    if d.shape[0] <= 50 and nz.shape[0] == d.shape[0] and n_distinct == nz.shape[0]:
        return "exact"
    return "asymptotic"


def wilcoxon(d: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test on differences ``d``.

    Parameters
    ----------
    d
        Per-query differences.

    Returns
    -------
    float
        ``scipy.stats.wilcoxon`` with zeros dropped, no continuity correction and
        :func:`wilcoxon_method`. Every difference 0 gives 1.0, no difference NaN.
    """
    d = np.asarray(d, np.float64)
    if d.shape[0] == 0:
        return math.nan
    if not (d != 0.0).any():
        return 1.0
    res = _scipy_stats().wilcoxon(
        d, zero_method="wilcox", correction=False, method=wilcoxon_method(d)
    )
    return float(res.pvalue)


def monte_carlo(d: np.ndarray, test: str, B: int, seed: int) -> tuple[float, int]:
    """The randomisation or bootstrap test of one pair: ``(p, hits)``.

    Parameters
    ----------
    d
        Per-query differences.
    test
        ``randomization`` or ``bootstrap``.
    B
        Sign flips or resamples.
    seed
        Their seed: the flips / resamples depend only on ``n`` and ``seed``, so
        pairs with the same number of queries share them.

    Returns
    -------
    tuple of (float, int)
        :func:`monte_carlo_p` of the hits, and the hits (NaN, 0 for ``n < 2``).
    """
    d = np.asarray(d, np.float64)
    n = d.shape[0]
    if n < 2:
        return math.nan, 0
    X = np.vstack([d, np.zeros(n)])
    pairs = (np.array([0]), np.array([1]))
    if test_name(test) == "randomization":
        res = pair_tests(X, B=0, R=B, seed=seed, pairs=pairs)
        return float(res["p_randomisation"][0]), int(res["hits_randomisation"][0])
    res = pair_tests(X, B=B, R=0, seed=seed, pairs=pairs)
    return float(res["p_bootstrap"][0]), int(res["hits_bootstrap"][0])


def p_value(d: np.ndarray, test: str, *, B: int = 9999, seed: int = 0) -> float:
    """Two-sided p-value of a paired ``test`` on the differences ``d``.

    Parameters
    ----------
    d
        Per-query differences.
    test
        ``t``, ``wilcoxon``, ``randomization`` or ``bootstrap`` (or an alias).
    B, seed
        Resamples and seed of the Monte Carlo tests.

    Returns
    -------
    float
        The p-value (NaN for fewer than 2 differences, where a test needs 2).
    """
    t = test_name(test)
    if t == "t":
        return paired_t(d)
    if t == "wilcoxon":
        return wilcoxon(d)
    if t == "tukey":
        msg = "Tukey's HSD is not a paired test: use tukey_hsd on the groups"
        raise ParameterError(msg)
    return monte_carlo(d, t, B, seed)[0]


# --------------------------------------------------------------------------- intervals


def t_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    r"""The Student t confidence interval of the mean of ``x``.

    .. math:: \bar{x} \pm t_{(1+\mathrm{level})/2,\, n-1} \, s / \sqrt{n}

    with :math:`s` the sample standard deviation (``ddof = 1``), as
    ``scipy.stats.t.interval(level, n - 1, loc=mean, scale=sem)``.

    Parameters
    ----------
    x
        The values (e.g. one run's per-query values, or paired differences).
    level
        Confidence level in (0, 1).

    Returns
    -------
    tuple of (float, float)
        ``(low, high)``; NaN for fewer than 2 values. Constant values give
        the point ``(mean, mean)``.

    References
    ----------
    Student (1908). The probable error of a mean. Biometrika 6(1).
    """
    x = np.asarray(x, np.float64)
    n = x.shape[0]
    if n < 2:
        return math.nan, math.nan
    mean = float(x.mean())
    sd = float(x.std(ddof=1))
    half = student_t_ppf((1.0 + level) / 2.0, n - 1.0) * sd / math.sqrt(n)
    return mean - half, mean + half


def cohens_dz(d: np.ndarray) -> float:
    r"""Cohen's :math:`d_z`, the standardised mean of paired differences.

    .. math:: d_z = \bar{d} / s_d

    with :math:`s_d` the sample standard deviation of the differences
    (``ddof = 1``).

    Parameters
    ----------
    d
        Paired per-query differences.

    Returns
    -------
    float
        NaN for fewer than 2 differences or when they are all equal
        (:math:`s_d = 0`: the effect is not a number of standard deviations).

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences,
    2nd ed., section 2.3.5 (``d_z``); Lakens, D. (2013). Calculating and
    reporting effect sizes. Frontiers in Psychology 4:863.
    """
    d = np.asarray(d, np.float64)
    if d.shape[0] < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    return float(d.mean()) / sd if sd > 0.0 else math.nan


def check_level(level: float, name: str = "ci_level") -> float:
    """A confidence level, checked to be in (0, 1).

    Parameters
    ----------
    level
        The level.
    name
        Its parameter name, for the message.

    Returns
    -------
    float
        ``level``.
    """
    if not 0.0 < level < 1.0:
        msg = f"{name} must be in (0, 1), got {level}"
        raise ParameterError(msg)
    return float(level)


# --------------------------------------------------------------------------- many pairs


def resamples(n_queries: int, B: int, seed: int) -> np.ndarray:
    """``(B, n_queries)`` bootstrap query indices, the same for every pair.

    Parameters
    ----------
    n_queries, B, seed
        Queries per resample, resamples, seed.

    Returns
    -------
    numpy.ndarray
        int64 indices drawn with replacement.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    return rng.integers(0, n_queries, size=(B, n_queries), dtype=np.int64)


def sign_flips(n_queries: int, R: int, seed: int) -> np.ndarray:
    """``(R, n_queries)`` random signs (+-1.0) for the randomisation test.

    Parameters
    ----------
    n_queries, R, seed
        Queries per flip, flips, seed.

    Returns
    -------
    numpy.ndarray
        float64 signs.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    return np.where(rng.random((R, n_queries)) < 0.5, -1.0, 1.0)


def monte_carlo_p(hits: np.ndarray, B: int) -> np.ndarray:
    """The p-value of a Monte Carlo test from its hits: ``(hits + 1) / (B + 1)``.

    Parameters
    ----------
    hits
        Resamples (or sign flips) at least as extreme as the observed statistic.
    B
        Resamples drawn; 0 gives NaN (the test was skipped).

    Returns
    -------
    numpy.ndarray
        Never 0 (Phipson & Smyth 2010); the smallest value is ``1 / (B + 1)``.
    """
    h = np.asarray(hits, np.float64)
    if B <= 0:
        return np.full(h.shape, math.nan)
    out: np.ndarray = (h + 1.0) / (B + 1.0)
    return out


def _check_matrix(X: np.ndarray, B: int, R: int) -> np.ndarray:
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 2:
        msg = f"need a (systems, queries) matrix with >= 2 queries, got shape {X.shape}"
        raise ParameterError(msg)
    if B < 0 or R < 0:
        msg = f"B and R must be >= 0, got B={B}, R={R}"
        raise ParameterError(msg)
    if np.isnan(X).any():
        msg = "per-query values contain NaN"
        raise ParameterError(msg)
    return X


def pair_tests(
    X: np.ndarray,
    *,
    B: int = 1000,
    R: int = 1000,
    seed: int = 0,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Paired tests for pairs of rows of ``X`` (``(n_systems, n_queries)``).

    Parameters
    ----------
    X
        Per-query values, one row per system, no NaN.
    B, R
        Bootstrap resamples and randomisation sign flips (0 skips a test).
    seed
        Seed of the resamples and flips (the same for every pair).
    pairs
        ``(a, b)`` row indices of the pairs (default: every ``i < j``).

    Returns
    -------
    dict of str to numpy.ndarray
        Per pair: ``a``, ``b``, ``mean_diff``, ``t``, ``p_t`` (two-sided paired
        t-test), ``hits_randomisation`` / ``p_randomisation`` (``R`` sign flips)
        and ``hits_bootstrap`` / ``p_bootstrap`` (Sakai's test from ``B``
        resamples of the centred differences); the p-values are
        :func:`monte_carlo_p` of the hits (NaN for a skipped test).
    """
    X = _check_matrix(X, B, R)
    ia, ib = np.triu_indices(X.shape[0], k=1) if pairs is None else pairs
    pa = np.ascontiguousarray(ia, dtype=np.int64)
    pb = np.ascontiguousarray(ib, dtype=np.int64)
    n_pairs = pa.shape[0]
    n = X.shape[1]
    t = np.empty(n_pairs)
    share_boot = np.empty(n_pairs)
    share_rand = np.empty(n_pairs)
    parallel.run(
        kb.paired_tests,
        np.full(n_pairs, float(n * (B + R + 1))),
        X,
        pa,
        pb,
        resamples(n, B, seed),
        sign_flips(n, R, seed),
        RAND_TOL,
        t,
        share_boot,
        share_rand,
    )
    # the kernel gives the share of hits; back to counts (exact: B, R < 2^52)
    hits_boot = np.rint(np.nan_to_num(share_boot) * B).astype(np.int64)
    hits_rand = np.rint(np.nan_to_num(share_rand) * R).astype(np.int64)
    return {
        "a": pa,
        "b": pb,
        "mean_diff": X[pa].mean(axis=1) - X[pb].mean(axis=1),
        "t": t,
        "p_t": student_t_sf2(t, n - 1.0),
        "hits_randomisation": hits_rand,
        "p_randomisation": monte_carlo_p(hits_rand, R),
        "hits_bootstrap": hits_boot,
        "p_bootstrap": monte_carlo_p(hits_boot, B),
    }


# --------------------------------------------------------------------------- Tukey's HSD


def tukey_hsd(groups: list[np.ndarray]) -> np.ndarray:
    """``(k, k)`` p-values of Tukey's HSD (Tukey-Kramer) between ``k`` groups of values.

    Parameters
    ----------
    groups
        The values of each group (a run's per-query values).

    Returns
    -------
    numpy.ndarray
        ``p[i, j] = P(Q >= |m_i - m_j| / sqrt(MSE / 2 (1/n_i + 1/n_j)))``, ``Q``
        the studentized range of ``k`` means on ``N - k`` degrees of freedom
        (``scipy.stats.studentized_range``). The diagonal is 1. NaN when there
        are no degrees of freedom; a pooled variance of 0 gives 0 for different
        means, 1 for equal.
    """
    k = len(groups)
    xs = [np.asarray(g, np.float64) for g in groups]
    n = np.array([x.shape[0] for x in xs], np.float64)
    out = np.ones((k, k))
    dof = float(n.sum() - k)
    if k < 2 or dof <= 0 or (n == 0).any():
        out[:] = math.nan
        np.fill_diagonal(out, 1.0)
        return out
    means = np.array([x.mean() for x in xs])
    mse = float(sum(((x - x.mean()) ** 2).sum() for x in xs)) / dof
    ii, jj = np.triu_indices(k, 1)
    diff = np.abs(means[ii] - means[jj])
    se = np.sqrt(mse / 2.0 * (1.0 / n[ii] + 1.0 / n[jj]))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, 0.0))
    p = np.asarray(_scipy_stats().studentized_range.sf(q, k, dof), np.float64)
    p = np.where(np.isinf(q), 0.0, np.where(q == 0, 1.0, p))
    out[ii, jj] = p
    out[jj, ii] = p
    return out


# --------------------------------------------------------------------------- corrections


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate).

    Parameters
    ----------
    p
        One family of p-values (no NaN).

    Returns
    -------
    numpy.ndarray
        ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in the order of ``p``.
    """
    p = np.asarray(p, np.float64)
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate).

    Parameters
    ----------
    p
        One family of p-values (no NaN).

    Returns
    -------
    numpy.ndarray
        ``scipy.stats.false_discovery_control(p, method="bh")``.
    """
    p = np.asarray(p, np.float64)
    if p.shape[0] == 0:
        return p.copy()
    return np.asarray(_scipy_stats().false_discovery_control(p, method="bh"), np.float64)


def bonferroni(p: np.ndarray) -> np.ndarray:
    """Bonferroni adjusted p-values ``min(1, m p)``.

    Parameters
    ----------
    p
        One family of p-values (no NaN).

    Returns
    -------
    numpy.ndarray
        The adjusted p-values.
    """
    p = np.asarray(p, np.float64)
    out: np.ndarray = np.minimum(p * p.shape[0], 1.0)
    return out


def adjust(p: np.ndarray, correction: str) -> np.ndarray:
    """Adjust one family of p-values; NaN entries are not part of the family.

    Parameters
    ----------
    p
        p-values, NaN where a comparison had no test.
    correction
        ``holm``, ``bonferroni``, ``bh`` or ``none`` (or an alias).

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, NaN where ``p`` is.
    """
    c = correction_name(correction)
    p = np.asarray(p, np.float64)
    out = p.copy()
    ok = ~np.isnan(p)
    if c == "none" or not ok.any():
        return out
    fn = {"holm": holm, "bonferroni": bonferroni, "bh": benjamini_hochberg}[c]
    out[ok] = fn(p[ok])
    return out
