"""Figures for metasearch: the upper-bound study (needs the ``plots`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval.io.writers import write_figure


def upper_bound_scatter(
    study: pl.DataFrame,
    path: str | Path,
    targets: Sequence[str] | None = None,
) -> Path:
    """Scatter the joint RIC of each group against what each fusion method reaches.

    One panel per (target, method): x = joint RIC of the group's runs, y =
    the fused run's RIC (first row) or measure (second row), one point per
    group, with the line y = x and the summary statistics (Kendall's tau_b,
    Spearman's rho, RMSE; :func:`fasteval.analysis.fusion.upper_bound_summary`)
    in the title.

    Parameters
    ----------
    study
        The table of :func:`fasteval.analysis.fusion.upper_bound_study`.
    path
        Output image (``.png``, ``.pdf``, ``.svg``).
    targets
        Columns to plot against joint RIC (default: ``RIC`` and the measure).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from fasteval.analysis.fusion import upper_bound_summary

    summary = upper_bound_summary(study, targets)
    methods = summary["method"].unique(maintain_order=True).to_list()
    tgts = summary["target"].unique(maintain_order=True).to_list()
    n_groups = study["group"].n_unique()
    fig, axes = plt.subplots(
        len(tgts),
        len(methods),
        figsize=(2.9 * len(methods), 2.9 * len(tgts)),
        squeeze=False,
        sharex=True,
        sharey="row",
    )
    stats = {(r["method"], r["target"]): r for r in summary.iter_rows(named=True)}
    for i, t in enumerate(tgts):
        for j, m in enumerate(methods):
            ax: Any = axes[i, j]
            part = study.filter(pl.col("method") == m)
            x = part["joint_RIC"].to_numpy()
            y = part[t].to_numpy()
            ax.scatter(x, y, s=6, alpha=0.5)
            ok = ~(np.isnan(x) | np.isnan(y))
            if ok.any():
                lo = float(min(x[ok].min(), y[ok].min()))
                hi = float(max(x[ok].max(), y[ok].max()))
                ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
            s = stats[(m, t)]
            ax.set_title(
                f"{m}\ntau {s['kendall_tau']:.2f}  rho {s['spearman_rho']:.2f}  "
                f"rmse {s['rmse']:.2f}",
                fontsize=8,
            )
            if i == len(tgts) - 1:
                ax.set_xlabel("joint RIC of the group (bits)", fontsize=8)
            if j == 0:
                ax.set_ylabel(f"fused {t}", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.suptitle(f"Joint RIC vs fusion, {n_groups} groups", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out
