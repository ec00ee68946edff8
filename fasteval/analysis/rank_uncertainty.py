r"""How sure is a system's rank? Percentile bootstrap intervals of ranks over queries.

Each of ``B`` resamples draws the queries with replacement
(:func:`fasteval.analysis.statistics.resamples`), takes every system's mean
over the resample and ranks the systems by it (1 best, ties broken by run
id, :func:`fasteval.analysis.agreement.strict_ranks`). A system's interval is
the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of its ``B`` ranks
(numpy's ``inverted_cdf``: ranks that occurred, the smallest rank ``r`` with
at least that share of resamples at or below ``r``).

References
----------
Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap, ch. 13
(the percentile interval). Hall, P., & Miller, H. (2009). Using the bootstrap
to quantify the authority of an empirical ranking. Annals of Statistics 37(6).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from fasteval.analysis import statistics as stats
from fasteval.analysis.agreement import check_options, resampled_means, strict_ranks
from fasteval.errors import ParameterError

SCHEMA = {
    "run_id": pl.String,
    "mean": pl.Float64,
    "rank": pl.Int64,
    "rank_low": pl.Int64,
    "rank_high": pl.Int64,
}


def bootstrap_ranks(X: np.ndarray, runs: list[str], *, B: int = 1000, seed: int = 0) -> np.ndarray:
    """``(B, n)`` ranks of the systems (rows of ``X``, ``(n, queries)``) in each resample.

    Parameters
    ----------
    X
        Per-query values, one row per system, no NaN.
    runs
        The run ids (ties are broken by them).
    B, seed
        Resamples and their seed.

    Returns
    -------
    numpy.ndarray
        int64 ranks, 1 best.
    """
    idx = stats.resamples(X.shape[1], B, seed)
    return strict_ranks(resampled_means(X, idx), runs)


def rank_intervals_matrix(
    X: np.ndarray, runs: list[str], *, B: int = 1000, level: float = 0.95, seed: int = 0
) -> pl.DataFrame:
    """Each system's mean, rank and percentile bootstrap interval of its rank.

    Parameters
    ----------
    X
        ``(n_runs, n_queries)`` per-query values (a missing query as 0).
    runs
        The run ids of the rows.
    B
        Bootstrap resamples (>= 1).
    level
        Level of the interval, in (0, 1).
    seed
        Seed of the resamples.

    Returns
    -------
    polars.DataFrame
        ``run_id, mean, rank, rank_low, rank_high``, sorted by rank.
    """
    check_options(B, 0.05, level)
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or X.shape[0] != len(runs) or X.shape[0] < 1 or X.shape[1] < 1:
        msg = f"need a (runs, queries) matrix with one row per run, got shape {X.shape}"
        raise ParameterError(msg)
    means = X.mean(axis=1)
    rank = strict_ranks(means, runs)
    ranks = bootstrap_ranks(X, runs, B=B, seed=seed)
    lo = np.quantile(ranks, (1.0 - level) / 2.0, axis=0, method="inverted_cdf")
    hi = np.quantile(ranks, (1.0 + level) / 2.0, axis=0, method="inverted_cdf")
    out = pl.DataFrame(
        {
            "run_id": runs,
            "mean": means,
            "rank": rank,
            "rank_low": lo.astype(np.int64),
            "rank_high": hi.astype(np.int64),
        },
        schema=SCHEMA,
    )
    return out.sort("rank")
