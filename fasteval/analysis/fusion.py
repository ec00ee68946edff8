"""Metasearch: fuse runs (CombSUM/MNZ/ANZ, CondorcetFuse) and the qrels-aware upper bounds.

Definitions (SPEC section 8). Per query, over the runs of a *fusion group*:

* **CombSUM** (Fox & Shaw, TREC-2 1993): ``S(d) = sum_r s_r(d)`` of normalised
  scores (a run that did not retrieve ``d`` adds 0). **CombMNZ**:
  ``S(d) * c(d)`` with ``c(d)`` the number of runs retrieving ``d``;
  **CombANZ**: ``S(d) / c(d)``. Normalisations (per run and query, as ranx
  defines them): ``min-max`` (default), ``zscore``, ``sum``, ``rank``, ``none``.
* **RRF** (Cormack, Clarke & Buettcher, SIGIR 2009): ``S(d) = sum_r w_r /
  (k + rank_r(d))``, ``k = 60``, over the runs retrieving ``d``.
  **BordaFuse** (Aslam & Montague, SIGIR 2001) as ranx scores it: with ``m``
  candidates, a run's ``i``-th document (from 0) gets ``m - i`` points and
  each candidate it misses ``(m - n_r + 1) / 2``. Both, and CombSUM (ranx's
  ``wsum``), take per-run weights ``w_r`` (default 1).
* **CondorcetFuse** (Montague & Aslam, CIKM 2002): documents sorted with the
  comparator "more runs rank ``a`` above ``b`` than ``b`` above ``a``"; a
  retrieved document is above an unretrieved one, a run retrieving neither
  abstains. Deterministic rule: a bottom-up stable merge sort starting from
  the Borda order (Borda count descending, then doc id descending), so a tied
  vote keeps the Borda order.
* Upper bounds (Montague 2002), which read the qrels (relevant = grade
  ``>= rel_level``; the *grade class* of a relevant document is its grade,
  of every other document -1):

  - **Naive**: every relevant document retrieved by any run above all others
    (higher grades first), then the Borda order.
  - **Pareto**: ``a`` above ``b`` whenever ``a`` Pareto-dominates ``b`` (no
    run ranks ``a`` below ``b``, one ranks it above), otherwise by relevance:
    documents are sorted by the best grade class among themselves and the
    relevant documents they dominate, then Borda count. This is a linear
    extension of unanimity (Borda is strictly larger for a dominating
    document), so every unanimous ordering is respected, and relevant
    documents rise as far as unanimity allows.
  - **Majoritarian**: the merge sort above with the comparator "``a`` above
    ``b`` if at least half of the runs rank it above (and more than rank
    ``b`` above ``a``), otherwise the higher grade class".

Every order ends ties with the larger doc id first (trec_eval's tie rule).
Fused scores: the fused value for CombSUM/MNZ/ANZ, ``m - j`` for the ``j``-th
of ``m`` candidates for rank-based methods. Input rankings are ordered by
float64 score descending, then doc id descending. Each fused run keeps its
first ``depth`` documents. ``fasteval.evaluate(qrels, fused, compat=10)``
scores exactly the fused order (``compat=9`` rounds scores to float32 first,
which can reorder near-ties of CombSUM-like scores).

Documents are identified across runs once: doc ids are dictionary-encoded
(Arrow) and numbered per query in byte-wise order; nothing is re-read or
re-encoded per fusion group (:func:`prepare_fusion`, :func:`fuse_groups`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from fasteval import parallel
from fasteval.analysis.correlation import kendall_tau, spearman
from fasteval.analysis.information import pair_data, row_means
from fasteval.columns import QrelsColumns, RunColumns, dict_encode, numeric_numpy
from fasteval.engine import Prepared, compute, to_frame
from fasteval.engine.encode import Encoded
from fasteval.engine.inputs import as_list
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError
from fasteval.io.tables import qrels_columns, run_columns
from fasteval.kernels import fusion as kf
from fasteval.kernels import ranking as kr
from fasteval.measures.parser import MeasureSet, parse_measures

METHODS = {
    "combsum": kf.COMBSUM,
    "combmnz": kf.COMBMNZ,
    "combanz": kf.COMBANZ,
    "condorcet": kf.CONDORCET,
    "naive": kf.NAIVE,
    "pareto": kf.PARETO,
    "majoritarian": kf.MAJORITARIAN,
    "rrf": kf.RRF,
    "borda": kf.BORDA,
}
# a fusion group: run ids or run numbers
Group = Sequence[str | int] | np.ndarray

_ALIASES = {
    "sum": "combsum",
    "mnz": "combmnz",
    "anz": "combanz",
    "condorcetfuse": "condorcet",
    "wsum": "combsum",  # ranx's weighted sum: CombSUM with weights=
    "wrrf": "rrf",
    "weightedrrf": "rrf",
    "reciprocalrank": "rrf",
    "bordafuse": "borda",
    "wbordafuse": "borda",
}
UPPER_BOUNDS = ("naive", "pareto", "majoritarian")
NORMS = {
    "min-max": kf.NORM_MINMAX,
    "zscore": kf.NORM_ZSCORE,
    "sum": kf.NORM_SUM,
    "rank": kf.NORM_RANK,
    "none": kf.NORM_NONE,
}
_NORM_ALIASES = {"minmax": "min-max", "zmuv": "zscore", "z-score": "zscore"}


def method_name(method: str) -> str:
    """The canonical name of a fusion method (``combsum``, ..., ``majoritarian``)."""
    m = str(method).lower().replace("_", "").replace("-", "")
    m = _ALIASES.get(m, m)
    if m not in METHODS:
        msg = f"unknown fusion method {method!r}; choose one of {', '.join(METHODS)}"
        raise ParameterError(msg)
    return m


def norm_name(norm: str | None) -> str:
    """The canonical name of a score normalisation (``None`` means ``none``)."""
    n = "none" if norm is None else str(norm).lower()
    n = _NORM_ALIASES.get(n, n)
    if n not in NORMS:
        msg = f"unknown normalisation {norm!r}; choose one of {', '.join(NORMS)}"
        raise ParameterError(msg)
    return n


@dataclass
class FusionInput:
    """Runs (and optionally qrels) read and encoded once for any number of fusions.

    Ranked list ``k = q * n_runs + run`` is ``pos_*[kstart[k]:kstart[k+1]]``
    in rank order; ``pos_doc`` is the document's code within its query. The
    documents of query ``q`` are the flat slots ``qdoc_off[q]:qdoc_off[q+1]``
    (by code): ``qdoc_row`` is a run row holding the id, ``qdoc_jdx`` its
    judgment (index into ``qr_rel``, -1 if none).
    """

    run_names: list[str]
    qids: list[str]
    kstart: np.ndarray
    pos_doc: np.ndarray
    pos_score: np.ndarray
    pos_row: np.ndarray
    qdoc_off: np.ndarray
    qdoc_row: np.ndarray
    runs: RunColumns
    qrels: QrelsColumns | None = None
    qdoc_jdx: np.ndarray | None = None
    qr_off: np.ndarray | None = None
    qr_rel: np.ndarray | None = None
    qr_rows: np.ndarray | None = None
    in_qrels: np.ndarray | None = None
    _norm: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n_q(self) -> int:
        return len(self.qids)

    @property
    def n_runs(self) -> int:
        return len(self.run_names)

    def list_lengths(self) -> np.ndarray:
        """``(n_q, n_runs)`` lengths of the ranked lists."""
        return np.diff(self.kstart).reshape(self.n_q, self.n_runs)

    def normalised(self, norm: str) -> np.ndarray:
        """Normalised scores at every ranked position (computed once per normalisation)."""
        n = norm_name(norm)
        if n not in self._norm:
            out = np.empty_like(self.pos_score)
            parallel.run(
                kf.normalise,
                np.diff(self.kstart).astype(np.float64) + 1.0,
                self.kstart,
                self.pos_score,
                NORMS[n],
                out,
            )
            self._norm[n] = out
        return self._norm[n]

    def grade_class(self, rel_level: int) -> np.ndarray:
        """Per flat document: its grade if ``>= rel_level``, else -1."""
        if self.qdoc_jdx is None or self.qr_rel is None:
            return np.full(self.qdoc_row.shape[0], kf.NONREL, np.int64)
        j = self.qdoc_jdx
        g = np.where(j >= 0, self.qr_rel[np.maximum(j, 0)], kf.NONREL).astype(np.int64)
        return np.where(g >= rel_level, g, kf.NONREL)

    def run_index(self, run_ids: Sequence[str | int]) -> np.ndarray:
        """Indices of runs named (or numbered) in ``run_ids``."""
        pos = {n: i for i, n in enumerate(self.run_names)}
        out = []
        for r in run_ids:
            if isinstance(r, (int, np.integer)) and not isinstance(r, bool):
                if not 0 <= int(r) < self.n_runs:
                    msg = f"run index {r} out of range (0..{self.n_runs - 1})"
                    raise ParameterError(msg)
                out.append(int(r))
            elif r in pos:
                out.append(pos[str(r)])
            else:
                shown = ", ".join(self.run_names[:5]) + (" ..." if self.n_runs > 5 else "")
                msg = f"unknown run id {r!r}; the runs are {shown}"
                raise ParameterError(msg)
        return np.asarray(out, np.int32)


def _sorted_queries(run_q: pa.Array, qr_q: pa.Array | None) -> pa.Array:
    parts = [run_q] if qr_q is None else [run_q, qr_q]
    all_q = pc.unique(pa.concat_arrays(parts))
    return all_q.take(pc.sort_indices(pc.cast(all_q, pa.large_binary())))


def _lookup(values: pa.Array, into: pa.Array) -> np.ndarray:
    # numeric_numpy, not fill_null().to_numpy(): that path imports pandas.
    return numeric_numpy(pc.index_in(values, value_set=into), null=-1).astype(np.int32)


def prepare_fusion(
    runs: Any,
    qrels: Any = None,
    *,
    lenient: bool = False,
    run_id_from: str = "tag",
) -> FusionInput:
    """Read runs (and qrels) and encode them once for fusion.

    Parameters
    ----------
    runs
        Anything :func:`fasteval.load_runs` accepts (files, directories,
        Parquet archives, frames), or a list of these.
    qrels
        Optional qrels (needed by the upper bounds and to evaluate fused runs).
    lenient, run_id_from
        As for :func:`fasteval.load_runs`.

    Returns
    -------
    FusionInput
    """

    r = run_columns(as_list(runs), lenient=lenient, run_id_from=run_id_from)
    q = qrels_columns(qrels, lenient=lenient) if qrels is not None else None
    # --- queries, sorted byte-wise (trec_eval's order)
    run_q_codes, run_q_first = dict_encode(r.qid)
    run_q = r.qid.take(run_q_first)
    qr_q = None
    if q is not None:
        qr_q_codes, qr_q_first = dict_encode(q.qid)
        qr_q = q.qid.take(qr_q_first)
    all_q = _sorted_queries(run_q, qr_q)
    n_q = len(all_q)
    n_runs = len(r.run_names)
    q_of_row = _lookup(run_q, all_q)[run_q_codes]
    # --- query-major grouping: list k = q * n_runs + run
    perm, kstart = kr.group_rows(q_of_row, r.run, np.arange(n_runs, dtype=np.int32), n_runs, n_q)
    # --- documents: dictionary-encode once, rank the dictionary byte-wise
    gcode, gfirst = dict_encode(r.doc)
    dictionary = r.doc.take(gfirst)
    order = pc.sort_indices(pc.cast(dictionary, pa.large_binary())).to_numpy()
    grank_of_code = np.empty(order.shape[0], np.int64)
    grank_of_code[order] = np.arange(order.shape[0])
    grank = grank_of_code[gcode]
    qstart = np.ascontiguousarray(kstart[np.arange(n_q + 1) * n_runs])
    n = len(r)
    loc = np.empty(n, np.int32)
    first = np.zeros(n, np.bool_)
    parallel.run(
        kf.local_codes, np.diff(qstart).astype(np.float64) + 1.0, qstart, perm, grank, loc, first
    )
    heads = np.flatnonzero(first)
    ndoc = np.bincount(q_of_row[heads], minlength=n_q).astype(np.int64)
    qdoc_off = np.concatenate([[0], np.cumsum(ndoc)]).astype(np.int64)
    flat = qdoc_off[q_of_row[heads]] + loc[heads]
    qdoc_row = np.empty(heads.shape[0], np.int64)
    qdoc_row[flat] = heads
    qdoc_key = np.empty(heads.shape[0], np.int64)
    n_g = max(int(order.shape[0]), 1)
    qdoc_key[flat] = q_of_row[heads].astype(np.int64) * n_g + grank[heads]
    # --- ranked lists
    pos_doc = np.empty(n, np.int32)
    pos_score = np.empty(n, np.float64)
    pos_row = np.empty(n, np.int64)
    dup = np.full(n_q * n_runs, -1, np.int64)
    parallel.run(
        kf.rank_lists,
        np.diff(kstart).astype(np.float64) + 1.0,
        kstart,
        perm,
        loc,
        r.score,
        pos_doc,
        pos_score,
        pos_row,
        dup,
    )
    if (dup >= 0).any():
        b = int(dup[dup >= 0][0])
        msg = (
            f"{r.source.where(b)}: document {r.doc.value(b)!r} appears more than once for "
            f"query {r.qid.value(b)!r} in run {r.run_names[r.run[b]]!r}"
        )
        raise InputFormatError(msg)
    fin = FusionInput(
        run_names=list(r.run_names),
        qids=all_q.to_pylist(),
        kstart=kstart,
        pos_doc=pos_doc,
        pos_score=pos_score,
        pos_row=pos_row,
        qdoc_off=qdoc_off,
        qdoc_row=qdoc_row,
        runs=r,
    )
    if q is not None:
        qq = _lookup(qr_q, all_q)[qr_q_codes]
        qr_rows = np.argsort(qq, kind="stable").astype(np.int64)
        qr_off = np.searchsorted(qq[qr_rows], np.arange(n_q + 1), side="left").astype(np.int64)
        judgment_of_row = np.empty(qr_rows.shape[0], np.int64)
        judgment_of_row[qr_rows] = np.arange(qr_rows.shape[0])
        gc = _lookup(q.doc.to_arrow(), dictionary)
        hit = np.flatnonzero(gc >= 0)
        key = qq[hit].astype(np.int64) * n_g + grank_of_code[gc[hit]]
        at = np.minimum(np.searchsorted(qdoc_key, key), max(qdoc_key.shape[0] - 1, 0))
        found = qdoc_key[at] == key if qdoc_key.shape[0] else np.zeros(0, bool)
        qdoc_jdx = np.full(qdoc_row.shape[0], -1, np.int64)
        at = at[found]
        if np.bincount(at, minlength=1).max(initial=0) > 1:
            b = int(hit[found][np.flatnonzero(np.bincount(at)[at] > 1)[-1]])
            msg = (
                f"{q.source.where(b)}: duplicate judgment for query {q.qid.value(b)!r} "
                f"document {q.doc.value(b)!r}"
            )
            raise InputFormatError(msg)
        qdoc_jdx[at] = judgment_of_row[hit[found]]
        in_qrels = np.zeros(n_q, bool)
        in_qrels[qq] = True
        fin.qrels = q
        fin.qdoc_jdx = qdoc_jdx
        fin.qr_off = qr_off
        fin.qr_rel = np.ascontiguousarray(q.rel[qr_rows])
        fin.qr_rows = qr_rows
        fin.in_qrels = in_qrels
        if not (in_qrels & (ndoc > 0)).any():
            msg = "the runs and the qrels have no query in common"
            raise DataMismatchError(msg)
    return fin


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
        rel = np.where(jdx >= 0, np.where(grade < 0, kr.UNJUDGED, grade), kr.NONPOOL)
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

    def evaluate(self, measures: str | Sequence[str] | None = None) -> pl.DataFrame:
        """Score the fused runs (trec_eval semantics on the fused order) like :func:`evaluate`."""

        mset = parse_measures(measures)
        ev = compute(self.encoded(), mset, compat=10)
        return to_frame(ev, per_query=True, compat=10)


def _groups_arrays(fin: FusionInput, groups: Sequence[Group]) -> tuple[np.ndarray, np.ndarray]:
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
    fin: FusionInput, weights: Sequence[float] | Mapping[str, float] | None, method: str
) -> np.ndarray:
    """One weight per run of ``fin`` (all 1 by default)."""
    w = np.ones(fin.n_runs, np.float64)
    if weights is None:
        return w
    if METHODS[method] not in (kf.COMBSUM, kf.COMBMNZ, kf.COMBANZ, kf.RRF, kf.BORDA):
        msg = f"weights apply to combsum, combmnz, combanz, rrf and borda, not {method}"
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
    k: float = 60.0,
) -> FusedRuns:
    """Fuse many groups of runs at once (one kernel pass, inputs encoded once).

    Parameters
    ----------
    fin
        From :func:`prepare_fusion`.
    groups
        Each group: run ids or run indices into ``fin.run_names``.
    method
        ``combsum``, ``combmnz``, ``combanz``, ``condorcet``, or an upper
        bound ``naive``, ``pareto``, ``majoritarian`` (these need qrels).
    norm
        Score normalisation for the Comb methods: ``min-max`` (default),
        ``zscore``, ``sum``, ``rank``, ``none``.
    depth
        Documents kept per query in each fused run.
    rel_level
        Grade ``>= rel_level`` is relevant (upper bounds).
    names
        Run ids of the fused runs (default ``"<method>-<i>"``, or ``method``
        for a single group).
    weights
        Per-run weights for ``combsum`` / ``combmnz`` / ``combanz`` /
        ``rrf`` / ``borda`` (weighted CombSUM = ranx's ``wsum``, weighted
        RRF, weighted BordaFuse): one per run of ``fin.run_names``, or a
        mapping run id -> weight (missing runs weigh 1). Default: all 1.
    k
        RRF's constant: ``score(d) = sum_r w_r / (k + rank_r(d))`` (Cormack,
        Clarke & Buettcher 2009 use 60).

    Returns
    -------
    FusedRuns
    """
    m = method_name(method)
    if depth <= 0:
        msg = f"depth must be positive, got {depth}"
        raise ParameterError(msg)
    if m in UPPER_BOUNDS and fin.qdoc_jdx is None:
        msg = f"the {m} upper bound needs qrels (qrels=...)"
        raise ParameterError(msg)
    members, m_off = _groups_arrays(fin, groups)
    w_run = _run_weights(fin, weights, m)
    if k < 0 or not np.isfinite(k):
        msg = f"rrf k must be a finite number >= 0, got {k}"
        raise ParameterError(msg)
    n_g = m_off.shape[0] - 1
    if names is None:
        names = [m] if n_g == 1 else [f"{m}-{i}" for i in range(n_g)]
    elif len(names) != n_g:
        msg = f"{len(names)} names for {n_g} fusion groups"
        raise ParameterError(msg)
    nscore = fin.normalised(norm_name(norm))
    lens = fin.list_lengths()  # (n_q, n_runs)
    # total input length per item (group-major, query inner)
    tot = np.add.reduceat(lens[:, members], m_off[:-1], axis=1).T
    tot = np.ascontiguousarray(tot).reshape(-1).astype(np.int64)
    bound = np.minimum(tot, depth)
    out_off = np.concatenate([[0], np.cumsum(bound)]).astype(np.int64)
    out_doc = np.empty(int(out_off[-1]), np.int32)
    out_score = np.empty(int(out_off[-1]), np.float64)
    out_n = np.zeros(tot.shape[0], np.int64)
    gcls = fin.grade_class(rel_level)
    max_m = int(np.diff(fin.qdoc_off).max(initial=1))
    work = tot.astype(np.float64) + 1.0
    if METHODS[m] in (kf.CONDORCET, kf.MAJORITARIAN):
        work *= np.log2(work + 1.0) * (np.diff(m_off)[np.arange(tot.shape[0]) // fin.n_q] + 1)
    parallel.run(
        kf.fuse_items,
        work,
        METHODS[m],
        fin.n_q,
        fin.n_runs,
        members,
        m_off,
        fin.kstart,
        fin.pos_doc,
        nscore,
        fin.qdoc_off,
        gcls,
        max_m,
        int(depth),
        np.ascontiguousarray(w_run[members], dtype=np.float64),
        float(k),
        out_off,
        out_doc,
        out_score,
        out_n,
    )
    if (out_n < bound).any():
        keep = np.repeat(np.arange(bound.shape[0]), bound)
        within = np.arange(out_doc.shape[0]) - out_off[:-1][keep]
        sel = within < out_n[keep]
        out_doc = out_doc[sel]
        out_score = out_score[sel]
        out_off = np.concatenate([[0], np.cumsum(out_n)]).astype(np.int64)
    return FusedRuns(fin, list(names), out_off, out_doc, out_score)


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
    k: float = 60.0,
) -> pl.DataFrame:
    """Fuse runs into one run, per query (metasearch).

    Parameters
    ----------
    runs
        Anything :func:`fasteval.load_runs` accepts, or a :class:`FusionInput`.
    method
        ``combsum``, ``combmnz``, ``combanz``, ``rrf``, ``borda``,
        ``condorcet`` (fusion), or
        ``naive``, ``pareto``, ``majoritarian`` (upper bounds; need ``qrels``).
        See :mod:`fasteval.analysis.fusion` for the definitions.
    run_ids
        The runs to fuse (default: all).
    depth
        Documents kept per query.
    qrels
        Qrels (for the upper bounds).
    norm
        ``min-max`` (default), ``zscore``, ``sum``, ``rank`` or ``none``.
    rel_level
        Grade ``>= rel_level`` is relevant.
    name
        The fused run's id (default: the method name).
    weights
        Weights of the fused runs, in the order of ``run_ids`` (or of all
        runs), or a mapping run id -> weight: weighted CombSUM (ranx's
        ``wsum``), weighted RRF, weighted BordaFuse.
    k
        RRF's constant (default 60).

    Returns
    -------
    polars.DataFrame
        ``run_id, query_id, doc_id, rank, score``, best first per query; it
        feeds :func:`fasteval.evaluate` directly (use ``compat=10`` to score
        exactly this order).
    """
    if isinstance(runs, FusionInput):
        if qrels is not None:
            msg = "qrels are read by prepare_fusion(runs, qrels) when runs is a FusionInput"
            raise ParameterError(msg)
        fin = runs
    else:
        fin = prepare_fusion(runs, qrels)
    group = list(run_ids) if run_ids is not None else list(range(fin.n_runs))
    if weights is not None and not isinstance(weights, Mapping):
        vals = list(weights)
        if len(vals) != len(group):
            msg = f"{len(vals)} weights for {len(group)} fused runs"
            raise ParameterError(msg)
        idx = fin.run_index(group)
        weights = {fin.run_names[int(i)]: float(v) for i, v in zip(idx, vals, strict=True)}
    fused = fuse_groups(
        fin,
        [group],
        method,
        norm=norm,
        depth=depth,
        rel_level=rel_level,
        names=[name or method_name(method)],
        weights=weights,
        k=k,
    )
    return fused.to_frame()


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
        ev = compute(enc, MeasureSet([self.measure]), relevance_level=self.rel_level, compat=10)
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
    ms = [method_name(m) for m in methods]
    if not ms or len(set(ms)) != len(ms):
        msg = f"methods must be a non-empty list without repeats, got {list(methods)!r}"
        raise ParameterError(msg)
    mset = parse_measures([measure], compat=10)
    if len(mset) != 1:
        msg = f"measure must name one measure, got {measure!r}"
        raise ParameterError(msg)
    meas = mset[0]
    if batch < 1:
        msg = f"batch must be positive, got {batch}"
        raise ParameterError(msg)
    if groups is None:
        if n_groups < 1:
            msg = f"n_groups must be positive, got {n_groups}"
            raise ParameterError(msg)
        groups = random_groups(fin.n_runs, n_groups, group_size, seed)
    idx = [fin.run_index(list(g)) for g in groups]
    _groups_arrays(fin, groups)  # validates the groups
    score = _Scorer(fin, meas, rel_level)
    # every input run once: RIC, measure, and the pair data for joint RIC
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
    n_m = len(ms)
    col = meas.name
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
