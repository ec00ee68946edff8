"""Meta-evaluation: how measures rank systems, and how well they separate them (SPEC 6).

- :func:`correlation_table`: correlations of the system rankings produced by
  pairs of measures, on all systems and on the top ``k``.
- :func:`significance`: for every pair of systems, the paired t-test, Fisher's
  randomisation test and the paired bootstrap test, with Holm and
  Benjamini-Hochberg adjusted p-values.
- :func:`discriminative_power`: Sakai's share of system pairs a measure
  separates at level ``alpha`` by the paired bootstrap test.

Inputs are the long tables :func:`fasteval.evaluate` returns
(``run_id, query_id, measure, value``). The tests, their p-value estimators and
the corrections are those of :mod:`fasteval.analysis.statistics`, the same as
:func:`fasteval.compare` uses.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from fasteval.analysis import correlation as corr
from fasteval.analysis.statistics import benjamini_hochberg, holm, pair_tests
from fasteval.errors import ParameterError

# --------------------------------------------------------------------------- correlations


def correlation_methods() -> dict[str, Callable[[np.ndarray, np.ndarray], float]]:
    """Correlation functions by column name (information tau when the module has it)."""
    methods: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
        "kendall_tau_a": lambda a, b: corr.kendall_tau(a, b, "a"),
        "kendall_tau_b": lambda a, b: corr.kendall_tau(a, b, "b"),
        "spearman": corr.spearman,
        "pearson": corr.pearson,
        "tau_ap": corr.tau_ap,
        "information_tau": lambda a, b: float(corr.information_tau(a, b)),
    }
    return methods


def _system_matrix(scores: pl.DataFrame) -> tuple[np.ndarray, list[str], list[str]]:
    """``(n_runs, n_measures)`` matrix of the ``all`` rows of an evaluation table."""
    need = {"run_id", "measure", "value"}
    if not need <= set(scores.columns):
        msg = f"scores need columns {sorted(need)}, got {scores.columns}"
        raise ParameterError(msg)
    df = scores
    if "query_id" in df.columns:
        df = df.filter(pl.col("query_id") == "all")
    measures = list(dict.fromkeys(df["measure"].to_list()))
    wide = df.pivot(on="measure", index="run_id", values="value", aggregate_function="first")
    runs = wide["run_id"].to_list()
    return wide.select(measures).to_numpy().astype(np.float64), runs, measures


def correlation_table(
    scores: pl.DataFrame,
    *,
    measures: Sequence[str] | None = None,
    top_k: int | None = None,
) -> pl.DataFrame:
    r"""Correlations between the system rankings of every ordered pair of measures.

    Parameters
    ----------
    scores
        ``run_id, measure, value`` (the ``all`` rows are used when a
        ``query_id`` column is present), e.g. ``fasteval.evaluate(...,
        per_query=False)``.
    measures
        Which measures (default: all in ``scores``, in order).
    top_k
        Also correlate over the ``top_k`` systems by ``measure_a`` (the
        reference ordering; tau_AP takes it as the reference too).

    Returns
    -------
    polars.DataFrame
        ``measure_a, measure_b, systems ("all" or "top k"), n`` and one
        column per coefficient: Kendall's tau a and b, Spearman's rho,
        Pearson's r, tau_AP (Yilmaz et al. 2008) and, when available,
        information tau (Golbus & Aslam).
    """
    X, _, names = _system_matrix(scores)
    if measures is not None:
        missing = [m for m in measures if m not in names]
        if missing:
            msg = f"measure(s) {missing} not in the scores (have {names})"
            raise ParameterError(msg)
        X = X[:, [names.index(m) for m in measures]]
        names = list(measures)
    if top_k is not None and top_k < 2:
        msg = f"top_k must be >= 2, got {top_k}"
        raise ParameterError(msg)
    methods = correlation_methods()
    rows: list[dict[str, object]] = []
    for i, j in itertools.permutations(range(len(names)), 2):
        subsets = [("all", np.arange(X.shape[0]))]
        if top_k is not None:
            top = np.argsort(-X[:, i], kind="stable")[: min(top_k, X.shape[0])]
            subsets.append((f"top {top_k}", top))
        for label, sel in subsets:
            row: dict[str, object] = {
                "measure_a": names[i],
                "measure_b": names[j],
                "systems": label,
                "n": int(sel.shape[0]),
            }
            for col, fn in methods.items():
                row[col] = float(fn(X[sel, i], X[sel, j]))
            rows.append(row)
    return pl.DataFrame(rows)


# --------------------------------------------------------------------------- significance


def per_query_matrix(table: pl.DataFrame, measure: str) -> tuple[np.ndarray, list[str], list[str]]:
    """``(n_runs, n_queries)`` values of ``measure`` over the queries every run has.

    ``table`` is a per-query evaluation table (``run_id, query_id, measure,
    value``); the ``all`` rows are ignored.
    """
    df = table.filter((pl.col("measure") == measure) & (pl.col("query_id") != "all"))
    if df.height == 0:
        msg = f"no per-query values for measure {measure!r} (evaluate with per_query=True)"
        raise ParameterError(msg)
    wide = df.pivot(on="query_id", index="run_id", values="value", aggregate_function="first")
    qcols = [c for c in wide.columns if c != "run_id"]
    full = [c for c in qcols if wide[c].null_count() == 0]
    if len(full) < 2:
        msg = f"fewer than 2 queries with a {measure!r} value for every run"
        raise ParameterError(msg)
    return wide.select(full).to_numpy().astype(np.float64), wide["run_id"].to_list(), full


def significance(
    table: pl.DataFrame,
    measure: str,
    *,
    B: int = 1000,
    R: int = 1000,
    seed: int = 0,
) -> pl.DataFrame:
    """Paired significance tests between every pair of runs for one measure.

    Parameters
    ----------
    table
        Per-query evaluation table (``fasteval.evaluate(..., per_query=True)``).
    measure
        The measure to compare systems by (its per-query values).
    B, R
        Bootstrap resamples and randomisation sign flips (seeded).
    seed
        Seed of the resamples and flips (the same for every pair).

    Returns
    -------
    polars.DataFrame
        ``run_a, run_b, mean_diff, t, p_t, p_randomisation, p_bootstrap`` and
        ``*_holm`` / ``*_bh`` adjusted columns over all pairs (Holm 1979;
        Benjamini & Hochberg 1995). The Monte Carlo p-values are
        ``(hits + 1) / (B + 1)`` (:func:`fasteval.analysis.statistics.monte_carlo_p`),
        never 0, as in :func:`fasteval.compare`.

    References
    ----------
    Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR '06.
    Smucker, M. D., Allan, J., & Carterette, B. (2007). A comparison of
    statistical significance tests for information retrieval evaluation. CIKM '07.
    """
    X, runs, _ = per_query_matrix(table, measure)
    res = pair_tests(X, B=B, R=R, seed=seed)
    names = np.array(runs, dtype=object)
    cols: dict[str, object] = {
        "run_a": names[res["a"]].tolist(),
        "run_b": names[res["b"]].tolist(),
    }
    for k in ("mean_diff", "t", "p_t", "p_randomisation", "p_bootstrap"):
        cols[k] = res[k]
    for k in ("p_t", "p_randomisation", "p_bootstrap"):
        if np.isnan(res[k]).all():
            continue
        cols[f"{k}_holm"] = holm(res[k])
        cols[f"{k}_bh"] = benjamini_hochberg(res[k])
    return pl.DataFrame(cols)


def discriminative_power(
    table: pl.DataFrame,
    measures: str | Sequence[str],
    *,
    alpha: float = 0.05,
    B: int = 1000,
    seed: int = 0,
) -> pl.DataFrame:
    """Sakai's discriminative power: share of system pairs with bootstrap ASL < ``alpha``.

    For every pair, per-query differences ``z``, ``t = mean(z) / (sd(z) /
    sqrt(n))``; the centred differences are resampled ``B`` times with
    replacement (the same query indices for every pair and measure); the ASL
    of a pair is ``(hits + 1) / (B + 1)``, ``hits`` the resamples with
    ``|t*| >= |t|`` (the estimator of every Monte Carlo test here; Sakai's
    ``hits / B`` separates the same pairs whenever ``alpha * B`` is a whole
    number, e.g. ``alpha = 0.05`` and ``B = 1000``).

    Returns
    -------
    polars.DataFrame
        ``measure, pairs, significant, discriminative_power, alpha, B, seed``.

    References
    ----------
    Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR '06.
    """
    if not 0.0 < alpha < 1.0:
        msg = f"alpha must be in (0, 1), got {alpha}"
        raise ParameterError(msg)
    if B < 1:
        msg = f"B must be >= 1, got {B}"
        raise ParameterError(msg)
    ms = [measures] if isinstance(measures, str) else list(measures)
    rows = []
    for m in ms:
        X, _, _ = per_query_matrix(table, m)
        res = pair_tests(X, B=B, R=0, seed=seed)
        sig = int((res["p_bootstrap"] < alpha).sum())
        n_pairs = int(res["a"].shape[0])
        rows.append(
            {
                "measure": m,
                "pairs": n_pairs,
                "significant": sig,
                "discriminative_power": sig / n_pairs if n_pairs else math.nan,
                "alpha": alpha,
                "B": B,
                "seed": seed,
            }
        )
    return pl.DataFrame(rows)
