"""Runs (and qrels) read and encoded once for any number of fusions.

Documents are identified across runs once: doc ids are dictionary-encoded
(Arrow) and numbered per query in byte-wise order; nothing is re-read or
re-encoded per fusion group. Input rankings are ordered by float64 score
descending, then doc id descending (trec_eval's tie rule).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fasteval import parallel
from fasteval.analysis.fusion.methods import NORMS, norm_name
from fasteval.columns import QrelsColumns, RunColumns, dict_encode, numeric_numpy
from fasteval.engine.inputs import as_list
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError
from fasteval.io import formats
from fasteval.io.archive import archive_info, read_runs
from fasteval.io.tables import qrels_columns, run_columns
from fasteval.kernels import fusion as kf
from fasteval.kernels import ranking as kr
from fasteval.options import EvalOptions


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


def _only_runs(x: Any, only: Sequence[str]) -> Any:
    """A fasteval archive's rows of the runs ``only`` (a table), any other input as it is."""
    if not isinstance(x, (str, os.PathLike)) or not formats.is_parquet(x):
        return x
    if archive_info(x) is None:
        return x
    return read_runs(x, only)


def prepare_fusion(
    runs: Any,
    qrels: Any = None,
    *,
    lenient: bool = False,
    run_id_from: str = "tag",
    only: Sequence[str] | None = None,
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
    only
        The run ids that will be fused: a fasteval archive among ``runs`` is
        then read for these runs only (the row groups that may hold them),
        not whole. Other inputs are read whole.

    Returns
    -------
    FusionInput
    """
    items = as_list(runs)
    if only:
        items = [_only_runs(x, only) for x in items]
    r = run_columns(items, EvalOptions(lenient=lenient, run_id_from=run_id_from))
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
    docs = _number_documents(r, q_of_row, perm, kstart, n_q)
    pos_doc, pos_score, pos_row = _ranked_lists(r, perm, kstart, docs.loc)
    fin = FusionInput(
        run_names=list(r.run_names),
        qids=all_q.to_pylist(),
        kstart=kstart,
        pos_doc=pos_doc,
        pos_score=pos_score,
        pos_row=pos_row,
        qdoc_off=docs.qdoc_off,
        qdoc_row=docs.qdoc_row,
        runs=r,
    )
    if q is not None:
        _judge(fin, q, _lookup(qr_q, all_q)[qr_q_codes], docs)
    return fin


@dataclass
class _Documents:
    """The runs' documents numbered per query in byte-wise doc-id order (:func:`prepare_fusion`)."""

    dictionary: pa.Array  # the distinct doc ids
    grank_of_code: np.ndarray  # byte-wise rank of each dictionary entry
    loc: np.ndarray  # each run row's local code within its query
    ndoc: np.ndarray  # documents per query
    qdoc_off: np.ndarray  # query q's documents: flat slots qdoc_off[q]:qdoc_off[q+1]
    qdoc_row: np.ndarray  # a run row holding each flat document's id
    qdoc_key: np.ndarray  # sorted key q * n_g + byte-wise rank of each flat document
    n_g: int  # key multiplier (number of distinct doc ids, at least 1)


def _number_documents(
    r: RunColumns, q_of_row: np.ndarray, perm: np.ndarray, kstart: np.ndarray, n_q: int
) -> _Documents:
    """Dictionary-encode the doc ids once, rank the dictionary byte-wise, number them per query."""
    n_runs = len(r.run_names)
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
    return _Documents(dictionary, grank_of_code, loc, ndoc, qdoc_off, qdoc_row, qdoc_key, n_g)


def _ranked_lists(
    r: RunColumns, perm: np.ndarray, kstart: np.ndarray, loc: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each list in rank order: ``(pos_doc, pos_score, pos_row)``; a repeated document fails."""
    n = len(r)
    n_q_runs = kstart.shape[0] - 1
    pos_doc = np.empty(n, np.int32)
    pos_score = np.empty(n, np.float64)
    pos_row = np.empty(n, np.int64)
    dup = np.full(n_q_runs, -1, np.int64)
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
    return pos_doc, pos_score, pos_row


def _judge(fin: FusionInput, q: QrelsColumns, qq: np.ndarray, docs: _Documents) -> None:
    """Attach the qrels to ``fin``: each flat document's judgment, and the judgments per query.

    ``qq`` is each qrels row's query index into ``fin.qids``.
    """
    n_q = fin.n_q
    qdoc_key = docs.qdoc_key
    qr_rows = np.argsort(qq, kind="stable").astype(np.int64)
    qr_off = np.searchsorted(qq[qr_rows], np.arange(n_q + 1), side="left").astype(np.int64)
    judgment_of_row = np.empty(qr_rows.shape[0], np.int64)
    judgment_of_row[qr_rows] = np.arange(qr_rows.shape[0])
    gc = _lookup(q.doc.to_arrow(), docs.dictionary)
    hit = np.flatnonzero(gc >= 0)
    key = qq[hit].astype(np.int64) * docs.n_g + docs.grank_of_code[gc[hit]]
    at = np.minimum(np.searchsorted(qdoc_key, key), max(qdoc_key.shape[0] - 1, 0))
    found = qdoc_key[at] == key if qdoc_key.shape[0] else np.zeros(0, bool)
    qdoc_jdx = np.full(docs.qdoc_row.shape[0], -1, np.int64)
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
    if not (in_qrels & (docs.ndoc > 0)).any():
        msg = "the runs and the qrels have no query in common"
        raise DataMismatchError(msg)
