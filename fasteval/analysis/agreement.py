r"""Agreement between judgment sets: on the labels, on the system rankings, on significance.

:func:`fasteval.agreement` evaluates the runs once per judgment set and hands
the per-query score matrices to :func:`ranking_agreement`; the labels are
compared by :func:`label_agreement`. Everything here is numpy on small
matrices: confusion matrices of grades, and ``(systems, queries)`` scores.

Labels (pairs judged in both sets)
----------------------------------
With the confusion matrix :math:`O` of the grades (reference in rows),
:math:`n` pairs, the expected matrix :math:`E = r c^\top / n` from its row and
column sums, and a disagreement weight :math:`w`,

.. math:: \kappa_w = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}}

* ``kappa``: Cohen's :math:`\kappa` (Cohen 1960) on the labels made binary at
  the relevance level (``grade >= relevance_level``), :math:`w_{ij} = [i \ne j]`;
* ``weighted_kappa``: :math:`w_{ij} = (g_i - g_j)^2` over the grades
  :math:`g` (quadratic weights, Cohen 1968); equal to scikit-learn's
  ``cohen_kappa_score(weights="quadratic")`` given every grade from the
  smallest to the largest as ``labels``;
* ``alpha``: Krippendorff's :math:`\alpha` with the ordinal metric on the two
  judges' grades (Krippendorff 2004; 2011): the coincidences
  :math:`o = O + O^\top`, their marginals :math:`n_g`, :math:`N = \sum n_g`,
  :math:`\delta^2_{ck} = (\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` and
  :math:`\alpha = 1 - (N - 1) \sum o_{ck} \delta^2_{ck} / \sum n_c n_k \delta^2_{ck}`.

Each is NaN where it is undefined (a denominator of 0: e.g. every pair of a
query labelled the same by both, which is common per query).

Rankings (``runs`` given)
-------------------------
Per judgment set and measure, the runs' per-query values over the queries
both sets judge (a query a run lacks scores 0, trec_eval ``-c``). Systems are
ranked by their mean, 1 best, ties broken by run id.

* ``tau_b``: Kendall's :math:`\tau_b` of the two sets' means (ties in the means
  count as ties, as scipy's ``kendalltau``); ``tau_b_low`` / ``tau_b_high``:
  the percentile bootstrap interval over queries resampled with replacement
  (the same ``B`` resamples for both sets);
* ``tau_ap``: Yilmaz, Aslam & Robertson's AP correlation of the other set's
  ranking against the reference's as truth,
  :math:`\tau_{AP} = \frac{2}{n-1} \sum_{i=2}^{n} \frac{C(i)}{i-1} - 1`;
* ``rbo``: rank-biased overlap, extrapolated (Webber, Moffat & Zobel 2010,
  eq. 32), of the two rankings to their full depth :math:`k = n`:
  :math:`\frac{X_k}{k} p^k + \frac{1-p}{p} \sum_{d=1}^{k} \frac{X_d}{d} p^d`,
  :math:`X_d` the overlap of the two top-:math:`d` lists, :math:`p = 0.9`;
* ``max_drop``: the largest fall in rank of any system (0 if none falls);
* ``top1_same``: the same system ranked first.

Significance
------------
For every pair of systems, the two-sided paired t-test over the same queries
(no correction), as :func:`fasteval.analysis.statistics.paired_t`:
``sig_reference`` and ``sig_other`` count the pairs with :math:`p < \alpha`
under each set, ``sig_both`` those significant under both with the same sign
of the mean difference.

References
----------
Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational
and Psychological Measurement 20(1).
Cohen, J. (1968). Weighted kappa. Psychological Bulletin 70(4).
Krippendorff, K. (2004). Content Analysis, 2nd ed.; Krippendorff, K. (2011).
Computing Krippendorff's alpha-reliability.
Yilmaz, E., Aslam, J. A., & Robertson, S. (2008). A new rank correlation
coefficient for information retrieval. SIGIR '08.
Webber, W., Moffat, A., & Zobel, J. (2010). A similarity measure for
indefinite rankings. ACM TOIS 28(4).
Voorhees, E. M. (2000). Variations in relevance judgments and the measurement
of retrieval effectiveness. IP&M 36(5).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis import statistics as stats
from fasteval.analysis.labels import (
    LABEL_SCHEMA,
    MISSING,
    GradeTable,
    grade_table,
    krippendorff_ordinal,
    label_agreement,
    labels_of_table,
    qrels_frame,
    safe_ratio,
    weighted_kappa,
)
from fasteval.errors import DataMismatchError, ParameterError
from fasteval.kernels.pairs import concordance

__all__ = [
    "LABEL_SCHEMA",
    "MEANS_SCHEMA",
    "MISSING",
    "RANKING_SCHEMA",
    "SIGNIFICANCE_SCHEMA",
    "Agreement",
    "GradeTable",
    "Scores",
    "grade_table",
    "krippendorff_ordinal",
    "label_agreement",
    "labels_of_table",
    "ranking_agreement",
    "rbo_ext",
    "simulate_assessor",
    "strict_ranks",
    "tau_ap_ranks",
    "tau_b_many",
    "weighted_kappa",
]

RBO_P = 0.9
RANKING_SCHEMA = {
    "other": pl.String,
    "measure": pl.String,
    "n_systems": pl.Int64,
    "n_queries": pl.Int64,
    "tau_b": pl.Float64,
    "tau_b_low": pl.Float64,
    "tau_b_high": pl.Float64,
    "tau_ap": pl.Float64,
    "rbo": pl.Float64,
    "max_drop": pl.Int64,
    "top1_same": pl.Boolean,
}
SIGNIFICANCE_SCHEMA = {
    "other": pl.String,
    "measure": pl.String,
    "pairs": pl.Int64,
    "sig_reference": pl.Int64,
    "sig_other": pl.Int64,
    "sig_both": pl.Int64,
}
MEANS_SCHEMA = {
    "other": pl.String,
    "measure": pl.String,
    "run_id": pl.String,
    "mean_reference": pl.Float64,
    "mean_other": pl.Float64,
    "rank_reference": pl.Int64,
    "rank_other": pl.Int64,
}


@dataclass
class Agreement:
    """The result of :func:`fasteval.agreement`.

    Attributes
    ----------
    labels
        One overall row per other set (``query_id`` null), then one per
        (other, query): ``other, query_id, n_reference, n_other, n_common,
        kappa, weighted_kappa, alpha, rel_rel, rel_nonrel, nonrel_rel,
        nonrel_nonrel`` (the binary confusion counts, reference first).
    rankings
        One row per (other, measure): ``n_systems, n_queries, tau_b,
        tau_b_low, tau_b_high, tau_ap, rbo, max_drop, top1_same`` (empty
        without runs).
    significance
        One row per (other, measure): ``pairs, sig_reference, sig_other,
        sig_both`` (empty without runs).
    means
        One row per (other, measure, run): the means and ranks under both sets.
    """

    labels: pl.DataFrame
    rankings: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=RANKING_SCHEMA))
    significance: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=SIGNIFICANCE_SCHEMA)
    )
    means: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=MEANS_SCHEMA))
    B: int = 1000
    seed: int = 0
    alpha: float = 0.05
    relevance_level: int = 1
    notes: list[str] = field(default_factory=list)


def check_options(B: int, alpha: float, level: float = 0.95) -> None:
    """Refuse ``B < 1``, ``alpha`` or ``level`` outside (0, 1) with one-line errors."""
    if B < 1:
        msg = f"B must be >= 1 bootstrap resamples, got {B}"
        raise ParameterError(msg)
    if not 0.0 < alpha < 1.0:
        msg = f"alpha must be in (0, 1), got {alpha}"
        raise ParameterError(msg)
    stats.check_level(level, "level")


# --------------------------------------------------------------------------- labels


# --------------------------------------------------------------------------- rankings


def strict_ranks(means: np.ndarray, names: list[str]) -> np.ndarray:
    """Ranks 1..n by mean, highest first, ties broken by run id (ascending).

    Parameters
    ----------
    means
        ``(n,)`` or ``(B, n)`` means.
    names
        The run ids.

    Returns
    -------
    numpy.ndarray
        int64 ranks of the same shape.
    """
    m = np.asarray(means, np.float64)
    name_order = np.argsort(np.array(names, dtype=object), kind="stable")
    by_name = np.empty(len(names), np.int64)
    by_name[name_order] = np.arange(len(names))
    flat = m.reshape(-1, m.shape[-1])
    out = np.empty(flat.shape, np.int64)
    for b in range(flat.shape[0]):
        order = np.lexsort((by_name, -flat[b]))
        out[b, order] = np.arange(1, m.shape[-1] + 1)
    return out.reshape(m.shape)


def tau_ap_ranks(rank_ref: np.ndarray, rank_other: np.ndarray) -> float:
    r"""tau_AP of a strict ranking against a strict reference ranking (no ties).

    Parameters
    ----------
    rank_ref, rank_other
        Ranks 1..n of the same systems (the reference is the truth).

    Returns
    -------
    float
        :math:`\frac{2}{n-1} \sum_{i=2}^{n} C(i)/(i-1) - 1`, :math:`C(i)` the
        systems above position :math:`i` of the other ranking that the
        reference also puts above it.
    """
    n = rank_ref.shape[0]
    ref_in_other_order = rank_ref[np.argsort(rank_other)]  # reference rank of the i-th listed
    above = np.tri(n, k=-1, dtype=bool)  # above[i, j]: j is listed before i
    correct = ((ref_in_other_order[None, :] < ref_in_other_order[:, None]) & above).sum(axis=1)
    return float(2.0 * (correct[1:] / np.arange(1, n)).sum() / (n - 1) - 1.0)


def rbo_ext(rank_a: np.ndarray, rank_b: np.ndarray, p: float = RBO_P) -> float:
    r"""Extrapolated rank-biased overlap of two full rankings of the same items.

    .. math::

        \mathrm{RBO}_{ext} = \frac{X_k}{k} p^k
            + \frac{1-p}{p} \sum_{d=1}^{k} \frac{X_d}{d} p^d

    Parameters
    ----------
    rank_a, rank_b
        Ranks 1..k of the same items.
    p
        Persistence in (0, 1).

    Returns
    -------
    float
        1 for identical rankings.

    References
    ----------
    Webber, W., Moffat, A., & Zobel, J. (2010). A similarity measure for
    indefinite rankings. ACM TOIS 28(4), eq. 32.
    """
    k = rank_a.shape[0]
    depth = np.maximum(rank_a, rank_b)  # an item is in both top-d lists from this depth on
    X = np.cumsum(np.bincount(depth, minlength=k + 1)[1:])
    d = np.arange(1, k + 1)
    return float(X[-1] / k * p**k + (1.0 - p) / p * (X / d * p**d).sum())


def dense_ranks(x: np.ndarray) -> np.ndarray:
    """Dense ranks ``0..`` of each row of ``x`` (``(B, n)``), ascending; equal values share one.

    Parameters
    ----------
    x
        Values, one set per row.

    Returns
    -------
    numpy.ndarray
        int64 ranks of the same shape.
    """
    order = np.argsort(x, axis=1, kind="stable")
    srt = np.take_along_axis(x, order, axis=1)
    step = np.zeros(x.shape, np.int64)
    step[:, 1:] = srt[:, 1:] != srt[:, :-1]
    out = np.empty(x.shape, np.int64)
    np.put_along_axis(out, order, np.cumsum(step, axis=1), axis=1)
    return out


def _untied_pairs(r: np.ndarray) -> np.ndarray:
    """Per row of dense ranks, the pairs of objects with different ranks."""
    n_rows, n = r.shape
    counts = np.bincount((r + n * np.arange(n_rows)[:, None]).ravel(), minlength=n_rows * n)
    counts = counts.reshape(n_rows, n)
    tied = (counts * (counts - 1) // 2).sum(axis=1)
    return np.asarray(n * (n - 1) // 2 - tied, np.int64)


def tau_b_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""Kendall's tau-b of the rows of ``a`` and ``b`` (``(B, n)`` each).

    .. math::

        \tau_b = \frac{c - d}{\sqrt{(n_0 - n_a)(n_0 - n_b)}}

    with :math:`c` and :math:`d` the concordant and discordant pairs,
    :math:`n_0 = n(n-1)/2` and :math:`n_a`, :math:`n_b` the pairs tied in
    ``a``, in ``b`` (as scipy's ``kendalltau``). :math:`c - d` comes from one
    O(n log n) sweep per row (:func:`fasteval.kernels.pairs.concordance`, as
    :func:`fasteval.analysis.correlation.pair_counts`); NaN where a row is constant.
    """
    return tau_b_dense(dense_ranks(np.atleast_2d(a)), dense_ranks(np.atleast_2d(b)))


def tau_b_dense(ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """:func:`tau_b_many` of rows already turned into :func:`dense_ranks`."""
    n_rows, n = ra.shape
    order = np.argsort(ra * (n + 1) + rb, axis=1, kind="stable")
    xs = np.ascontiguousarray(np.take_along_axis(ra, order, axis=1))
    ys = np.ascontiguousarray(np.take_along_axis(rb, order, axis=1))
    num = np.empty(n_rows)
    for k in range(n_rows):
        c, d = concordance(xs[k], ys[k], n)
        num[k] = c - d
    den = np.sqrt(_untied_pairs(ra).astype(np.float64) * _untied_pairs(rb))
    return safe_ratio(num, den)


def resampled_means(X: np.ndarray, idx: np.ndarray, chunk: int = 100) -> np.ndarray:
    """``(B, n)`` means of the rows of ``X`` (``(n, Q)``) over each resample of query indices.

    Parameters
    ----------
    X
        Per-query values, one row per system.
    idx
        ``(B, Q)`` query indices (:func:`fasteval.analysis.statistics.resamples`).
    chunk
        Resamples per step (memory: ``n * chunk * Q`` values).

    Returns
    -------
    numpy.ndarray
        ``out[b, i] = X[i, idx[b]].mean()``.
    """
    out = np.empty((idx.shape[0], X.shape[0]))
    for s in range(0, idx.shape[0], chunk):
        out[s : s + chunk] = X[:, idx[s : s + chunk]].mean(axis=2).T
    return out


def pair_t_significant(X: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Paired t-tests of every pair ``i < j`` of rows of ``X``: (significant, sign of the mean).

    p as :func:`fasteval.analysis.statistics.paired_t` (all differences 0: p = 1;
    constant non-zero differences: p = 0).
    """
    n_sys, n = X.shape
    ii, jj = np.triu_indices(n_sys, 1)
    D = X[ii] - X[jj]
    mean = D.mean(axis=1)
    sq = ((D - mean[:, None]) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (np.sqrt(sq / (n - 1)) / np.sqrt(n))
    p = stats.student_t_sf2(np.where(sq > 0, t, 0.0), n - 1.0)
    p = np.where(sq > 0, p, np.where(mean == 0.0, 1.0, 0.0))
    return p < alpha, np.sign(mean)


def _percentile_interval(x: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates (numpy's linear quantiles); NaN ignored."""
    x = x[~np.isnan(x)]
    if x.shape[0] == 0:
        return np.nan, np.nan
    lo, hi = np.quantile(x, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(lo), float(hi)


@dataclass(frozen=True)
class Scores:
    """One judgment set's per-query values of one measure: ``(runs, queries)``."""

    X: np.ndarray
    queries: list[str]


def _common(ref: Scores, oth: Scores) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    shared = sorted(set(ref.queries) & set(oth.queries))
    if len(shared) < 2:
        msg = f"the judgment sets share {len(shared)} evaluated queries; need at least 2"
        raise DataMismatchError(msg)
    ri = {q: i for i, q in enumerate(ref.queries)}
    oi = {q: i for i, q in enumerate(oth.queries)}
    return ref.X[:, [ri[q] for q in shared]], oth.X[:, [oi[q] for q in shared]], tuple(shared)


def ranking_agreement(
    reference: Mapping[str, Scores],
    others: Mapping[str, Mapping[str, Scores]],
    runs: list[str],
    *,
    B: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    level: float = 0.95,
    progress: Callable[[Iterator[Any]], Iterator[Any]] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Rank correlations, their bootstrap intervals and significance agreement.

    Parameters
    ----------
    reference
        Measure -> the reference set's :class:`Scores` (rows in ``runs`` order).
    others
        Other set name -> measure -> :class:`Scores`.
    runs
        The run ids (rows of every matrix).
    B, seed
        Bootstrap resamples over queries and their seed
        (:func:`fasteval.analysis.statistics.resamples`).
    alpha
        Level of the paired t-tests.
    level
        Level of the percentile interval of tau_b.
    progress
        Wraps the iteration over (other, measure) (e.g. a tqdm bar).

    Returns
    -------
    tuple of polars.DataFrame
        ``(rankings, significance, means)``.
    """
    check_options(B, alpha, level)
    if len(runs) < 2:
        msg = f"ranking agreement needs at least 2 runs, got {len(runs)}"
        raise ParameterError(msg)
    rows: list[dict[str, Any]] = []
    sig_rows: list[dict[str, Any]] = []
    mean_parts: list[pl.DataFrame] = []
    work = [(o, m) for o, per in others.items() for m in per]
    it: Iterator[Any] = iter(work) if progress is None else progress(iter(work))
    # the reference's side depends on the measure and the queries only: made once
    sig_cache: dict[tuple[str, tuple[str, ...]], tuple[np.ndarray, np.ndarray]] = {}
    boot_cache: dict[tuple[str, tuple[str, ...]], tuple[np.ndarray, np.ndarray]] = {}
    for name, m in it:
        Xr, Xo, shared = _common(reference[m], others[name][m])
        n_q = Xr.shape[1]
        mr, mo = Xr.mean(axis=1), Xo.mean(axis=1)
        rr, ro = strict_ranks(mr, runs), strict_ranks(mo, runs)
        key = (m, shared)
        if key not in boot_cache:
            idx = stats.resamples(n_q, B, seed)
            boot_cache[key] = (idx, dense_ranks(resampled_means(Xr, idx)))
        idx, boot_ref = boot_cache[key]
        taus = tau_b_dense(boot_ref, dense_ranks(resampled_means(Xo, idx)))
        lo, hi = _percentile_interval(taus, level)
        rows.append(
            {
                "other": name,
                "measure": m,
                "n_systems": len(runs),
                "n_queries": n_q,
                "tau_b": float(tau_b_many(mr[None], mo[None])[0]),
                "tau_b_low": float(lo),
                "tau_b_high": float(hi),
                "tau_ap": tau_ap_ranks(rr, ro),
                "rbo": rbo_ext(rr, ro),
                "max_drop": int(max(0, (ro - rr).max())),
                "top1_same": bool(np.argmin(rr) == np.argmin(ro)),
            }
        )
        if key not in sig_cache:
            sig_cache[key] = pair_t_significant(Xr, alpha)
        sr, sign_r = sig_cache[key]
        so, sign_o = pair_t_significant(Xo, alpha)
        sig_rows.append(
            {
                "other": name,
                "measure": m,
                "pairs": int(sr.shape[0]),
                "sig_reference": int(sr.sum()),
                "sig_other": int(so.sum()),
                "sig_both": int((sr & so & (sign_r == sign_o)).sum()),
            }
        )
        mean_parts.append(
            pl.DataFrame(
                {
                    "other": [name] * len(runs),
                    "measure": [m] * len(runs),
                    "run_id": runs,
                    "mean_reference": mr,
                    "mean_other": mo,
                    "rank_reference": rr,
                    "rank_other": ro,
                },
                schema=MEANS_SCHEMA,
            )
        )
    return (
        pl.DataFrame(rows, schema=RANKING_SCHEMA),
        pl.DataFrame(sig_rows, schema=SIGNIFICANCE_SCHEMA),
        pl.concat(mean_parts) if mean_parts else pl.DataFrame(schema=MEANS_SCHEMA),
    )


# --------------------------------------------------------------------------- simulated assessors


def simulate_assessor(
    qrels: pl.DataFrame,
    *,
    flip_relevant: float = 0.0,
    flip_nonrelevant: float = 0.0,
    drop: float = 0.0,
    seed: int = 0,
    relevance_level: int = 1,
) -> pl.DataFrame:
    """A second assessor simulated from qrels: judgments flipped and dropped at given rates.

    Each judgment is dropped with probability ``drop``; each kept relevant
    judgment (``grade >= relevance_level``) becomes 0 with probability
    ``flip_relevant``, each kept non-relevant one (``0 <= grade <
    relevance_level``) becomes ``relevance_level`` with probability
    ``flip_nonrelevant`` (independent draws, seeded); negative grades (unjudged
    in trec_eval) are kept as they are.

    Parameters
    ----------
    qrels
        ``query_id, doc_id, relevance``.
    flip_relevant, flip_nonrelevant, drop
        Rates in [0, 1].
    seed
        Seed of the draws (``numpy.random.default_rng(seed)``).
    relevance_level
        The grade from which a judgment is relevant.

    Returns
    -------
    polars.DataFrame
        The simulated qrels, same columns, the kept rows in the same order.

    References
    ----------
    Voorhees, E. M. (2000). Variations in relevance judgments and the
    measurement of retrieval effectiveness. IP&M 36(5).
    """
    for name, rate in (
        ("flip_relevant", flip_relevant),
        ("flip_nonrelevant", flip_nonrelevant),
        ("drop", drop),
    ):
        if not 0.0 <= rate <= 1.0:
            msg = f"{name} must be in [0, 1], got {rate}"
            raise ParameterError(msg)
    q = qrels_frame(qrels, "qrels")
    rng = np.random.default_rng(seed)
    u_drop, u_flip = rng.random(q.height), rng.random(q.height)
    g = q["relevance"].to_numpy().copy()
    rel = g >= relevance_level
    g[rel & (u_flip < flip_relevant)] = 0
    g[~rel & (g >= 0) & (u_flip < flip_nonrelevant)] = relevance_level  # unjudged (< 0) stay
    return q.with_columns(pl.Series("relevance", g)).filter(pl.Series(u_drop >= drop))
