"""The upper-bound study: joint RIC of groups of runs against what fusing them reaches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis.correlation import kendall_tau, spearman
from fasteval.analysis.fusion.core import (
    FusedRuns,
    Group,
    fuse_groups,
    groups_arrays,
    input_runs,
    random_groups,
)
from fasteval.analysis.fusion.inputs import FusionInput, prepare_fusion
from fasteval.analysis.fusion.methods import method_name
from fasteval.analysis.information import pair_data, row_means
from fasteval.engine import Prepared, compute
from fasteval.errors import ParameterError
from fasteval.measures.parser import Measure, MeasureSet, parse_measures
from fasteval.options import EvalOptions

STUDY_METHODS = ("combsum", "combmnz", "combanz", "condorcet", "naive", "pareto", "majoritarian")
_STUDY_KEYS = ("group", "runs", "method", "joint_RIC")
RIC_COLUMN = "RIC"


@dataclass
class _Scorer:
    """RIC and one measure of encoded rankings (fused or input), trec_eval-10 order."""

    fin: FusionInput
    measure: Any
    rel_level: int

    def __call__(self, fused: FusedRuns) -> tuple[np.ndarray, np.ndarray]:

        assert self.fin.qrels is not None
        enc = fused.encoded()
        prep = Prepared(self.fin.qrels, self.fin.runs, enc)
        ric = pair_data(prep, relevance_level=self.rel_level).ric_per_run()
        opts = EvalOptions(relevance_level=self.rel_level, compat=10)
        ev = compute(enc, MeasureSet([self.measure]), opts)
        return ric, ev.summary[:, 0]


def upper_bound_study(  # noqa: PLR0913 (public study options)
    qrels: Any,
    runs: Any = None,
    n_groups: int = 100,
    group_size: int = 10,
    seed: int = 0,
    methods: Sequence[str] = STUDY_METHODS,
    *,
    groups: Sequence[Group] | None = None,
    norm: str | None = "min-max",
    depth: int = 1000,
    rel_level: int = 1,
    measure: str = "map",
    batch: int = 50,
    progress: Any = None,
) -> pl.DataFrame:
    r"""Joint RIC of random groups of runs against what fusing each group reaches.

    For each of ``n_groups`` random groups of ``group_size`` runs (seeded,
    :func:`random_groups`), the joint RIC :math:`I(R_{S_1}, ..., R_{S_k}; Q)`
    of the group (an upper-bound estimate of metasearch over it; Golbus &
    Aslam 2013) and, for each fusion method, the RIC and ``measure`` (MAP by
    default) of the group's fused run. Every ranking (inputs and fused) is
    scored in the fusion order (float64 score, then doc id descending, i.e.
    ``compat=10``); each fused run keeps ``depth`` documents. Summarise with
    :func:`upper_bound_summary`.

    Parameters
    ----------
    qrels
        Qrels, or a :class:`FusionInput` prepared with qrels (``runs`` left out).
    runs
        Anything :func:`fasteval.load_runs` accepts (typically one archive).
    n_groups, group_size, seed
        The random groups (ignored when ``groups`` is given).
    methods
        Fusion methods and upper bounds (default: all seven).
    groups
        Explicit groups of run ids or indices instead of random ones.
    norm, depth, rel_level
        As for :func:`fuse_groups`; ``rel_level`` also sets RIC's truncation
        point and the measure's relevance level.
    measure
        A second measure of the fused runs (any measure name; default ``map``).
    batch
        Groups fused at once (bounds memory: ``batch * queries * depth`` documents).
    progress
        Called with the number of (group, method) fusions done after each step.

    Returns
    -------
    polars.DataFrame
        One row per (group, method): ``group, runs`` (comma-joined run ids),
        ``method, joint_RIC, RIC, <measure>`` and ``best_run_RIC,
        best_run_<measure>`` (the best single run of the group).

    References
    ----------
    Golbus, P. B., & Aslam, J. A. (2013). A mutual information-based framework
    for the analysis of information retrieval systems. SIGIR '13.
    Montague, M. (2002). Metasearch: data fusion for document retrieval. PhD
    thesis, Dartmouth College.
    """

    fin = _study_input(qrels, runs)
    ms, meas = _study_options(methods, measure, batch)
    if groups is None:
        if n_groups < 1:
            msg = f"n_groups must be positive, got {n_groups}"
            raise ParameterError(msg)
        groups = random_groups(fin.n_runs, n_groups, group_size, seed)
    idx = [fin.run_index(list(g)) for g in groups]
    groups_arrays(fin, groups)  # validates the groups
    score = _Scorer(fin, meas, rel_level)
    # every input run once: RIC, measure, and the pair data for joint RIC
    assert fin.qrels is not None
    base = input_runs(fin)
    data = pair_data(Prepared(fin.qrels, fin.runs, base.encoded()), relevance_level=rel_level)
    run_ric = data.ric_per_run()
    run_meas = score(base)[1]
    names = [[fin.run_names[i] for i in ix] for ix in idx]
    n_g = len(idx)
    joint = np.empty(n_g)
    val_ric = np.empty((len(ms), n_g))
    val_meas = np.empty((len(ms), n_g))
    for lo in range(0, n_g, batch):
        hi = min(lo + batch, n_g)
        _, per_q = data.joint_ric(names[lo:hi])
        joint[lo:hi] = row_means(per_q)
        for j, m in enumerate(ms):
            fused = fuse_groups(fin, idx[lo:hi], m, norm=norm, depth=depth, rel_level=rel_level)
            val_ric[j, lo:hi], val_meas[j, lo:hi] = score(fused)
            if progress is not None:
                progress(hi - lo)
    with np.errstate(all="ignore"):
        best_ric = np.array([np.nanmax(run_ric[ix]) for ix in idx])
        best_meas = np.array([np.nanmax(run_meas[ix]) for ix in idx])
    return _study_frame(ms, names, joint, (val_ric, val_meas), (best_ric, best_meas), meas.name)


def _study_input(qrels: Any, runs: Any) -> FusionInput:
    """The study's runs and qrels, prepared (or given prepared as ``qrels``)."""
    if isinstance(qrels, FusionInput):
        if runs is not None:
            msg = "pass either a FusionInput or qrels and runs, not both"
            raise ParameterError(msg)
        fin = qrels
    else:
        if runs is None:
            msg = "runs are required"
            raise ParameterError(msg)
        fin = prepare_fusion(runs, qrels)
    if fin.qrels is None:
        msg = "the upper-bound study needs qrels (prepare_fusion(runs, qrels))"
        raise ParameterError(msg)
    return fin


def _study_options(methods: Sequence[str], measure: str, batch: int) -> tuple[list[str], Measure]:
    """The study's canonical method names and its one measure, checked (with ``batch``)."""
    ms = [method_name(m) for m in methods]
    if not ms or len(set(ms)) != len(ms):
        msg = f"methods must be a non-empty list without repeats, got {list(methods)!r}"
        raise ParameterError(msg)
    mset = parse_measures([measure], compat=10)
    if len(mset) != 1:
        msg = f"measure must name one measure, got {measure!r}"
        raise ParameterError(msg)
    if batch < 1:
        msg = f"batch must be positive, got {batch}"
        raise ParameterError(msg)
    return ms, mset[0]


def _study_frame(
    ms: Sequence[str],
    names: Sequence[Sequence[str]],
    joint: np.ndarray,
    fused: tuple[np.ndarray, np.ndarray],
    best: tuple[np.ndarray, np.ndarray],
    col: str,
) -> pl.DataFrame:
    """One row per (group, method): the study's table (:func:`upper_bound_study`).

    ``fused`` holds the fused runs' RIC and measure ``col`` per (method,
    group); ``best`` the group's best single run's, per group.
    """
    n_m = len(ms)
    n_g = len(names)
    val_ric, val_meas = fused
    best_ric, best_meas = best
    return pl.DataFrame(
        {
            "group": np.tile(np.arange(n_g, dtype=np.int64), n_m),
            "runs": [",".join(n) for n in names] * n_m,
            "method": np.repeat(ms, n_g).tolist(),
            "joint_RIC": np.tile(joint, n_m),
            RIC_COLUMN: val_ric.ravel(),
            col: val_meas.ravel(),
            f"best_run_{RIC_COLUMN}": np.tile(best_ric, n_m),
            f"best_run_{col}": np.tile(best_meas, n_m),
        }
    ).sort(["group"], maintain_order=True)


def upper_bound_summary(study: pl.DataFrame, targets: Sequence[str] | None = None) -> pl.DataFrame:
    r"""Per method, how well the joint RIC of a group predicts its fused run.

    For each method and target column (default: ``RIC`` and the study's
    measure), over the groups: Kendall's :math:`\tau_b` and Spearman's
    :math:`\rho` between ``joint_RIC`` and the target, and
    :math:`RMSE = \sqrt{\frac{1}{n}\sum_g (\text{joint\_RIC}_g - y_g)^2}`
    (on a measure other than RIC the RMSE mixes scales; it is reported as
    SPEC 8 asks). Groups with a NaN value are left out (``n_groups``).

    Returns
    -------
    polars.DataFrame
        ``method, target, n_groups, kendall_tau, spearman_rho, rmse,
        mean_joint_RIC, mean_target``.
    """

    missing = [c for c in (*_STUDY_KEYS, RIC_COLUMN) if c not in study.columns]
    if missing:
        msg = f"not an upper-bound study table: missing column(s) {', '.join(missing)}"
        raise ParameterError(msg)
    if targets is None:
        targets = [
            c for c in study.columns if c not in _STUDY_KEYS and not c.startswith("best_run_")
        ]
    for t in targets:
        if t not in study.columns:
            msg = f"unknown target column {t!r}; the table has {', '.join(study.columns)}"
            raise ParameterError(msg)
    rows = []
    for m in study["method"].unique(maintain_order=True).to_list():
        part = study.filter(pl.col("method") == m)
        for t in targets:
            x = part["joint_RIC"].to_numpy().astype(np.float64)
            y = part[t].to_numpy().astype(np.float64)
            ok = ~(np.isnan(x) | np.isnan(y))
            x, y = x[ok], y[ok]
            n = int(x.shape[0])
            tau = kendall_tau(x, y, "b") if n >= 2 else float("nan")
            rho = spearman(x, y) if n >= 2 else float("nan")
            rmse = float(np.sqrt(np.mean((x - y) ** 2))) if n else float("nan")
            mx = float(x.mean()) if n else float("nan")
            my = float(y.mean()) if n else float("nan")
            rows.append((m, t, n, tau, rho, rmse, mx, my))
    return pl.DataFrame(
        rows,
        schema={
            "method": pl.String,
            "target": pl.String,
            "n_groups": pl.Int64,
            "kendall_tau": pl.Float64,
            "spearman_rho": pl.Float64,
            "rmse": pl.Float64,
            "mean_joint_RIC": pl.Float64,
            "mean_target": pl.Float64,
        },
        orient="row",
    )
