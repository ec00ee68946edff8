"""Paired significance tests and multiple-comparison corrections for one pair of systems.

The tests take the per-query differences ``d = x - y`` of two systems over
the queries both have (the caller decides which queries those are):

* ``t``: the two-sided paired t-test, ``t = mean(d) / (sd(d) / sqrt(n))``,
  ``n - 1`` degrees of freedom (scipy's ``ttest_rel``). When every difference
  is 0 the p-value is 1 (scipy returns NaN there); when the differences are
  constant and not 0, it is 0.
* ``wilcoxon``: the two-sided Wilcoxon signed-rank test. Zero differences are
  dropped (Wilcoxon's rule, scipy's ``zero_method="wilcox"``); tied absolute
  differences get their average rank. With at most 50 non-zero differences,
  no zero difference and no tie, the p-value is exact
  (``2 min(P(W+ >= w), P(W+ <= w))``, capped at 1); otherwise the normal
  approximation with the tie correction of the variance and no continuity
  correction (scipy's ``method="asymptotic"``). scipy's ``method="auto"``
  differs only for ties or zeros among at most 13 differences, where it runs a
  permutation test instead. Every difference 0: p = 1.
* ``randomization`` (Fisher's sign-flip test) and ``bootstrap`` (Sakai's
  ASL over the centred differences): the kernels of
  :mod:`fasteval.analysis.meta`, seeded; the p-value is
  ``(hits + 1) / (B + 1)`` (Phipson & Smyth 2010), so it is never 0 and its
  smallest value, ``1 / (B + 1)``, is printed as that bound. Ties: a sign
  flip ``s`` is a hit when ``|sum s_i d_i| >= |sum d_i| - 1e-9 sum |d_i|``.
  Discrete measures (P@k, RR) make many flips tie *exactly* with the
  observed statistic, but the float sums of a flip and of the observed
  differences round differently, so a comparison without tolerance drops
  some of those ties and under-estimates p (ranx compares differences of
  means that way). With the tolerance, the test run over all ``2^n`` flips
  equals the exact count in integers (checked for ``n <= 12`` in
  ``tests/unit/test_fisher_exact.py``).
* ``tukey`` (Tukey's honestly significant difference, Tukey-Kramer for
  unequal sizes): not a paired test; all runs of one measure are the groups
  of a one-way layout, ``q_ij = |mean_i - mean_j| / sqrt(MSE / 2 (1/n_i +
  1/n_j))`` with ``MSE`` the pooled within-run variance on ``N - k``
  degrees of freedom, and ``p_ij = P(Q_{k, N-k} >= q_ij)`` from the
  studentized range distribution (scipy's, as ``scipy.stats.tukey_hsd`` and
  ranx's ``compare(stat_test="tukey")`` compute it). It controls the
  family-wise error over all pairs itself, so no further correction applies.

Corrections (``holm``, ``bonferroni``, ``bh``, ``none``) adjust the p-values of
one family; NaN p-values (a pair with fewer than 2 common queries) are left
out of the family and stay NaN.

References
----------
Smucker, M. D., Allan, J., & Carterette, B. (2007). A comparison of statistical
significance tests for information retrieval evaluation. CIKM '07.
Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero.
Statistical Applications in Genetics and Molecular Biology 9(1).
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
Tukey, J. W. (1949). Comparing individual means in the analysis of variance.
Biometrics 5(2); Kramer, C. Y. (1956). Extension of multiple range tests to
group means with unequal numbers of replications. Biometrics 12(3).
Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate.
"""

from __future__ import annotations

import math

import numpy as np

from fasteval.analysis import meta
from fasteval.errors import ParameterError

TESTS = ("t", "wilcoxon", "randomization", "bootstrap", "tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
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
MONTE_CARLO = ("randomization", "bootstrap")


def test_name(test: str) -> str:
    """The canonical name of a paired test: t, wilcoxon, randomization or bootstrap."""
    t = str(test).lower().strip()
    t = _TEST_ALIASES.get(t, t)
    if t not in TESTS:
        msg = f"unknown test {test!r}; choose one of {', '.join(TESTS)}"
        raise ParameterError(msg)
    return t


def correction_name(correction: str | None) -> str:
    """The canonical name of a correction (``holm``, ``bonferroni``, ``bh``, ``none``)."""
    c = "none" if correction is None else str(correction).lower().strip()
    c = _CORR_ALIASES.get(c, c)
    if c not in CORRECTIONS:
        msg = f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}"
        raise ParameterError(msg)
    return c


def paired_t(d: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test on differences ``d`` (NaN if ``n < 2``).

    ``t = mean(d) / (s / sqrt(n))`` with ``s`` the sample standard deviation;
    ``p = P(|T_{n-1}| >= |t|)``. All differences 0: 1.0; constant non-zero
    differences: 0.0.
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
    return float(meta.student_t_sf2(np.array([t]), n - 1.0)[0])


def _average_ranks(a: np.ndarray) -> tuple[np.ndarray, bool]:
    """Ranks 1..n of ``a`` with ties averaged; and whether there was a tie."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    n = s.shape[0]
    ranks = np.empty(n, np.float64)
    i = 0
    tied = False
    while i < n:
        j = i
        while j + 1 < n and s[j + 1] == s[i]:
            j += 1
        if j > i:
            tied = True
        ranks[order[i : j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    return ranks, tied


def _signed_rank_counts(n: int) -> np.ndarray:
    """``c[w]`` = number of sign assignments of ranks 1..n whose positive ranks sum to ``w``."""
    top = n * (n + 1) // 2
    c = np.zeros(top + 1, np.float64)
    c[0] = 1.0
    for k in range(1, n + 1):
        c[k:] = c[k:] + c[: top + 1 - k].copy()
    return c


def wilcoxon(d: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test on differences ``d``.

    Zero differences are dropped; ties get average ranks; exact null
    distribution for at most 50 differences without zeros or ties, else the
    normal approximation with tie correction (no continuity correction).
    Every difference 0 gives 1.0, no difference at all NaN.
    """
    d = np.asarray(d, np.float64)
    if d.shape[0] == 0:
        return math.nan
    nz = d[d != 0.0]
    n = nz.shape[0]
    if n == 0:
        return 1.0
    ranks, tied = _average_ranks(np.abs(nz))
    r_plus = float(ranks[nz > 0].sum())
    if n <= 50 and not tied and n == d.shape[0]:
        counts = _signed_rank_counts(n)
        total = 2.0**n
        w = round(r_plus)
        cdf = counts[: w + 1].sum() / total
        sf = counts[w:].sum() / total
        return float(min(1.0, 2.0 * min(cdf, sf)))
    mn = n * (n + 1) * 0.25
    _, counts_t = np.unique(np.abs(nz), return_counts=True)
    tie = float((counts_t.astype(np.float64) ** 3 - counts_t).sum())
    se = math.sqrt((n * (n + 1) * (2 * n + 1) - tie / 2.0) / 24.0)
    if se == 0.0:
        return 1.0
    z = (r_plus - mn) / se
    return float(math.erfc(abs(z) / math.sqrt(2.0)))


def monte_carlo(d: np.ndarray, test: str, B: int, seed: int) -> tuple[float, int]:
    """``((hits + 1) / (B + 1), hits)`` of the randomisation or bootstrap test.

    Uses the kernels of :func:`fasteval.analysis.meta.pair_tests` on the
    pair ``(d, 0)``: the sign flips / resamples depend only on ``n`` and
    ``seed``, so pairs with the same number of queries share them.
    """
    d = np.asarray(d, np.float64)
    n = d.shape[0]
    if n < 2:
        return math.nan, 0
    X = np.vstack([d, np.zeros(n)])
    pairs = (np.array([0]), np.array([1]))
    if test == "randomization":
        res = meta.pair_tests(X, B=0, R=B, seed=seed, pairs=pairs)
        p = float(res["p_randomisation"][0])
    else:
        res = meta.pair_tests(X, B=B, R=0, seed=seed, pairs=pairs)
        p = float(res["p_bootstrap"][0])
    hits = round(p * B)
    return (hits + 1) / (B + 1), hits


def p_value(d: np.ndarray, test: str, *, B: int = 9999, seed: int = 0) -> float:
    """Two-sided p-value of ``test`` on the paired differences ``d``."""
    t = test_name(test)
    if t == "t":
        return paired_t(d)
    if t == "wilcoxon":
        return wilcoxon(d)
    return monte_carlo(d, t, B, seed)[0]


def tukey_hsd(groups: list[np.ndarray]) -> np.ndarray:
    """``(k, k)`` p-values of Tukey's HSD (Tukey-Kramer) between ``k`` groups of values.

    ``p[i, j] = P(Q >= |m_i - m_j| / sqrt(MSE / 2 (1/n_i + 1/n_j)))``, ``Q``
    the studentized range of ``k`` means on ``N - k`` degrees of freedom
    (``scipy.stats.studentized_range``, imported here: scipy is the
    ``stats`` extra). The diagonal is 1. NaN when there are no degrees of
    freedom; a pooled variance of 0 gives 0 for different means, 1 for equal.
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
    try:
        from scipy.stats import studentized_range  # noqa: PLC0415 (optional: stats extra)
    except ImportError:  # pragma: no cover - scipy is in the test extra
        msg = "Tukey's HSD needs scipy: pip install 'fasteval[stats]'"
        raise ParameterError(msg) from None
    means = np.array([x.mean() for x in xs])
    mse = float(sum(((x - x.mean()) ** 2).sum() for x in xs)) / dof
    ii, jj = np.triu_indices(k, 1)
    diff = np.abs(means[ii] - means[jj])
    se = np.sqrt(mse / 2.0 * (1.0 / n[ii] + 1.0 / n[jj]))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, 0.0))
    p = np.asarray(studentized_range.sf(q, k, dof), np.float64)
    p = np.where(np.isinf(q), 0.0, np.where(q == 0, 1.0, p))
    out[ii, jj] = p
    out[jj, ii] = p
    return out


def bonferroni(p: np.ndarray) -> np.ndarray:
    """Bonferroni adjusted p-values ``min(1, m p)``."""
    p = np.asarray(p, np.float64)
    out: np.ndarray = np.minimum(p * p.shape[0], 1.0)
    return out


def adjust(p: np.ndarray, correction: str) -> np.ndarray:
    """Adjust one family of p-values; NaN entries are not part of the family."""
    c = correction_name(correction)
    p = np.asarray(p, np.float64)
    out = p.copy()
    ok = ~np.isnan(p)
    if c == "none" or not ok.any():
        return out
    fn = {"holm": meta.holm, "bonferroni": bonferroni, "bh": meta.benjamini_hochberg}[c]
    out[ok] = fn(p[ok])
    return out
