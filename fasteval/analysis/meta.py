"""Meta-evaluation: how measures rank systems, and how well they separate them (SPEC 6).

- :func:`correlation_table`: correlations of the system rankings produced by
  pairs of measures, on all systems and on the top ``k``.
- :func:`significance`: for every pair of systems, the paired t-test, Fisher's
  randomisation test and the paired bootstrap test, with Holm and
  Benjamini-Hochberg adjusted p-values.
- :func:`discriminative_power`: Sakai's share of system pairs a measure
  separates at level ``alpha`` by the paired bootstrap test.

Inputs are the long tables :func:`fasteval.evaluate` returns
(``run_id, query_id, measure, value``) or plain matrices.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.analysis import correlation as corr
from fasteval.errors import ParameterError
from fasteval.kernels import bootstrap as kb

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


def student_t_sf2(t: np.ndarray, df: float) -> np.ndarray:
    """Two-sided p-value ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom.

    Through the regularised incomplete beta function,
    ``p = I_{df/(df+t^2)}(df/2, 1/2)``, by its continued fraction (Lentz).
    """
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = np.where(np.isinf(t), 0.0, df / (df + t * t))
    return _betainc(df / 2.0, 0.5, x)


def _betacf(a: float, b: float, x: np.ndarray) -> np.ndarray:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        de = d * c
        h *= de
        if np.all(np.abs(de - 1.0) < 1e-15):
            break
    return h


def _betainc(a: float, b: float, x: np.ndarray) -> np.ndarray:
    x = np.clip(np.asarray(x, np.float64), 0.0, 1.0)
    out = np.where(x >= 1.0, 1.0, 0.0)
    inner = (x > 0.0) & (x < 1.0)
    if not inner.any():
        return out
    xi = x[inner]
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    bt = np.exp(lbeta + a * np.log(xi) + b * np.log1p(-xi))
    direct = xi < (a + 1.0) / (a + b + 2.0)
    res = np.empty_like(xi)
    if direct.any():
        res[direct] = bt[direct] * _betacf(a, b, xi[direct]) / a
    if (~direct).any():
        res[~direct] = 1.0 - bt[~direct] * _betacf(b, a, 1.0 - xi[~direct]) / b
    out[inner] = res
    return out


def student_t_ppf(q: float, df: float) -> float:
    """The ``q`` quantile (``q > 0.5``) of Student's t, by bisection on :func:`student_t_sf2`."""
    target = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if student_t_sf2(np.array([mid]), df)[0] > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate)."""
    p = np.asarray(p, np.float64)
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate)."""
    p = np.asarray(p, np.float64)
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def resamples(n_queries: int, B: int, seed: int) -> np.ndarray:
    """``(B, n_queries)`` bootstrap query indices, the same for every pair."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    return rng.integers(0, n_queries, size=(B, n_queries), dtype=np.int64)


def sign_flips(n_queries: int, R: int, seed: int) -> np.ndarray:
    """``(R, n_queries)`` random signs (+-1.0) for the randomisation test."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    return np.where(rng.random((R, n_queries)) < 0.5, -1.0, 1.0)


RAND_TOL = 1e-9


def pair_tests(
    X: np.ndarray,
    *,
    B: int = 1000,
    R: int = 1000,
    seed: int = 0,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Paired tests for pairs of rows of ``X`` (``(n_systems, n_queries)``).

    Returns arrays per pair (all ``i < j`` pairs by default): ``a``, ``b``,
    ``mean_diff``, ``t``, ``p_t`` (two-sided paired t-test), ``p_randomisation``
    (``R`` sign flips) and ``p_bootstrap`` (Sakai's ASL from ``B`` resamples of
    the centred differences; ``B = 0`` / ``R = 0`` skip a test).
    """
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
    if pairs is None:
        ia, ib = np.triu_indices(X.shape[0], k=1)
    else:
        ia, ib = pairs
    pa = np.ascontiguousarray(ia, dtype=np.int64)
    pb = np.ascontiguousarray(ib, dtype=np.int64)
    n_pairs = pa.shape[0]
    n = X.shape[1]
    idx = resamples(n, B, seed)
    signs = sign_flips(n, R, seed)
    t = np.empty(n_pairs)
    asl = np.empty(n_pairs)
    p_rand = np.empty(n_pairs)
    parallel.run(
        kb.paired_tests,
        np.full(n_pairs, float(n * (B + R + 1))),
        X,
        pa,
        pb,
        idx,
        signs,
        RAND_TOL,
        t,
        asl,
        p_rand,
    )
    return {
        "a": pa,
        "b": pb,
        "mean_diff": X[pa].mean(axis=1) - X[pb].mean(axis=1),
        "t": t,
        "p_t": student_t_sf2(t, n - 1.0),
        "p_randomisation": p_rand,
        "p_bootstrap": asl,
    }


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
        Benjamini & Hochberg 1995).

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
    replacement (the same query indices for every pair and measure); ASL is
    the share of resamples with ``|t*| >= |t|``.

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
