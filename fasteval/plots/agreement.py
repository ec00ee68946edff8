"""Figures of rank uncertainty and of the agreement between judgment sets.

- :func:`plot_rank_intervals`: each system's rank with its bootstrap interval
  (:func:`fasteval.rank_intervals`);
- :func:`plot_agreement`: each system's mean under the reference against its
  mean under another judgment set, tau_b (with its interval) and tau_AP in
  the title (:func:`fasteval.agreement`).

Both need the ``plots`` extra (matplotlib) and write with the project's atomic
figure writer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from fasteval.errors import ParameterError
from fasteval.io.writers import write_figure

if TYPE_CHECKING:
    from fasteval.analysis.agreement import Agreement


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_rank_intervals(
    intervals: pl.DataFrame,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    max_runs: int | None = None,
) -> Path:
    """Each system's rank (dot) and its bootstrap interval (bar), best at the top.

    Parameters
    ----------
    intervals
        :func:`fasteval.rank_intervals`' frame (``run_id, mean, rank,
        rank_low, rank_high``).
    path
        Output image (``.png``, ``.pdf``, ``.svg``).
    title
        Figure title (default: how many systems).
    max_runs
        Draw only the best ``max_runs`` systems.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    need = {"run_id", "rank", "rank_low", "rank_high"}
    if not need <= set(intervals.columns) or intervals.height == 0:
        msg = f"need rank_intervals' columns {sorted(need)} and rows, got {intervals.columns}"
        raise ParameterError(msg)
    df = intervals.sort("rank")
    if max_runs is not None:
        df = df.head(max_runs)
    plt = _pyplot()
    n = df.height
    y = np.arange(n)
    rank = df["rank"].to_numpy()
    fig, ax = plt.subplots(figsize=(6.0, 1.0 + 0.16 * n))
    ax.errorbar(
        rank,
        y,
        xerr=[rank - df["rank_low"].to_numpy(), df["rank_high"].to_numpy() - rank],
        fmt="o",
        ms=3,
        color="tab:blue",
        ecolor="0.55",
        elinewidth=1.2,
        capsize=0,
    )
    ax.set_yticks(y)
    ax.set_yticklabels(df["run_id"].to_list(), fontsize=7 if n > 30 else 8)
    ax.invert_yaxis()
    ax.set_xlabel("rank (1 = best), bootstrap interval over queries")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or f"rank intervals of {n} systems", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out


def plot_agreement(
    result: Agreement,
    path: str | os.PathLike[str],
    *,
    other: str | None = None,
    measure: str | None = None,
) -> Path:
    """System means under the reference (x) against those under another set (y).

    Parameters
    ----------
    result
        :func:`fasteval.agreement`'s result (with runs).
    path
        Output image.
    other
        Which other set (default: the first).
    measure
        Which measure (default: the first).

    Returns
    -------
    pathlib.Path
        ``path``; the title gives tau_b with its bootstrap interval, tau_AP and RBO.
    """
    means = result.means
    if means.height == 0:
        msg = "the agreement has no system means: call fasteval.agreement with runs"
        raise ParameterError(msg)
    others = means["other"].unique(maintain_order=True).to_list()
    measures = means["measure"].unique(maintain_order=True).to_list()
    o = others[0] if other is None else other
    m = measures[0] if measure is None else measure
    if o not in others:
        msg = f"other set {o!r} is not in the agreement (have {others})"
        raise ParameterError(msg)
    if m not in measures:
        msg = f"measure {m!r} is not in the agreement (have {measures})"
        raise ParameterError(msg)
    df = means.filter((pl.col("other") == o) & (pl.col("measure") == m))
    row = result.rankings.filter((pl.col("other") == o) & (pl.col("measure") == m)).row(
        0, named=True
    )
    plt = _pyplot()
    x, y = df["mean_reference"].to_numpy(), df["mean_other"].to_numpy()
    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    ax.scatter(x, y, s=12, color="tab:blue", alpha=0.8)
    lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    ax.plot([lo, hi], [lo, hi], color="0.6", lw=0.8, ls="--")
    top = int(np.argmin(df["rank_reference"].to_numpy()))
    ax.annotate(
        df["run_id"][top], (x[top], y[top]), fontsize=7, xytext=(4, -8), textcoords="offset points"
    )
    ax.set_xlabel(f"{m} under the reference")
    ax.set_ylabel(f"{m} under {o}")
    ax.set_title(
        f"tau_b {row['tau_b']:.3f} [{row['tau_b_low']:.3f}, {row['tau_b_high']:.3f}], "
        f"tau_AP {row['tau_ap']:.3f}, RBO {row['rbo']:.3f}",
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out
