"""Figures for comparing runs: per-query differences against a baseline, precision-recall.

Both take the long table :func:`fasteval.evaluate` returns (``run_id,
query_id, measure, value``) and need the ``plots`` extra (matplotlib).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from fasteval.errors import ParameterError
from fasteval.io.writers import write_figure


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
    the largest loss, and the panel title gives wins/ties/losses and the
    mean difference.

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
        ax.set_title(
            f"{r} - {baseline}: {w}/{t}/{lo} W/T/L, mean {d.mean():+.4f}", fontsize=9, loc="left"
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
