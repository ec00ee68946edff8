"""Figures for the information-theoretic measures (needs the ``plots`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fasteval.analysis.information import PairData
from fasteval.io.writers import write_figure


def ric_vs_measures(
    data: PairData,
    path: str | Path,
    measures: tuple[str, ...] = ("map", "ndcg"),
) -> Path:
    """Scatter RIC against other measures (default AP and nDCG) over the runs of an archive.

    Each point is a run; the title gives Kendall's tau_b between the two
    system rankings.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from fasteval.analysis.correlation import kendall_tau
    from fasteval.engine import compute
    from fasteval.measures.parser import parse_measures
    from fasteval.options import EvalOptions

    ric = data.ric_per_run()
    mset = parse_measures(list(measures))
    ev = compute(data.prep.enc, mset, EvalOptions(relevance_level=data.level))
    fig, axes = plt.subplots(1, len(mset), figsize=(4.5 * len(mset), 4.2), squeeze=False)
    for j, m in enumerate(mset):
        ax: Any = axes[0, j]
        x = ev.summary[:, j]
        ax.scatter(x, ric, s=12, alpha=0.7)
        ax.set_xlabel(m.name)
        ax.set_ylabel("RIC (bits)")
        ok = ~np.isnan(ric)
        tau = kendall_tau(x[ok], ric[ok]) if ok.sum() >= 2 else float("nan")
        ax.set_title(f"RIC vs {m.name}: tau_b = {tau:.3f} ({ok.sum()} runs)")
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out


def id_vs_delta_ap(
    data: PairData,
    path: str | Path,
    n_pairs: int = 1000,
    seed: int = 20251122,
) -> Path:
    """Scatter information difference against |delta AP| for random pairs of runs.

    Pairs are drawn uniformly without repetition (seeded); a pair with small
    |delta AP| but large id ranks documents differently at the same quality.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from fasteval.analysis.information import all_pairs
    from fasteval.engine import compute
    from fasteval.measures.parser import parse_measures
    from fasteval.options import EvalOptions

    a, b = all_pairs(len(data.run_names))
    rng = np.random.default_rng(seed)
    pick = rng.choice(a.shape[0], size=min(n_pairs, a.shape[0]), replace=False)
    a, b = a[pick], b[pick]
    ev = compute(data.prep.enc, parse_measures(["map"]), EvalOptions(relevance_level=data.level))
    ap = ev.summary[:, 0]
    ids, _ = data.information_difference(a, b)
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    ax.scatter(np.abs(ap[a] - ap[b]), ids, s=8, alpha=0.5)
    ax.set_xlabel("|delta AP|")
    ax.set_ylabel("information difference (bits)")
    ax.set_title(f"{a.shape[0]} random pairs of runs (seed {seed})")
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=120)
    plt.close(fig)
    return out
