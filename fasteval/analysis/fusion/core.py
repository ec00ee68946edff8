"""Fused runs: the kernel call over many fusion groups, and :func:`fuse`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from fasteval import parallel
from fasteval.analysis.fusion.inputs import FusionInput, prepare_fusion
from fasteval.analysis.fusion.methods import (
    NORMS,
    REGISTRY,
    FusionMethod,
    check_norm,
    method_spec,
    norm_name,
)
from fasteval.analysis.fusion.supervised import position_values, table_for, train_tables
from fasteval.engine import compute, to_frame
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.kernels import families as fm
from fasteval.kernels import fusion as kf
from fasteval.measures.parser import parse_measures
from fasteval.options import EvalOptions

# a fusion group: run ids or run numbers
Group = Sequence[str | int] | np.ndarray


@dataclass
class FusedRuns:
    """Fused runs in compact form: item ``i`` = (fused run ``i // n_q``, query ``i % n_q``).

    Item ``i``'s documents (codes within the query) and scores are
    ``doc[off[i]:off[i+1]]``, ``score[...]``, best first.
    """

    source: FusionInput
    names: list[str]
    off: np.ndarray
    doc: np.ndarray
    score: np.ndarray

    @property
    def n_runs(self) -> int:
        return len(self.names)

    def _flat(self) -> tuple[np.ndarray, np.ndarray]:
        n_q = self.source.n_q
        item = np.repeat(np.arange(self.off.shape[0] - 1), np.diff(self.off))
        q = item % n_q
        return item, self.source.qdoc_off[q] + self.doc

    def to_frame(self) -> pl.DataFrame:
        """The fused runs in the run schema ``run_id, query_id, doc_id, rank, score``."""
        src = self.source
        item, flat = self._flat()
        lens = np.diff(self.off)
        rank = np.arange(self.doc.shape[0], dtype=np.int64) - np.repeat(self.off[:-1], lens) + 1
        names = pa.array(self.names, pa.large_string())
        qids = pa.array(src.qids, pa.large_string())
        table = pa.table(
            {
                "run_id": names.take(pa.array(item // src.n_q)),
                "query_id": qids.take(pa.array(item % src.n_q)),
                "doc_id": src.runs.doc.take(src.qdoc_row[flat]),
                "rank": pa.array(rank, pa.int64()),
                "score": pa.array(self.score, pa.float64()),
            }
        )
        return pl.from_arrow(table)  # type: ignore[return-value]

    def encoded(self, *, complete: bool = False) -> Encoded:
        """The fused rankings judged against the qrels, for :func:`fasteval.engine.compute`.

        Groups are (fused run, query) for queries in the qrels (with
        ``complete``, also those the fused run misses, as empty rankings).
        """
        src = self.source
        if src.qdoc_jdx is None or src.qr_rel is None or src.in_qrels is None:
            msg = "evaluating fused runs needs qrels (prepare_fusion(runs, qrels))"
            raise ParameterError(msg)
        assert src.qr_off is not None and src.qr_rows is not None
        _, flat = self._flat()
        jdx = src.qdoc_jdx[flat]
        grade = src.qr_rel[np.maximum(jdx, 0)]
        rel = np.where(jdx >= 0, np.where(grade < 0, fm.UNJUDGED, grade), fm.NONPOOL)
        n_q = src.n_q
        n_items = self.off.shape[0] - 1
        g_q = np.tile(np.arange(n_q, dtype=np.int32), n_items // n_q)
        g_run = np.repeat(np.arange(n_items // n_q, dtype=np.int32), n_q)
        present = np.diff(self.off) > 0
        sel = np.flatnonzero(src.in_qrels[g_q] & (present | complete))
        return Encoded(
            run_names=list(self.names),
            qids=list(src.qids),
            in_qrels=src.in_qrels,
            starts=np.ascontiguousarray(self.off[:-1][sel]),
            ends=np.ascontiguousarray(self.off[1:][sel]),
            group_run=g_run[sel],
            group_q=g_q[sel],
            rel=np.ascontiguousarray(rel.astype(np.int32)),
            row=src.qdoc_row[flat],
            jdx=jdx,
            qr_off=src.qr_off,
            qr_rel=src.qr_rel,
            qr_rows=src.qr_rows,
        )

    def evaluate(
        self,
        measures: str | Sequence[str] | None = None,
        *,
        relevance_level: int = 1,
        complete: bool = False,
    ) -> pl.DataFrame:
        """Score the fused runs (trec_eval semantics on the fused order) like :func:`evaluate`.

        With ``complete``, a query of the qrels a fused run misses scores 0
        (trec_eval's ``-c``; ranx's convention).
        """

        mset = parse_measures(measures)
        enc = self.encoded(complete=complete)
        opts = EvalOptions(compat=10, relevance_level=relevance_level, complete=complete)
        ev = compute(enc, mset, opts)
        return to_frame(ev, per_query=True, compat=10)


def groups_arrays(fin: FusionInput, groups: Sequence[Group]) -> tuple[np.ndarray, np.ndarray]:
    if len(groups) == 0:
        msg = "no fusion groups given"
        raise ParameterError(msg)
    parts = []
    for g in groups:
        idx = fin.run_index(list(g))
        if idx.shape[0] == 0:
            msg = "a fusion group has no runs"
            raise ParameterError(msg)
        if np.unique(idx).shape[0] != idx.shape[0]:
            msg = f"a fusion group names a run twice: {[fin.run_names[i] for i in idx]}"
            raise ParameterError(msg)
        parts.append(idx)
    members = np.concatenate(parts).astype(np.int32)
    m_off = np.concatenate([[0], np.cumsum([p.shape[0] for p in parts])]).astype(np.int64)
    return members, m_off


def _run_weights(
    fin: FusionInput, weights: Sequence[float] | Mapping[str, float] | None, spec: FusionMethod
) -> np.ndarray:
    """One weight per run of ``fin`` (all 1 by default)."""
    w = np.ones(fin.n_runs, np.float64)
    if weights is None:
        return w
    if not spec.weighted:
        takes = ", ".join(n for n, m in REGISTRY.items() if m.weighted)
        msg = f"weights apply to {takes}; not to {spec.name}"
        raise ParameterError(msg)
    if isinstance(weights, Mapping):
        unknown = [r for r in weights if r not in fin.run_names]
        if unknown:
            msg = f"weights name unknown run(s) {unknown[:5]} (runs: {fin.run_names[:8]})"
            raise ParameterError(msg)
        for r, v in weights.items():
            w[fin.run_names.index(r)] = float(v)
    else:
        vals = [float(v) for v in weights]
        if len(vals) != fin.n_runs:
            msg = f"{len(vals)} weights for {fin.n_runs} runs"
            raise ParameterError(msg)
        w[:] = vals
    if not np.isfinite(w).all():
        msg = f"weights must be finite numbers, got {w.tolist()}"
        raise ParameterError(msg)
    return w


def method_params(spec: FusionMethod, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """``params`` checked against the method's (defaults filled in; tables passed through)."""
    given = dict(params or {})
    out: dict[str, Any] = {}
    known = set(spec.params) | ({spec.trained} if spec.trained else set())
    known |= {"weights"} if spec.weighted else set()
    if spec.name == "probfuse":
        known.add("n_segments")
    unknown = sorted(set(given) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "no parameters"
        msg = f"{spec.name} takes {takes}; got {', '.join(unknown)}"
        raise ParameterError(msg)
    for name, default in spec.params.items():
        v = given.get(name, default)
        if v is None:
            if spec.trained is not None and spec.trained in given:
                continue  # e.g. probfuse's n_segments: implied by the trained table
            msg = f"{spec.name} needs the parameter {name} (params={{{name!r}: ...}})"
            raise ParameterError(msg)
        v = float(v)
        if not np.isfinite(v):
            msg = f"{spec.name}: {name} must be a finite number, got {v}"
            raise ParameterError(msg)
        out[name] = v
    _check_ranges(spec.name, out)
    if spec.trained is not None and spec.trained in given:
        out[spec.trained] = given[spec.trained]
    if "weights" in given:
        out["weights"] = given["weights"]
    return out


def _check_ranges(name: str, p: Mapping[str, float]) -> None:
    checks = {
        "k": (lambda v: v >= 0, "a number >= 0"),
        "phi": (lambda v: 0 <= v <= 1, "in [0, 1]"),
        "sigma": (lambda v: 0 <= v <= 1, "in [0, 1]"),
        "gamma": (lambda v: True, "a number"),
        "w": (lambda v: v >= 0 and float(v).is_integer(), "an integer >= 0"),
        "n_segments": (lambda v: v >= 1 and float(v).is_integer(), "an integer >= 1"),
    }
    for key, v in p.items():
        ok, what = checks.get(key, (lambda v: True, ""))
        if not ok(v):
            msg = f"{name}: {key} must be {what}, got {v}"
            raise ParameterError(msg)


def kernel_fuse(  # noqa: PLR0913 (the kernel's inputs)
    fin: FusionInput,
    spec: FusionMethod,
    members: np.ndarray,
    m_off: np.ndarray,
    *,
    norm: str,
    depth: int,
    names: Sequence[str],
    slot_weights: np.ndarray,
    g_par: np.ndarray | None = None,
    pv: np.ndarray | None = None,
    g_set: np.ndarray | None = None,
    rel_level: int = 1,
) -> FusedRuns:
    """Fuse groups given as arrays: member slots with weights, one parameter per group.

    ``members[m_off[g]:m_off[g+1]]`` are group ``g``'s runs and
    ``slot_weights`` their weights; ``g_par[g]`` is the group's scalar
    parameter (RRF's k, RBC's phi, gamma, sigma); ``pv[g_set[g]]`` the
    per-position values of a table method (:func:`.supervised.position_values`).
    This is the batch entry point (:func:`optimize_fusion` fuses every
    configuration in one call).
    """
    n_g = m_off.shape[0] - 1
    nscore = fin.normalised(norm if norm != "borda" else "none")
    tot = _list_totals(fin, members, m_off)
    out, bound = _output_slots(tot, depth)
    max_m = int(np.diff(fin.qdoc_off).max(initial=1))
    if g_par is None:
        g_par = np.zeros(n_g, np.float64)
    if pv is None:
        pv = np.zeros((1, 1), np.float64)
    if g_set is None:
        g_set = np.zeros(n_g, np.int64)
    parallel.run(
        kf.fuse_items,
        _item_work(tot, spec, m_off, fin.n_q),
        kf.How(
            int(spec.combiner),
            int(spec.source),
            int(NORMS[norm]),
            float(spec.miss),
            max_m,
            int(depth),
        ),
        kf.Lists(int(fin.n_q), int(fin.n_runs), fin.kstart, fin.pos_doc, nscore),
        kf.FusionGroups(
            members,
            m_off,
            np.ascontiguousarray(slot_weights, dtype=np.float64),
            np.ascontiguousarray(g_par, dtype=np.float64),
            np.ascontiguousarray(g_set, dtype=np.int64),
            np.ascontiguousarray(pv, dtype=np.float64),
        ),
        kf.Judged(fin.qdoc_off, fin.grade_class(rel_level)),
        out,
    )
    off, doc, score = _trimmed(out, bound)
    return FusedRuns(fin, list(names), off, doc, score)


def _list_totals(fin: FusionInput, members: np.ndarray, m_off: np.ndarray) -> np.ndarray:
    """Per item (group-major): the total length of the group's lists for the query.

    It bounds the item's candidates.
    """
    lens = fin.list_lengths()  # (n_q, n_runs)
    tot = np.add.reduceat(lens[:, members], m_off[:-1], axis=1).T
    return np.ascontiguousarray(tot).reshape(-1).astype(np.int64)


def _output_slots(tot: np.ndarray, depth: int) -> tuple[kf.Fused, np.ndarray]:
    """Output arrays with room for ``bound = min(tot, depth)`` documents per item, and ``bound``."""
    bound = np.minimum(tot, depth)
    out_off = np.concatenate([[0], np.cumsum(bound)]).astype(np.int64)
    out = kf.Fused(
        out_off,
        np.empty(int(out_off[-1]), np.int32),
        np.empty(int(out_off[-1]), np.float64),
        np.zeros(tot.shape[0], np.int64),
    )
    return out, bound


def _item_work(tot: np.ndarray, spec: FusionMethod, m_off: np.ndarray, n_q: int) -> np.ndarray:
    """Each item's estimated cost, for :func:`fasteval.parallel.run` to balance the threads.

    Linear in the item's list total ``tot``; the pairwise sorts (Condorcet,
    Majoritarian) also scale with its ``log2`` and the group size.
    """
    work = tot.astype(np.float64) + 1.0
    if spec.combiner in (kf.CONDORCET, kf.MAJORITARIAN):
        work *= np.log2(work + 1.0) * (np.diff(m_off)[np.arange(tot.shape[0]) // n_q] + 1)
    return work


def _trimmed(out: kf.Fused, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(off, doc, score)`` without the unused slots of items that had fewer than ``bound``."""
    out_off, out_doc, out_score, out_n = out
    if (out_n < bound).any():
        keep = np.repeat(np.arange(bound.shape[0]), bound)
        within = np.arange(out_doc.shape[0]) - out_off[:-1][keep]
        sel = within < out_n[keep]
        out_doc = out_doc[sel]
        out_score = out_score[sel]
        out_off = np.concatenate([[0], np.cumsum(out_n)]).astype(np.int64)
    return out_off, out_doc, out_score


def _scalar(spec: FusionMethod, p: Mapping[str, Any]) -> float:
    for key in ("k", "phi", "gamma", "sigma"):
        if key in spec.params:
            return float(p[key])
    return 0.0


def _tables_pv(
    fin: FusionInput,
    spec: FusionMethod,
    p: Mapping[str, Any],
    members: np.ndarray,
    m_off: np.ndarray,
    norm: str,
) -> np.ndarray:
    """The per-position values of a table method for the runs of every group."""
    tables = p.get(spec.trained or "")
    if tables is None:
        msg = (
            f"{spec.name} is supervised: give train_qrels= (and train_runs=), or its "
            f"trained {spec.trained!r} in params"
        )
        raise ParameterError(msg)
    run_tables: dict[int, Any] = {}
    for g in range(m_off.shape[0] - 1):
        for slot, r in enumerate(members[m_off[g] : m_off[g + 1]]):
            run_tables[int(r)] = table_for(tables, fin.run_names[int(r)], slot)
    return position_values(
        fin, spec, run_tables, fin.normalised(norm if norm != "borda" else "none"), p
    )[None, :]


def fuse_groups(  # noqa: PLR0913 (fusion options, keyword or defaulted)
    fin: FusionInput,
    groups: Sequence[Group],
    method: str = "combsum",
    *,
    norm: str | None = "min-max",
    depth: int = 1000,
    rel_level: int = 1,
    names: Sequence[str] | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    k: float | None = None,
    params: Mapping[str, Any] | None = None,
) -> FusedRuns:
    """Fuse many groups of runs at once (one kernel pass, inputs encoded once).

    Parameters
    ----------
    fin
        From :func:`prepare_fusion`.
    groups
        Each group: run ids or run indices into ``fin.run_names``.
    method
        Any name of :data:`fasteval.analysis.fusion.REGISTRY` (ranx's names
        accepted); the upper bounds ``naive``, ``pareto``, ``majoritarian``
        need qrels.
    norm
        Score normalisation: ``min-max`` (default), ``min-max-inverted``,
        ``max``, ``zscore``, ``sum``, ``rank``, ``borda``, ``none``.
    depth
        Documents kept per query in each fused run.
    rel_level
        Grade ``>= rel_level`` is relevant (upper bounds).
    names
        Run ids of the fused runs (default ``"<method>-<i>"``, or ``method``
        for a single group).
    weights
        Per-run weights of a weighted method (combsum = ranx's wsum, combmnz,
        combanz, mixed, wmnz, rrf, rbc, borda = w_bordafuse, condorcet =
        w_condorcet): one per run of ``fin.run_names``, or a mapping run id
        -> weight (missing runs weigh 1). Default: all 1.
    k
        RRF's constant (the same as ``params={"k": k}``; default 60).
    params
        The method's parameters (``k``, ``phi``, ``gamma``, ``sigma``, ``w``,
        ``n_segments``) and, for a supervised method, its trained table
        (``probs``, ``log_odds`` or ``map_scores``: a mapping run id ->
        table, or a list in the order of each group's runs).

    Returns
    -------
    FusedRuns
    """
    spec = method_spec(method)
    nrm = norm_name(norm)
    check_norm(spec, nrm)
    if depth <= 0:
        msg = f"depth must be positive, got {depth}"
        raise ParameterError(msg)
    if spec.upper_bound and fin.qdoc_jdx is None:
        msg = f"the {spec.name} upper bound needs qrels (qrels=...)"
        raise ParameterError(msg)
    given = dict(params or {})
    if k is not None and spec.name == "rrf":  # RRF's constant; the others ignore it
        given["k"] = k
    p = method_params(spec, given)
    if "weights" in p:
        if weights is not None:
            msg = "give weights once (weights= or params['weights'])"
            raise ParameterError(msg)
        weights = p.pop("weights")
    members, m_off = groups_arrays(fin, groups)
    w_run = _run_weights(fin, weights, spec)
    n_g = m_off.shape[0] - 1
    if names is None:
        names = [spec.name] if n_g == 1 else [f"{spec.name}-{i}" for i in range(n_g)]
    elif len(names) != n_g:
        msg = f"{len(names)} names for {n_g} fusion groups"
        raise ParameterError(msg)
    pv = _tables_pv(fin, spec, p, members, m_off, nrm) if spec.source == kf.SRC_TABLE else None
    return kernel_fuse(
        fin,
        spec,
        members,
        m_off,
        norm=nrm,
        depth=depth,
        names=names,
        slot_weights=w_run[members],
        g_par=np.full(n_g, _scalar(spec, p)),
        pv=pv,
        rel_level=rel_level,
    )


def fuse(  # noqa: PLR0913 (fusion options, keyword or defaulted)
    runs: Any,
    method: str = "combsum",
    run_ids: Sequence[str] | None = None,
    depth: int = 1000,
    qrels: Any = None,
    *,
    norm: str | None = "min-max",
    rel_level: int = 1,
    name: str | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    k: float | None = None,
    params: Mapping[str, Any] | None = None,
    train_qrels: Any = None,
    train_runs: Any = None,
) -> pl.DataFrame:
    """Fuse runs into one run, per query (metasearch), with any of ranx's methods.

    Parameters
    ----------
    runs
        Anything :func:`fasteval.load_runs` accepts, or a :class:`FusionInput`.
    method
        A fusion method (see :data:`fasteval.analysis.fusion.REGISTRY` for
        the definitions and citations): ``combsum`` (ranx ``sum``/``wsum``),
        ``combmnz``, ``combanz``, ``combmax``, ``combmin``, ``combmed``,
        ``combgmnz`` (``gamma``), ``mixed``, ``wmnz``, ``rrf`` (``k``),
        ``isr``, ``log_isr``, ``logn_isr`` (``sigma``), ``rbc`` (``phi``),
        ``borda`` (``bordafuse``/``w_bordafuse``), ``condorcet``
        (``w_condorcet``); supervised ``probfuse`` (``n_segments``),
        ``segfuse``, ``slidefuse`` (``w``), ``posfuse``, ``bayesfuse``,
        ``mapfuse``; upper bounds ``naive``, ``pareto``, ``majoritarian``
        (need ``qrels``).
    run_ids
        The runs to fuse (default: all).
    depth
        Documents kept per query.
    qrels
        Qrels (for the upper bounds).
    norm
        ``min-max`` (default), ``min-max-inverted``, ``max``, ``zscore``
        (ranx's ``zmuv``), ``sum``, ``rank``, ``borda`` or ``none``.
    rel_level
        Grade ``>= rel_level`` is relevant (upper bounds, training).
    name
        The fused run's id (default: the method name).
    weights
        Weights of the fused runs, in the order of ``run_ids`` (or of all
        runs), or a mapping run id -> weight.
    k
        RRF's constant (default 60).
    params
        The method's parameters, as ranx's ``params`` (``k``, ``phi``,
        ``gamma``, ``sigma``, ``w``, ``n_segments``, ``weights``, or a
        supervised method's trained ``probs``/``log_odds``/``map_scores``).
    train_qrels, train_runs
        For a supervised method without a trained table in ``params``: learn
        it from these qrels and runs (default: the runs fused); see
        :mod:`fasteval.analysis.fusion.supervised`.

    Returns
    -------
    polars.DataFrame
        ``run_id, query_id, doc_id, rank, score``, best first per query; it
        feeds :func:`fasteval.evaluate` directly (use ``compat=10`` to score
        exactly this order).
    """
    spec = method_spec(method)
    fin = _fusion_input(runs, qrels, run_ids)
    group = list(run_ids) if run_ids is not None else list(range(fin.n_runs))
    p = dict(params or {})
    if "weights" in p and weights is None:
        weights = p.pop("weights")
    if weights is not None and not isinstance(weights, Mapping):
        weights = _weights_by_run(fin, group, weights)
    if spec.trained is not None and spec.trained not in p:
        p.update(_trained_tables(spec, runs, p, train_qrels, train_runs, rel_level))
    fused = fuse_groups(
        fin,
        [group],
        spec.name,
        norm=norm,
        depth=depth,
        rel_level=rel_level,
        names=[name or spec.name],
        weights=weights,
        k=k,
        params=p,
    )
    return fused.to_frame()


def _fusion_input(runs: Any, qrels: Any, run_ids: Sequence[str] | None) -> FusionInput:
    """``runs`` (and ``qrels``) prepared for :func:`fuse`; an archive read for ``run_ids`` only."""
    if isinstance(runs, FusionInput):
        if qrels is not None:
            msg = "qrels are read by prepare_fusion(runs, qrels) when runs is a FusionInput"
            raise ParameterError(msg)
        return runs
    named = (
        [str(r) for r in run_ids] if run_ids and all(isinstance(r, str) for r in run_ids) else None
    )
    return prepare_fusion(runs, qrels, only=named)


def _weights_by_run(
    fin: FusionInput, group: Sequence[str | int], weights: Sequence[float]
) -> dict[str, float]:
    """Weights given in the order of the fused runs ``group``, as run id -> weight."""
    vals = list(weights)
    if len(vals) != len(group):
        msg = f"{len(vals)} weights for {len(group)} fused runs"
        raise ParameterError(msg)
    idx = fin.run_index(group)
    return {fin.run_names[int(i)]: float(v) for i, v in zip(idx, vals, strict=True)}


def _trained_tables(
    spec: FusionMethod,
    runs: Any,
    p: Mapping[str, Any],
    train_qrels: Any,
    train_runs: Any,
    rel_level: int,
) -> dict[str, Any]:
    """A supervised method's trained table, learnt from ``train_qrels`` and ``train_runs``.

    ``train_runs`` defaults to ``runs`` (the runs fused); ``p`` may hold probfuse's
    ``n_segments``.
    """
    if train_qrels is None:
        msg = (
            f"{spec.name} is supervised: give train_qrels= (and train_runs=, default the "
            f"runs fused), or its trained {spec.trained!r} in params"
        )
        raise ParameterError(msg)
    if train_runs is None:
        if isinstance(runs, FusionInput):
            msg = "give train_runs= (the runs were passed already prepared)"
            raise ParameterError(msg)
        train_runs = runs
    tfin = prepare_fusion(train_runs, train_qrels)
    n_seg = p.get("n_segments")
    return train_tables(
        tfin,
        spec.name,
        n_segments=None if n_seg is None else int(n_seg),
        rel_level=rel_level,
    )


def random_groups(n_runs: int, n_groups: int, size: int, seed: int) -> list[list[int]]:
    """``n_groups`` random groups of ``size`` distinct run indices (seeded)."""
    if not 1 <= size <= n_runs:
        msg = f"group size must be in 1..{n_runs}, got {size}"
        raise ParameterError(msg)
    rng = np.random.default_rng(seed)
    return [sorted(rng.choice(n_runs, size, replace=False).tolist()) for _ in range(n_groups)]


def input_runs(fin: FusionInput) -> FusedRuns:
    """The input runs themselves as :class:`FusedRuns` (run-major, fusion order).

    Their :meth:`FusedRuns.encoded` is the archive judged against the qrels in
    exactly the order the fusion kernels read it (float64 score descending,
    then doc id descending), without reading or encoding anything again.
    """
    n_q, n_runs = fin.n_q, fin.n_runs
    k = (np.arange(n_q, dtype=np.int64)[None, :] * n_runs + np.arange(n_runs)[:, None]).ravel()
    lens = np.diff(fin.kstart)[k]
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    take = np.repeat(fin.kstart[k] - off[:-1], lens) + np.arange(int(off[-1]), dtype=np.int64)
    return FusedRuns(fin, list(fin.run_names), off, fin.pos_doc[take], fin.pos_score[take])
