"""Fusion parameters chosen on qrels: every configuration of a grid fused and scored as one batch.

ranx's ``optimize_fusion`` fuses and evaluates one configuration at a time.
Here the grid becomes fusion *groups* (the same runs, one group per
configuration, each with its weights or its scalar parameter), fused in one
kernel call, and the fused runs of every configuration (the configuration id
as run id) are scored in one pass of the evaluation engine
(:meth:`FusedRuns.evaluate`: trec_eval's definitions, as :func:`fasteval.evaluate`,
on the fused order, without writing a run table).

Grids (ranx's, :func:`fusion_grid`):

* weights (``combsum``/``wsum``, ``mixed``, ``wmnz``, ``borda``/``w_bordafuse``,
  ``condorcet``/``w_condorcet``): every tuple of ``round(i * step)`` values in
  ``[0, 1]``, one per run, whose float sum is exactly 1.0 (ranx's filter,
  which drops a few tuples such as ``(0.1, 0.2, 0.7)``); ``grid="simplex"``
  keeps every tuple whose exact sum is 1.
* ``rrf``: ``k`` in 10, 20, ..., 100; ``rbc``: ``phi``, ``combgmnz``:
  ``gamma``, ``logn_isr``: ``sigma`` in 0.01, 0.02, ..., 1.0;
  ``probfuse``: ``n_segments`` in 1..100; ``slidefuse``: ``w`` in 1..100
  (ranges settable).
* ``segfuse``, ``posfuse``, ``bayesfuse``, ``mapfuse``: training only (one
  configuration).

The best configuration is the one with the highest mean of the metric over
the queries scored (ties: the later configuration in grid order, as ranx's
``>=`` picks it). :func:`cross_validate_fusion` chooses on training folds of
queries and reports the metric on the held-out folds.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis.fusion.core import FusedRuns, kernel_fuse, method_params
from fasteval.analysis.fusion.inputs import FusionInput, prepare_fusion
from fasteval.analysis.fusion.methods import FusionMethod, check_norm, method_spec, norm_name
from fasteval.analysis.fusion.supervised import position_values, train_tables
from fasteval.errors import MeasureError, ParameterError
from fasteval.kernels import fusion as kf
from fasteval.measures.parser import parse_measures

_RANX_METRICS = {
    "ndcg": "nDCG",
    "map": "AP",
    "mrr": "RR",
    "precision": "P",
    "recall": "R",
    "r-precision": "Rprec",
}
_MAX_PV_BYTES = 256 * 2**20
WEIGHTED_GRID = ("combsum", "mixed", "wmnz", "borda", "condorcet")
_SCALAR_GRID: dict[str, tuple[str, float, float, float]] = {
    # method: (parameter, first, last, default step)
    "rrf": ("k", 10, 100, 10),
    "rbc": ("phi", 0.01, 1.0, 0.01),
    "combgmnz": ("gamma", 0.01, 1.0, 0.01),
    "logn_isr": ("sigma", 0.01, 1.0, 0.01),
    "probfuse": ("n_segments", 1, 100, 1),
    "slidefuse": ("w", 1, 100, 1),
}


def _digits(step: float) -> int:
    text = repr(float(step))
    return len(text.split(".")[1]) if "." in text and "e" not in text else 12


def fusion_grid(
    method: str,
    n_runs: int,
    *,
    step: float | None = None,
    first: float | None = None,
    last: float | None = None,
    grid: str = "ranx",
) -> list[dict[str, Any]]:
    """The configurations searched for ``method`` over ``n_runs`` runs (ranx's grid by default).

    Parameters
    ----------
    method
        Any fusion method name.
    n_runs
        Runs fused (weights: one per run).
    step
        Grid step (default ranx's: 0.1 for weights, 0.01 for phi/gamma/sigma,
        10 for k, 1 for n_segments and w).
    first, last
        The range of a scalar parameter (default ranx's).
    grid
        ``ranx`` (ranx's float filter on weight tuples) or ``simplex`` (every
        tuple of multiples of ``step`` summing to 1 exactly).

    Returns
    -------
    list of dict
        One parameter dict per configuration (``{"weights": (...)}``,
        ``{"k": 10.0}``, ...; ``[{}]`` for a method without parameters).
    """
    spec = method_spec(method)
    if grid not in ("ranx", "simplex"):
        msg = f"grid must be 'ranx' or 'simplex', got {grid!r}"
        raise ParameterError(msg)
    if spec.name in WEIGHTED_GRID:
        st = 0.1 if step is None else float(step)
        if not 0 < st <= 1:
            msg = f"the weight step must be in (0, 1], got {st}"
            raise ParameterError(msg)
        d = _digits(st)
        values = [round(float(x), d) for x in np.arange(0, 1 + st, st)]
        values = [v for v in values if v <= 1.0]
        if grid == "ranx":
            tuples = [t for t in itertools.product(values, repeat=n_runs) if sum(t) == 1.0]
        else:
            n = round(1 / st)
            if abs(n * st - 1) > 1e-9:
                msg = f"the simplex grid needs 1/step to be an integer, got step {st}"
                raise ParameterError(msg)
            tuples = [
                tuple(round(i * st, d) for i in c)
                for c in itertools.product(range(n + 1), repeat=n_runs)
                if sum(c) == n
            ]
        return [{"weights": t} for t in tuples]
    if spec.name in _SCALAR_GRID:
        name, lo, hi, st0 = _SCALAR_GRID[spec.name]
        st = st0 if step is None else float(step)
        lo = lo if first is None else float(first)
        hi = hi if last is None else float(last)
        if st <= 0 or hi < lo:
            msg = f"bad grid for {name}: from {lo} to {hi} by {st}"
            raise ParameterError(msg)
        if name in ("k", "n_segments", "w") and float(st).is_integer() and float(lo).is_integer():
            vals = [float(v) for v in range(int(lo), int(hi) + 1, int(st))]
        else:
            d = _digits(st)
            vals = [round(float(x), d) for x in np.arange(lo, hi + st, st)]
            vals = [v for v in vals if v <= hi + 1e-12]
        return [{name: v} for v in vals]
    return [{}]


def metric_name(metric: str) -> str:
    """A fasteval measure name for ``metric`` (ranx's ``ndcg@10``, ``map``... accepted)."""
    try:
        parse_measures([metric], compat=10)
        return metric
    except MeasureError:
        base, _, cut = metric.partition("@")
        alt = _RANX_METRICS.get(base.lower())
        if alt is None:
            raise
        name = f"{alt}@{cut}" if cut else alt
        parse_measures([name], compat=10)
        return name


def _cutoff(metric: str) -> int | None:
    ms = parse_measures([metric], compat=10)
    if len(ms) != 1:
        msg = f"metric must name one measure, got {metric!r}"
        raise ParameterError(msg)
    m = ms[0]
    if m.info.kind == "cutoffs" and m.params:
        return int(m.params[0])
    return None


def _score(fused: FusedRuns, metric: str, rel_level: int) -> tuple[np.ndarray, list[str]]:
    """Per configuration (fused run ``i``) and query of the qrels, the metric; and the query ids."""
    ev = fused.evaluate([metric], relevance_level=rel_level, complete=True)
    ev = ev.filter(pl.col("query_id") != "all")
    qids = sorted(ev["query_id"].unique().to_list())
    qpos = {q: i for i, q in enumerate(qids)}
    mat = np.full((fused.n_runs, len(qids)), np.nan)
    cfg = ev["run_id"].cast(pl.Int64).to_numpy()
    qi = np.array([qpos[q] for q in ev["query_id"].to_list()], np.int64)
    mat[cfg, qi] = ev["value"].cast(pl.Float64).to_numpy()
    return mat, qids


def _fuse_configs(
    fin: FusionInput,
    spec: FusionMethod,
    configs: Sequence[Mapping[str, Any]],
    group: np.ndarray,
    norm: str,
    depth: int,
    tables: Mapping[str, Any] | None,
    base: Mapping[str, Any],
) -> FusedRuns:
    """All configurations fused in one kernel call (chunks for big table methods)."""
    n_c = len(configs)
    nr = group.shape[0]
    members = np.tile(group, n_c).astype(np.int32)
    m_off = (np.arange(n_c + 1) * nr).astype(np.int64)
    w, g_par = _config_parameters(spec, configs, base, nr)
    pv = None
    g_set = None
    frames = []
    if spec.source == kf.SRC_TABLE:
        assert tables is not None
        chunk = max(1, _MAX_PV_BYTES // max(8 * fin.pos_doc.shape[0], 1))
    else:
        chunk = n_c
    for lo in range(0, n_c, chunk):
        hi = min(lo + chunk, n_c)
        if spec.source == kf.SRC_TABLE:
            assert tables is not None
            pv = _table_values(fin, spec, configs[lo:hi], group, norm, tables, base)
            g_set = np.arange(hi - lo, dtype=np.int64)
        fused = kernel_fuse(
            fin,
            spec,
            members[lo * nr : hi * nr],
            m_off[: hi - lo + 1],
            norm=norm,
            depth=depth,
            names=[str(i) for i in range(lo, hi)],
            slot_weights=w[lo:hi].reshape(-1),
            g_par=g_par[lo:hi],
            pv=pv,
            g_set=g_set,
        )
        frames.append(fused)
    return _concat_fused(fin, frames)


def _config_parameters(
    spec: FusionMethod,
    configs: Sequence[Mapping[str, Any]],
    base: Mapping[str, Any],
    n_runs: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Per configuration: its ``n_runs`` run weights (default 1) and its scalar parameter."""
    n_c = len(configs)
    w = np.ones((n_c, n_runs))
    g_par = np.zeros(n_c)
    for i, c in enumerate(configs):
        p = method_params(spec, {**base, **c})
        if "weights" in p:
            w[i] = np.asarray(p["weights"], np.float64)
        for key in ("k", "phi", "gamma", "sigma"):
            if key in p:
                g_par[i] = p[key]
    return w, g_par


def _table_values(
    fin: FusionInput,
    spec: FusionMethod,
    configs: Sequence[Mapping[str, Any]],
    group: np.ndarray,
    norm: str,
    tables: Any,
    base: Mapping[str, Any],
) -> np.ndarray:
    """A table method's per-position values, one row per configuration."""
    rows = []
    for c in configs:
        p = {**base, **c}
        tab: Any = tables
        if spec.name == "probfuse":
            tab = tab[int(p["n_segments"])]
        run_tables = {int(r): tab[fin.run_names[int(r)]] for r in group}
        rows.append(
            position_values(
                fin,
                spec,
                run_tables,
                fin.normalised(norm if norm != "borda" else "none"),
                p,
            )
        )
    return np.stack(rows)


def _concat_fused(fin: FusionInput, frames: Sequence[FusedRuns]) -> FusedRuns:
    """Fused runs of consecutive chunks of configurations as one."""
    if len(frames) == 1:
        return frames[0]
    offs = [frames[0].off]
    for f in frames[1:]:
        offs.append(f.off[1:] + offs[-1][-1])
    return FusedRuns(
        fin,
        [n for f in frames for n in f.names],
        np.concatenate(offs),
        np.concatenate([f.doc for f in frames]),
        np.concatenate([f.score for f in frames]),
    )


def _trained(
    fin: FusionInput,
    spec: FusionMethod,
    configs: Sequence[Mapping[str, Any]],
    rel_level: int,
    queries: np.ndarray | None,
) -> Any:
    if spec.trained is None:
        return None
    if spec.name == "probfuse":
        return {
            int(c["n_segments"]): train_tables(
                fin,
                spec.name,
                n_segments=int(c["n_segments"]),
                rel_level=rel_level,
                queries=queries,
            )["probs"]
            for c in configs
        }
    return train_tables(fin, spec.name, rel_level=rel_level, queries=queries)[spec.trained]


def _config_frame(
    spec: FusionMethod,
    configs: Sequence[Mapping[str, Any]],
    run_names: Sequence[str],
    values: np.ndarray,
    metric: str,
) -> pl.DataFrame:
    cols: dict[str, Any] = {"config": np.arange(len(configs), dtype=np.int64)}
    cols["method"] = [spec.name] * len(configs)
    if configs and "weights" in configs[0]:
        wt = np.array([c["weights"] for c in configs], np.float64).reshape(len(configs), -1)
        for j, r in enumerate(run_names):
            cols[f"w_{r}"] = wt[:, j]
    else:
        for key in configs[0] if configs else {}:
            cols[key] = [float(c[key]) for c in configs]
    cols[metric] = values
    df = pl.DataFrame(cols)
    # best first; among equal values the later configuration first (ranx's ">=")
    return df.sort([metric, "config"], descending=[True, True], nulls_last=True)


def _setup(
    qrels: Any,
    runs: Any,
    method: str,
    norm: str | None,
    metric: str,
    depth: int,
) -> tuple[FusionInput, FusionMethod, str, str, int]:
    spec = method_spec(method)
    if spec.upper_bound:
        msg = f"{spec.name} is an upper bound, not a method to tune"
        raise ParameterError(msg)
    nrm = norm_name(norm)
    check_norm(spec, nrm)
    metric = metric_name(metric)
    cut = _cutoff(metric)
    if depth <= 0:
        msg = f"depth must be positive, got {depth}"
        raise ParameterError(msg)
    eff_depth = min(depth, cut) if cut else depth
    if isinstance(runs, FusionInput):
        if qrels is not None:
            msg = "qrels are read by prepare_fusion(runs, qrels) when runs is a FusionInput"
            raise ParameterError(msg)
        fin = runs
        if fin.qrels is None:
            msg = "the FusionInput has no qrels: prepare_fusion(runs, qrels)"
            raise ParameterError(msg)
    else:
        fin = prepare_fusion(runs, qrels)
    return fin, spec, nrm, metric, eff_depth


def optimize_fusion(  # noqa: PLR0913 (public options)
    qrels: Any,
    runs: Any,
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: str = "nDCG@100",
    step: float | None = None,
    *,
    run_ids: Sequence[str] | None = None,
    grid: str = "ranx",
    first: float | None = None,
    last: float | None = None,
    depth: int = 1000,
    rel_level: int = 1,
    params: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Score every configuration of ``method``'s grid on ``qrels``, fused and scored as one batch.

    Parameters
    ----------
    qrels
        Qrels (anything :func:`fasteval.load_qrels` accepts); supervised
        methods also learn their tables from them.
    runs
        The runs to fuse (anything :func:`fasteval.load_runs` accepts).
    method
        A fusion method (ranx's names accepted; default ``wsum``).
    norm
        Score normalisation (default ``min-max``).
    metric
        The measure to maximise (fasteval or ranx spelling, e.g.
        ``nDCG@100`` or ``ndcg@100``), averaged over the qrels' queries
        (a query a fused run misses counts 0, as ranx counts it).
    step, first, last, grid
        The grid (:func:`fusion_grid`; default ranx's).
    run_ids
        Fuse only these runs (default: all, in the order read).
    depth
        Documents kept per fused ranking (a metric with a cutoff ``k`` needs
        only ``k``, and only ``k`` are kept).
    rel_level
        Grade ``>= rel_level`` is relevant (metric and training).
    params
        Fixed parameters besides the searched ones.

    Returns
    -------
    polars.DataFrame
        One row per configuration, best first: ``config`` (grid order),
        ``method``, the parameters (``w_<run>`` per run for weights, or
        ``k``/``phi``/``gamma``/``sigma``/``n_segments``/``w``) and the
        metric.
    """
    fin, spec, nrm, metric, eff_depth = _setup(qrels, runs, method, norm, metric, depth)
    group = fin.run_index(list(run_ids) if run_ids is not None else list(range(fin.n_runs)))
    configs = fusion_grid(spec.name, group.shape[0], step=step, first=first, last=last, grid=grid)
    base = dict(params or {})
    tables = _trained(fin, spec, configs, rel_level, None)
    if tables is not None and spec.name != "probfuse":
        base[spec.trained or ""] = tables
    frame = _fuse_configs(fin, spec, configs, group, nrm, eff_depth, tables, base)
    mat, _ = _score(frame, metric, rel_level)
    return _config_frame(
        spec, configs, [fin.run_names[i] for i in group], np.nanmean(mat, axis=1), metric
    )


def cross_validate_fusion(  # noqa: PLR0913 (public options)
    qrels: Any,
    runs: Any,
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: str = "nDCG@100",
    step: float | None = None,
    *,
    folds: int = 5,
    seed: int = 0,
    run_ids: Sequence[str] | None = None,
    grid: str = "ranx",
    first: float | None = None,
    last: float | None = None,
    depth: int = 1000,
    rel_level: int = 1,
    params: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Choose the configuration on training folds of queries and score it on the held-out fold.

    The qrels' queries are shuffled (``seed``) and cut into ``folds`` folds.
    For each fold, the configuration with the best mean metric over the
    other folds' queries is chosen (supervised methods also learn their
    tables from those queries only), and its mean metric over the fold's own
    queries is reported: the gain is not fitted to the queries it is
    measured on. The mean of the ``test`` column weighted by ``n_test`` is
    the cross-validated estimate.

    Returns
    -------
    polars.DataFrame
        One row per fold: ``fold, n_train, n_test, config``, the chosen
        parameters, ``train`` (its mean metric on the training queries) and
        ``test`` (on the fold's queries).
    """
    if folds < 2:
        msg = f"folds must be at least 2, got {folds}"
        raise ParameterError(msg)
    fin, spec, nrm, metric, eff_depth = _setup(qrels, runs, method, norm, metric, depth)
    group = fin.run_index(list(run_ids) if run_ids is not None else list(range(fin.n_runs)))
    configs = fusion_grid(spec.name, group.shape[0], step=step, first=first, last=last, grid=grid)
    fold_of = _query_folds(fin, folds, seed)
    base = dict(params or {})
    names = [fin.run_names[i] for i in group]
    shared = None
    rows = []
    for f in range(folds):
        train_q = (fold_of >= 0) & (fold_of != f)
        if spec.trained is not None or shared is None:
            tables = _trained(fin, spec, configs, rel_level, train_q)
            b = dict(base)
            if tables is not None and spec.name != "probfuse":
                b[spec.trained or ""] = tables
            frame = _fuse_configs(fin, spec, configs, group, nrm, eff_depth, tables, b)
            mat, qids = _score(frame, metric, rel_level)
            if spec.trained is None:
                shared = (mat, qids)
        else:
            mat, qids = shared
        pos = {q: i for i, q in enumerate(fin.qids)}
        cols = np.array([pos[q] for q in qids], np.int64)
        rows.append(_fold_row(f, mat, train_q[cols], fold_of[cols] == f, configs, names))
    return pl.DataFrame(rows)


def _query_folds(fin: FusionInput, folds: int, seed: int) -> np.ndarray:
    """Each query's fold: the qrels' queries shuffled (``seed``) and dealt out; others -1."""
    assert fin.in_qrels is not None
    qidx = np.flatnonzero(fin.in_qrels)
    if qidx.shape[0] < folds:
        msg = f"{qidx.shape[0]} queries cannot make {folds} folds"
        raise ParameterError(msg)
    rng = np.random.default_rng(seed)
    fold_of = np.empty(fin.n_q, np.int64)
    fold_of[:] = -1
    fold_of[rng.permutation(qidx)] = np.arange(qidx.shape[0]) % folds
    return fold_of


def _fold_row(
    f: int,
    mat: np.ndarray,
    is_train: np.ndarray,
    is_test: np.ndarray,
    configs: Sequence[Mapping[str, Any]],
    names: Sequence[str],
) -> dict[str, Any]:
    """Fold ``f``'s row: the configuration best on its training queries, scored on its own.

    ``mat`` is the metric per (configuration, query scored); ``is_train`` and
    ``is_test`` select the fold's training and test queries among its columns.
    """
    tr = np.nanmean(mat[:, is_train], axis=1)
    best = int(np.flatnonzero(tr == np.nanmax(tr))[-1])
    row: dict[str, Any] = {
        "fold": f,
        "n_train": int(is_train.sum()),
        "n_test": int(is_test.sum()),
        "config": best,
    }
    c = configs[best]
    if "weights" in c:
        for j, r in enumerate(names):
            row[f"w_{r}"] = float(c["weights"][j])
    else:
        row.update({k: float(v) for k, v in c.items()})
    row["train"] = float(tr[best])
    row["test"] = float(np.nanmean(mat[best, is_test]))
    return row
