"""Figures of robustness studies: a statistic against the setting, CI band, min/max curves."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from fasteval.errors import ParameterError
from fasteval.io.writers import write_figure


def plot_study(
    summary: pl.DataFrame,
    path: str | os.PathLike[str],
    *,
    statistic: str = "tau",
    measures: Sequence[str] | None = None,
    xlabel: str = "setting",
    title: str | None = None,
) -> Path:
    """Plot ``statistic`` per setting: mean line, 95% CI band, dashed min and max curves.

    ``summary`` is :attr:`StudyResult.summary`. Settings with a numeric ``x``
    (rates, depths) are placed on that axis; named settings (groups) are
    evenly spaced and labelled. Writes a PNG (or any format matplotlib infers
    from ``path``) and returns its path.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    df = summary.filter(pl.col("statistic") == statistic)
    if df.height == 0:
        have = sorted(set(summary["statistic"].to_list()))
        msg = f"no {statistic!r} rows in the summary (have {have})"
        raise ParameterError(msg)
    names = list(measures) if measures is not None else list(dict.fromkeys(df["measure"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    labels: list[str] = []
    for m in names:
        d = df.filter(pl.col("measure") == m)
        x = d["x"].to_numpy()
        if np.isnan(x).any():
            labels = d["setting"].to_list()
            x = np.arange(d.height, dtype=np.float64)
        (line,) = ax.plot(x, d["mean"].to_numpy(), marker="o", ms=3, label=m)
        c = line.get_color()
        ax.fill_between(x, d["ci_low"].to_numpy(), d["ci_high"].to_numpy(), color=c, alpha=0.25)
        ax.plot(x, d["min"].to_numpy(), ls="--", lw=0.8, color=c)
        ax.plot(x, d["max"].to_numpy(), ls="--", lw=0.8, color=c)
    if labels:
        ax.set_xticks(np.arange(len(labels)), labels, rotation=90, fontsize=6)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{statistic} vs full qrels")
    ax.grid(alpha=0.3)
    ax.legend(title="mean, 95% CI; min/max dashed", fontsize=8, title_fontsize=8)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out
