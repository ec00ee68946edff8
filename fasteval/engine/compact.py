"""A compact prepared form for studies: only what re-scoring under qrels variants needs.

A robustness study (:mod:`fasteval.analysis.studies`) re-scores every run under many
keep-masks over the judgments, reading each evaluated position's grade (``rel``) and
judgment (``jdx``) and the per-query judgments: :class:`Compact` keeps only those, in
narrow dtypes, built a batch of whole runs at a time (:func:`prepare_compact`), numbered
as the unbatched encoding; an error met in a batch is raised by the unbatched path.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from fasteval.columns import QrelsColumns, RunColumns, Source, StrColumn, offsets
from fasteval.engine.encode import Encoded, PreparedQrels, encode, prepare_qrels
from fasteval.engine.inputs import (
    Prepared,
    QrelsLike,
    RunsLike,
    as_list,
    check_runs_retrieved,
    number_runs,
    prepare,
)
from fasteval.errors import FastevalError
from fasteval.io.batches import BATCH_ROWS_ENV, BatchReader, batch_rows_of, plan_batches
from fasteval.io.tables import qrels_columns
from fasteval.kernels.families import UNJUDGED
from fasteval.options import EvalOptions, options_of

COMPACT_BATCH_ROWS = 500_000
"""Rows (estimated) read at a time by :func:`prepare_compact` by default (less memory than
evaluation's batches, a little slower)."""


@dataclass
class Compact:
    """Qrels and runs joined, reduced to what re-scoring needs.

    ``enc``: the evaluated positions only, ``rel`` and ``jdx`` narrowed (the kernels
    read them widened: :meth:`encoded`); ``enc.row`` is empty, or
    ``arange(n_positions)`` with ``scores`` (the score at each position).
    """

    qrels: QrelsColumns
    enc: Encoded
    scores: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        """Bytes held by the per-position and per-group arrays."""
        arrays = [v for v in vars(self.enc).values() if isinstance(v, np.ndarray)]
        if self.scores is not None:
            arrays.append(self.scores)
        return int(sum(a.nbytes for a in arrays))

    @classmethod
    def of(cls, prep: Prepared, *, scores: bool = False) -> Compact:
        """The compact form of an already prepared input."""
        types = _narrow_types(prep.qrels)
        small, sc = _narrowed(prep.enc, 0, types, prep.runs.score if scores else None)
        small.row = np.arange(small.rel.shape[0] if scores else 0, dtype=np.int64)
        return cls(prep.qrels, small, sc)

    def encoded(self) -> Encoded:
        """A full-width copy of ``enc`` for the kernels."""
        e = self.enc
        return dataclasses.replace(
            e, rel=e.rel.astype(np.int32), jdx=e.jdx.astype(np.int64), row=e.row.copy()
        )

    def prepared(self, enc: Encoded | None = None) -> Prepared:
        """A :class:`~fasteval.engine.inputs.Prepared` over ``enc`` (default: :meth:`encoded`),
        its runs only the kept scores (enough for RIC, DO/HSA)."""
        e = self.encoded() if enc is None else enc
        score = self.scores if self.scores is not None else np.zeros(0, np.float64)
        empty = StrColumn(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
        runs = RunColumns(
            run_names=list(e.run_names),
            run=np.zeros(0, np.int32),
            qid=empty,
            doc=empty,
            score=score,
            rank=pa.array([], pa.int64()),
            source=Source(["(compact: no run rows kept)"], None, None),
        )
        return Prepared(self.qrels, runs, e)


def _narrow_types(qrels: QrelsColumns) -> tuple[type[np.signedinteger[Any]], type[Any]]:
    """The narrowest grade dtype (grades and sentinels) and judgment index dtype."""
    rel = qrels.rel
    lo = min(int(rel.min()), UNJUDGED) if rel.shape[0] else UNJUDGED
    hi = int(rel.max()) if rel.shape[0] else 0
    rel_t: type[np.signedinteger[Any]] = np.int32
    for t in (np.int8, np.int16):
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            rel_t = t
            break
    jdx_t = np.int32 if rel.shape[0] < np.iinfo(np.int32).max else np.int64
    return rel_t, jdx_t


def _narrowed(
    enc: Encoded, offset: int, types: tuple[type[Any], type[Any]], score: np.ndarray | None
) -> tuple[Encoded, np.ndarray | None]:
    """``enc``'s evaluated positions only, numbered from ``offset``, grades and judgments
    narrowed to ``types`` (no rows), and each one's ``score`` (if given)."""
    lens = (enc.ends - enc.starts).astype(np.int64)
    new_starts = np.cumsum(lens) - lens
    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(enc.starts - new_starts, lens)
    small = dataclasses.replace(
        enc,
        starts=new_starts + offset,
        ends=new_starts + lens + offset,
        rel=np.ascontiguousarray(enc.rel[pos], dtype=types[0]),
        jdx=np.ascontiguousarray(enc.jdx[pos], dtype=types[1]),
        row=np.zeros(0, np.int64),
    )
    return small, None if score is None else np.ascontiguousarray(score[enc.row[pos]])


class _FallbackError(FastevalError):
    """The batches cannot reproduce the unbatched result (or its error): read unbatched."""


def prepare_compact(
    qrels: QrelsLike,
    runs: RunsLike,
    opts: EvalOptions | None = None,
    *,
    scores: bool = False,
    **fields: Any,
) -> Compact:
    """``Compact.of(prepare(qrels, runs, ...))`` a batch of whole runs at a time
    (``batch_rows=None``: ``$FASTEVAL_BATCH_ROWS`` or :data:`COMPACT_BATCH_ROWS`);
    ``scores`` keeps each position's score (for ``HSA``, ``values="score"``)."""
    opts = options_of(opts, fields)
    batch_rows = opts.batch_rows
    if batch_rows is None and BATCH_ROWS_ENV not in os.environ:
        batch_rows = COMPACT_BATCH_ROWS
    budget = batch_rows_of(batch_rows)
    items = as_list(runs)
    batches = plan_batches(items, budget, opts, split=False) if items else []
    if len(batches) > 1 or (batches and batches[0].pieces):
        q = prepare_qrels(qrels_columns(qrels, lenient=opts.lenient))  # once for every batch
        try:
            return _batched(q, batches, opts, scores, budget)
        except FastevalError:  # (a _FallbackError too)
            pass  # the unbatched path gives the result, or raises today's message
    return Compact.of(prepare(qrels, items, opts), scores=scores)


def _batched(
    q: PreparedQrels, batches: list[Any], opts: EvalOptions, scores: bool, budget: int
) -> Compact:
    types = _narrow_types(q.cols)
    parts: list[Encoded] = []
    score_parts: list[np.ndarray] = []
    n_pos = 0
    seen: set[str] = set()
    reader = BatchReader(budget, opts)
    for b in batches:
        mine: set[str] = set()  # the runs of this input (an archive gives them piece by piece)
        for cols in reader.columns(b):
            if seen & set(cols.run_names):  # one run from two inputs: the readers' error
                raise _FallbackError
            mine.update(cols.run_names)
            enc = encode(q, cols, opts)
            small, sc = _narrowed(enc, n_pos, types, cols.score if scores else None)
            if sc is not None:
                score_parts.append(sc)
            del cols, enc, sc
            parts.append(small)
            n_pos += small.rel.shape[0]
        seen.update(mine)
    enc = _concat(parts)
    enc.row = np.arange(n_pos if scores else 0, dtype=np.int64)
    check_runs_retrieved(enc.run_names, enc.group_run, enc.ends > enc.starts)
    return Compact(q.cols, enc, np.concatenate(score_parts) if scores else None)


def _concat(parts: list[Encoded]) -> Encoded:
    """One encoding over batches of whole runs, numbered as the unbatched encoding."""
    qids = sorted({s for p in parts for s in p.qids}, key=lambda s: s.encode())
    index = {s: i for i, s in enumerate(qids)}
    n_q = len(qids)
    first = parts[0]  # every part is encoded against the same prepared qrels
    luts = [np.array([index[s] for s in p.qids], np.int64) for p in parts]
    group_q = [lut[p.group_q].astype(np.int32) for lut, p in zip(luts, parts, strict=True)]
    in_qrels = np.zeros(n_q, bool)
    per_q = np.zeros(n_q, np.int64)
    in_qrels[luts[0]] = first.in_qrels
    per_q[luts[0]] = np.diff(first.qr_off)
    qr_off = offsets(per_q)
    # runs by first appearance (one may span pieces)
    run_names, group_run = number_runs((p.run_names, p.group_run) for p in parts)
    return Encoded(
        run_names=run_names,
        qids=qids,
        in_qrels=in_qrels,
        starts=np.concatenate([p.starts for p in parts]),
        ends=np.concatenate([p.ends for p in parts]),
        group_run=np.concatenate(group_run),
        group_q=np.concatenate(group_q),
        rel=np.concatenate([p.rel for p in parts]),
        row=np.zeros(0, np.int64),
        jdx=np.concatenate([p.jdx for p in parts]),
        qr_off=qr_off,
        qr_rel=first.qr_rel,
        qr_rows=first.qr_rows,
    )
