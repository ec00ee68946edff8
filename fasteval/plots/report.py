"""Figures of the evaluation report: interpolated precision-recall curves and
per-topic difference from the median average precision."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fasteval.io.writers import write_figure

if TYPE_CHECKING:
    from fasteval.analysis.report import Report


def _pyplot() -> Any:
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def precision_recall(
    rep: Report,
    path: str | Path,
    runs: Sequence[str] | None = None,
    *,
    highlight: str | None = None,
    title: str | None = None,
) -> Path:
    """Interpolated precision at the 11 recall levels, one line per run.

    Parameters
    ----------
    rep
        A :class:`fasteval.analysis.report.Report`.
    path
        Where to write the figure (the suffix picks the format, e.g. ``.png``).
    runs
        Runs to draw (default: every run of the report).
    highlight
        A run drawn bold over the others, which are then drawn thin and grey.
    title
        Figure title.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    from fasteval.analysis.report import IPREC, RECALL_LEVELS

    plt = _pyplot()
    names = list(runs) if runs is not None else rep.runs
    summ = {r["run_id"]: r for r in rep.summary.iter_rows(named=True)}
    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
    try:
        for name in names:
            y = [summ[name][c] for c in IPREC]
            if highlight is None:
                ax.plot(RECALL_LEVELS, y, marker="o", markersize=3, label=name)
            elif name != highlight:
                ax.plot(RECALL_LEVELS, y, color="0.75", linewidth=0.8)
        if highlight is not None:
            y = [summ[highlight][c] for c in IPREC]
            ax.plot(RECALL_LEVELS, y, color="C3", marker="o", linewidth=2, label=highlight)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("recall")
        ax.set_ylabel("interpolated precision")
        ax.grid(True, linewidth=0.3)
        ax.set_title(title or "Interpolated recall-precision (averaged over topics)")
        if names and (highlight is not None or len(names) <= 15):
            ax.legend(fontsize=7, loc="upper right")
        out = Path(path)
        write_figure(fig, out, bbox_inches="tight")
    finally:
        plt.close(fig)
    return out


def median_difference(rep: Report, run_id: str, path: str | Path) -> Path:
    """Per topic, the run's average precision minus the median over its group,
    as bars (the NIST summary graph), with the best and worst as whiskers.

    Parameters
    ----------
    rep
        A :class:`fasteval.analysis.report.Report`.
    run_id
        The run.
    path
        Where to write the figure.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    plt = _pyplot()
    t = rep.vs_median(run_id)
    q = t["query_id"].to_list()
    x = list(range(len(q)))
    diff = t["diff"].to_numpy()
    med = t["map_median"].to_numpy()
    fig, ax = plt.subplots(figsize=(max(6.4, 0.16 * len(q) + 2), 4.0), dpi=100)
    try:
        ax.vlines(
            x,
            t["map_worst"].to_numpy() - med,
            t["map_best"].to_numpy() - med,
            color="0.8",
            linewidth=3,
            label="worst .. best",
        )
        colours = ["C2" if d >= 0 else "C3" for d in diff]
        ax.bar(x, diff, color=colours, width=0.6, label="this run - median")
        ax.axhline(0, color="k", linewidth=0.6)
        ax.set_xticks(x)
        ax.set_xticklabels(q, rotation=90, fontsize=6)
        ax.set_xlabel("topic")
        ax.set_ylabel("average precision - median")
        n = int(t["n_runs"].to_numpy().max(initial=0))
        ax.set_title(f"{run_id}: difference from the median AP over {n} runs")
        ax.legend(fontsize=7)
        out = Path(path)
        write_figure(fig, out, bbox_inches="tight")
    finally:
        plt.close(fig)
    return out
