"""The content study's figure, in the style of Hui's Figure 3 (tau against the sampling rate)."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from fasteval.errors import ParameterError
from fasteval.io.writers import write_figure

_CURVES = {
    "a": ("labels, reduced qrels", "o", "-"),
    "b": ("content measure, reduced qrels", "s", "-"),
    "c": ("labels, reduced qrels + completion", "^", "--"),
}


def plot_content_study(
    summary: pl.DataFrame,
    path: str | os.PathLike[str],
    *,
    statistic: str = "tau",
    title: str | None = None,
) -> Path:
    """Mean ``statistic`` per sampling rate for curves a, b, c with 95% CI bands.

    ``summary`` is the summary of :func:`fasteval.analysis.content_study.content_study`
    (measures ``a:<label>``, ``b:<content>``, ``c:<label>``).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    df = summary.filter(pl.col("statistic") == statistic)
    if df.height == 0:
        msg = f"no {statistic!r} rows in the summary"
        raise ParameterError(msg)
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    for name in dict.fromkeys(df["measure"].to_list()):
        curve, _, measure = name.partition(":")
        label, marker, ls = _CURVES.get(curve, (name, "o", "-"))
        d = df.filter(pl.col("measure") == name).sort("x")
        x = d["x"].to_numpy()
        (line,) = ax.plot(
            x,
            d["mean"].to_numpy(),
            marker=marker,
            ms=4,
            ls=ls,
            label=f"({curve}) {measure}: {label}",
        )
        ax.fill_between(
            x, d["ci_low"].to_numpy(), d["ci_high"].to_numpy(), color=line.get_color(), alpha=0.2
        )
    ax.set_xlabel("sampling rate of the judgments")
    ax.set_ylabel(f"Kendall's {statistic} with the full-qrels ranking")
    ax.set_ylim(top=1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out
