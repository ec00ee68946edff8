"""Figures for histogram analysis: the two log-count histograms and the fitted log-ratio.

matplotlib is imported inside the functions (the optional ``plots`` extra);
figures are drawn on the Agg backend and written to files.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from fasteval.analysis.hsa import Histograms
from fasteval.io.writers import write_figure


def _draw(axes: Any, h_r: np.ndarray, h_nr: np.ndarray, hsa: float, do: float, name: str) -> None:
    """Draw one run on two axes: log counts per bin, and O(b) with its least-squares line."""
    k = h_r.shape[0]
    centres = (np.arange(k) + 0.5) / k
    width = 1.0 / k
    ax0, ax1 = axes
    with np.errstate(divide="ignore"):
        lr = np.where(h_r > 0, np.log(np.maximum(h_r, 1)), np.nan)
        ln = np.where(h_nr > 0, np.log(np.maximum(h_nr, 1)), np.nan)
    ax0.bar(centres - width / 4, np.nan_to_num(lr), width / 2, label="relevant", color="tab:blue")
    ax0.bar(
        centres + width / 4, np.nan_to_num(ln), width / 2, label="non-relevant", color="tab:orange"
    )
    ax0.set_xlim(0, 1)
    ax0.set_xlabel("normalised value (bin)")
    ax0.set_ylabel("ln(count)")
    ax0.set_title(f"{name}: DO = {do:.3g}")
    ax0.legend(loc="upper center", fontsize="small")
    sup = (h_r > 0) & (h_nr > 0)
    o = np.log(h_r[sup] / h_nr[sup])
    b = centres[sup]
    ax1.plot(b, o, "o", color="tab:green", label="ln(h_r / h_nr)")
    if sup.sum() >= 2 and np.isfinite(hsa):
        xs = np.array([0.0, 1.0])
        ax1.plot(
            xs, o.mean() + hsa * (xs - b.mean()), "-", color="k", label=f"slope HSA = {hsa:.3g}"
        )
    ax1.axhline(0.0, color="grey", lw=0.5)
    ax1.set_xlim(0, 1)
    ax1.set_xlabel("bin centre b")
    ax1.set_ylabel("O(b) = ln(h_r / h_nr)")
    ax1.set_title(f"{name}: {int(sup.sum())} supported bins")
    ax1.legend(loc="upper left", fontsize="small")


def plot_runs(
    hist: Histograms,
    rows: list[int],
    names: list[str],
    path: str | os.PathLike[str],
) -> None:
    """Write one figure with a row of two panels per run (e.g. two runs side by side).

    Parameters
    ----------
    hist
        Histograms from :func:`fasteval.analysis.hsa.histogram_analysis_prepared`
        (``return_histograms=True``) or :func:`~fasteval.analysis.hsa.histogram_arrays`.
    rows
        Which rows of ``hist`` to draw (one figure row each).
    names
        Their labels.
    path
        The PNG (or any format matplotlib knows from the suffix) to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(rows)
    fig, axes = plt.subplots(n, 2, figsize=(10, 3.6 * n), squeeze=False)
    for i, (r, name) in enumerate(zip(rows, names, strict=True)):
        _draw(axes[i], hist.h_r[r], hist.h_nr[r], float(hist.hsa[r]), float(hist.do[r]), name)
    fig.tight_layout()
    write_figure(fig, path, dpi=90)
    plt.close(fig)
