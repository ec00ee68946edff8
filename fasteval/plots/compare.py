"""Figures for comparing runs: means with intervals, per-query differences, precision-recall.

:func:`mean_intervals` takes a :class:`fasteval.Comparison`; the others the
long table :func:`fasteval.evaluate` returns (``run_id, query_id, measure,
value``). All need the ``plots`` extra (matplotlib).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from fasteval.analysis.statistics import cohens_dz, t_interval
from fasteval.errors import ParameterError
from fasteval.io.writers import write_figure

if TYPE_CHECKING:
    from fasteval.analysis.comparison import Comparison


def _runs_of(table: pl.DataFrame, runs: Sequence[str] | None) -> list[str]:
    have = table["run_id"].unique(maintain_order=True).to_list()
    if runs is None:
        return have
    unknown = [r for r in runs if r not in have]
    if unknown:
        msg = f"run(s) {unknown} not in the table (runs: {', '.join(have[:8])})"
        raise ParameterError(msg)
    return list(runs)


def per_query_differences(
    table: pl.DataFrame,
    baseline: str,
    measure: str,
    path: str | Path,
    runs: Sequence[str] | None = None,
) -> Path:
    """Bar chart of each run's per-query difference to the baseline, sorted (one panel per run).

    The difference on query ``q`` is ``value(run, q) - value(baseline, q)``
    over the queries both have; bars are sorted from the largest gain to
    the largest loss, and the panel title gives wins/ties/losses, the mean
    difference with its 95% paired t interval and Cohen's ``d_z``.

    Parameters
    ----------
    table
        Per-query evaluation table (``fasteval.evaluate(..., per_query=True)``).
    baseline
        The baseline run id.
    measure
        The measure (as named in ``table``).
    path
        Output image (``.png``, ``.pdf``, ``.svg``).
    runs
        Runs to plot (default: every run but the baseline).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    names = [r for r in _runs_of(table, runs) if r != baseline]
    _runs_of(table, [baseline])
    pq = table.filter((pl.col("measure") == measure) & (pl.col("query_id") != "all"))
    if pq.height == 0:
        msg = f"no per-query values of {measure!r}: evaluate with per_query=True and that measure"
        raise ParameterError(msg)
    if not names:
        msg = "no run to compare with the baseline"
        raise ParameterError(msg)
    wide = pq.pivot(on="run_id", index="query_id", values="value", aggregate_function="first")
    fig, axes = plt.subplots(
        len(names), 1, figsize=(7.0, 1.9 * len(names) + 0.6), squeeze=False, sharex=False
    )
    for ax, r in zip(axes[:, 0], names, strict=True):
        both = wide.select(baseline, r).drop_nulls()
        d = np.sort((both[r] - both[baseline]).to_numpy())[::-1]
        colors = np.where(d > 0, "tab:green", np.where(d < 0, "tab:red", "0.6"))
        ax.bar(np.arange(d.shape[0]), d, color=colors, width=0.85)
        ax.axhline(0.0, color="black", lw=0.6)
        w, t, lo = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
        ci_lo, ci_hi = t_interval(d)
        ax.set_title(
            f"{r} - {baseline}: {w}/{t}/{lo} W/T/L, mean {d.mean():+.4f} "
            f"[{ci_lo:+.4f}, {ci_hi:+.4f}], d_z {cohens_dz(d):+.2f}",
            fontsize=9,
            loc="left",
        )
        ax.set_ylabel(f"diff {measure}", fontsize=8)
        ax.set_xticks([])
    axes[-1, 0].set_xlabel("queries, sorted by difference")
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out


def precision_recall(
    table: pl.DataFrame, path: str | Path, runs: Sequence[str] | None = None
) -> Path:
    """Interpolated precision at the 11 standard recall levels, one line per run.

    Uses the ``iprec_at_recall_*`` aggregates (trec_eval's 11-point curve:
    precision at recall ``r`` is the best precision at any recall ``>= r``),
    e.g. from ``fasteval.evaluate(qrels, runs, ["iprec_at_recall"])``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    names = _runs_of(table, runs)
    pts = table.filter(
        (pl.col("query_id") == "all") & pl.col("measure").str.starts_with("iprec_at_recall_")
    )
    if pts.height == 0:
        msg = (
            "no iprec_at_recall_* aggregates in the table"
            "\n  hint: evaluate with measures=['iprec_at_recall']"
        )
        raise ParameterError(msg)
    pts = pts.with_columns(
        pl.col("measure").str.strip_prefix("iprec_at_recall_").cast(pl.Float64).alias("recall")
    )
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    for r in names:
        sub = pts.filter(pl.col("run_id") == r).sort("recall")
        ax.plot(sub["recall"].to_numpy(), sub["value"].to_numpy(), marker="o", ms=3, label=r)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out


def mean_intervals(
    cmp: Comparison, path: str | Path, measures: Sequence[str] | None = None
) -> Path:
    """Each run's mean with its t interval, one panel per measure (a compare figure).

    With baselines, the first baseline's mean is a dashed line and a run whose
    difference is significant (corrected) is drawn in orange.

    Parameters
    ----------
    cmp
        :func:`fasteval.compare`'s result.
    path
        Output image (``.png``, ``.pdf``, ``.svg``).
    measures
        Which measures (default: all of the comparison's).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ms = list(cmp.measures if measures is None else measures)
    unknown = [m for m in ms if m not in cmp.measures]
    if unknown:
        msg = f"measure(s) {unknown} not in the comparison (have {cmp.measures})"
        raise ParameterError(msg)
    base = cmp.baselines[0] if cmp.baselines else None
    n = len(cmp.runs)
    fig, axes = plt.subplots(
        1, len(ms), figsize=(3.2 * len(ms) + 1.2, 0.9 + 0.28 * n), squeeze=False, sharey=True
    )
    y = np.arange(n)
    for ax, m in zip(axes[0], ms, strict=True):
        iv = cmp.intervals.filter(pl.col("measure") == m)
        by_run = {r["run_id"]: r for r in iv.iter_rows(named=True)}
        means = dict(zip(cmp.means["run_id"].to_list(), cmp.means[m].to_list(), strict=True))
        sig = set()
        if base is not None:
            rows = cmp.table.filter(
                (pl.col("measure") == m) & (pl.col("baseline") == base) & pl.col("significant")
            )
            sig = set(rows["run_id"].to_list())
        for k, run in enumerate(cmp.runs):
            mu, r = means[run], by_run.get(run)
            lo = mu if r is None or r["ci_low"] is None else r["ci_low"]
            hi = mu if r is None or r["ci_high"] is None else r["ci_high"]
            color = "tab:orange" if run in sig else "tab:blue"
            ax.errorbar(mu, k, xerr=[[mu - lo], [hi - mu]], fmt="o", ms=4, color=color, capsize=2)
        if base is not None:
            ax.axvline(means[base], color="0.5", ls="--", lw=0.8)
        ax.set_title(m, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_yticks(y)
    axes[0, 0].set_yticklabels([r + (" (baseline)" if r == base else "") for r in cmp.runs])
    axes[0, 0].invert_yaxis()
    fig.suptitle(f"means with {100 * cmp.ci_level:g}% t intervals over queries", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out
