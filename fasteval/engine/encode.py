"""From parsed columns to the arrays the measure kernels read.

:func:`prepare_qrels` runs once: queries in byte order (trec_eval's), judgments grouped
by query, a hash table of each query's judged ids, a memo of per-query tables. Runs are
encoded against it (:func:`encode`): query ids coded once, rows grouped by (run, query)
(skipped for grouped input); document ids are only hashed against their query's table,
ties broken by their bytes (``kernels.ranking.rank_groups``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from fasteval import parallel
from fasteval.columns import (
    FEW_HEADS,
    Heads,
    QrelsColumns,
    RunColumns,
    StrColumn,
    dict_encode,
    encode_heads,
    heads_of,
    numeric_numpy,
    offsets,
    spread,
)
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError
from fasteval.kernels import hashing as kh
from fasteval.kernels import ranking as kr
from fasteval.kernels import strings as kstr
from fasteval.kernels import text as ktext
from fasteval.options import DEFAULTS, EvalOptions


def _lookup(values: pa.Array, into: pa.Array) -> np.ndarray:
    """Index of each of ``values`` in ``into`` (-1 where absent)."""
    if len(values) + len(into) <= FEW_HEADS:  # a dict: pyarrow.compute is not loaded
        where = {v: i for i, v in enumerate(into.to_pylist())}
        return np.array([where.get(v, -1) for v in values.to_pylist()], np.int32)
    import pyarrow.compute as pc  # noqa: PLC0415 (not needed by a few ids)

    return numeric_numpy(pc.index_in(values, value_set=into), null=-1).astype(np.int32)


def _byte_order(values: pa.Array) -> pa.Array:
    """``values`` sorted byte-wise (trec_eval's ``strcmp`` order)."""
    if len(values) <= FEW_HEADS:  # in Python, without pyarrow.compute or pa.array (pandas)
        items = sorted(v if isinstance(v, bytes) else v.encode() for v in values.to_pylist())
        offsets = np.zeros(len(items) + 1, np.int64)
        np.cumsum([len(b) for b in items], out=offsets[1:])
        data = pa.py_buffer(b"".join(items))
        return pa.LargeStringArray.from_buffers(len(items), pa.py_buffer(offsets), data)
    import pyarrow.compute as pc  # noqa: PLC0415 (not needed by a few ids)

    return values.take(pc.sort_indices(pc.cast(values, pa.large_binary())))


@dataclass(frozen=True, eq=False)
class PreparedQrels:
    """The qrels indexed once, shared read-only by every encoding: queries ``0..Q-1``
    in byte order, ``Q`` the empty query (a run's query the qrels lack)."""

    cols: QrelsColumns
    qids: list[str]  # the Q qrels queries, byte order
    qid_values: pa.Array  # the same, as Arrow (for lookups)
    first_qids: list[str]  # the first queries in file order (for messages)
    qr_off: np.ndarray  # judgments of query q: qr_off[q]:qr_off[q+1] (length Q + 2)
    qr_rel: np.ndarray  # int32 grades, grouped by query
    qr_rows: np.ndarray  # qrels input row of each judgment
    table: kr.QrelsTable  # the judged ids, grades and each query's hash table (for kernels)
    memo: dict[Any, Any] = field(default_factory=dict)  # per-query tables, see :meth:`cached`
    lock: threading.Lock = field(default_factory=threading.Lock)
    number: dict[str, int] = field(init=False)  # each query's number (a dict: no Arrow call)

    def __post_init__(self) -> None:
        object.__setattr__(self, "number", {s: k for k, s in enumerate(self.qids)})

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        """``memo[key]``, made once (thread-safe) by ``make()``."""
        hit = self.memo.get(key)
        if hit is None:
            with self.lock:
                hit = self.memo.get(key)
                if hit is None:
                    hit = make()
                    self.memo[key] = hit
        return hit


def prepare_qrels(qrels: QrelsColumns) -> PreparedQrels:
    """Group the judgments by query and index each query's judged documents.

    Raises
    ------
    InputFormatError
        For a document judged twice for one query (naming both lines).
    """
    qr_q_codes, qr_q_first = dict_encode(qrels.qid)
    qr_q = qrels.qid.take(qr_q_first)  # distinct, first appearance
    sorted_q = _byte_order(qr_q)
    n_q = len(sorted_q)
    qq = _lookup(qr_q, sorted_q)[qr_q_codes]
    qr_rows = np.argsort(qq, kind="stable").astype(np.int64)
    qr_off = np.searchsorted(qq[qr_rows], np.arange(n_q + 2), side="left").astype(np.int64)
    # the judged ids copied together per query, so a query's ids hash from cache
    qd_buf, qd_off = kstr.gather(qrels.doc.buf, qrels.doc.starts, qrels.doc.ends, qr_rows)
    qd = StrColumn(qd_buf, qd_off[:-1], qd_off[1:])
    qr_rel = np.ascontiguousarray(qrels.rel[qr_rows])
    table, qr_dup = _build_table(qd, qr_off, qr_rows, qr_rel)
    if (qr_dup >= 0).any():
        _raise_duplicate_judgment(qrels, qq, qr_dup)
    for a in (qr_off, qr_rel, qr_rows, table.t_off, table.slots, *table.ids, table.rel, table.jud):
        a.flags.writeable = False
    return PreparedQrels(
        cols=qrels,
        qids=sorted_q.to_pylist(),
        qid_values=sorted_q,
        first_qids=qr_q.slice(0, 3).to_pylist(),
        qr_off=qr_off,
        qr_rel=qr_rel,
        qr_rows=qr_rows,
        table=table,
    )


def _build_table(
    qd: StrColumn, qr_off: np.ndarray, qr_rows: np.ndarray, qr_rel: np.ndarray
) -> tuple[kr.QrelsTable, np.ndarray]:
    """Each query's hash table, entries in slot order; and per query the row of a
    document judged twice (-1: none; the table's ids are then left out)."""
    n = int(qr_off[-1])
    if n >= 2**32 - 1:  # an entry's number must fit the lower half of a slot
        msg = f"the qrels hold {n:,} judgments; at most {2**32 - 2:,} can be indexed"
        raise ParameterError(msg)
    t_off = kh.qrels_table_offsets(qr_off)
    n_q = qr_off.shape[0] - 2
    dup = np.full(n_q + 1, -1, np.int64)
    empty = ktext.Str(qd.buf[:0], qr_off[:0], qr_off[:0])
    table = kr.QrelsTable(
        t_off,
        np.zeros(int(t_off[-1]), np.uint64),
        empty,
        np.empty(n, np.int32),
        np.empty(n, np.int64),
    )
    parallel.run(
        kh.build_qrels_tables,
        np.diff(qr_off).astype(np.float64) + 1.0,
        ktext.Str(qd.buf, qd.starts, qd.ends),
        qr_off,
        qr_rows,
        qr_rel,
        table,
        dup,
    )
    if (dup >= 0).any():
        return table, dup
    ids_buf, ids_off = kstr.gather(qd.buf, qd.starts, qd.ends, table.jud)
    return table._replace(ids=ktext.Str(ids_buf, ids_off[:-1], ids_off[1:])), dup


@dataclass
class Encoded:
    """Everything the ranking kernels need, for one qrels and a set of runs."""

    run_names: list[str]
    qids: list[str]  # all query ids (qrels and runs), sorted
    in_qrels: np.ndarray  # bool per query
    # groups (run, query) in output order
    starts: np.ndarray
    ends: np.ndarray
    group_run: np.ndarray
    group_q: np.ndarray
    rel: np.ndarray  # int32 grade (or NONPOOL / UNJUDGED) per ranked position
    row: np.ndarray  # int64 input row at each ranked position
    # judgment at each ranked position: index into qr_rel / qr_rows, -1 if none
    jdx: np.ndarray
    # qrels grades grouped by query: query q's judgments are qr_off[q]:qr_off[q+1]
    qr_off: np.ndarray
    qr_rel: np.ndarray
    qr_rows: np.ndarray  # qrels input row of each judgment (for doc ids)
    # the prepared qrels encoded against, each query's number there (Q: none; None: by hand)
    prepared: PreparedQrels | None = None
    qp: np.ndarray | None = None


def _raise_duplicate_judgment(qrels: QrelsColumns, qq: np.ndarray, qr_dup: np.ndarray) -> None:
    b = int(qr_dup[qr_dup >= 0][0])
    same = np.flatnonzero(qq == qq[b])
    doc = qrels.doc.value(b)
    a = next(int(i) for i in same if qrels.doc.value(int(i)) == doc)
    msg = (
        f"{qrels.source.where(b)}: duplicate judgment for query {qrels.qid.value(b)!r} "
        f"document {doc!r} (first at {qrels.source.where(a)})"
    )
    n_more = int((qr_dup >= 0).sum()) - 1
    if n_more:
        msg += f"\n  (duplicates in {n_more} more quer(y/ies))"
    raise InputFormatError(msg)


def _raise_duplicate_document(runs: RunColumns, row: np.ndarray, is_dup: np.ndarray) -> None:
    r = int(row[np.flatnonzero(is_dup)[0]])
    msg = (
        f"{runs.source.where(r)}: document {runs.doc.value(r)!r} appears more than once for "
        f"query {runs.qid.value(r)!r} in run {runs.run_names[runs.run[r]]!r} "
        f"({int(is_dup.sum())} repeated row(s))\n  hint: on_duplicate='first' "
        "(CLI: --keep-first) keeps the first occurrence"
    )
    raise InputFormatError(msg)


def encode(
    qrels: QrelsColumns | PreparedQrels,
    runs: RunColumns,
    opts: EvalOptions = DEFAULTS,
    *,
    keep_rows: bool = True,
) -> Encoded:
    """Encode qrels (parsed or prepared) and runs for the kernels.

    ``opts``: ``compat`` (9: scores as float32), ``complete`` (every qrels query for
    every run) and ``on_duplicate``. ``keep_rows=False`` leaves ``row`` and ``jdx``
    empty (for a caller reading the grades alone).
    """
    pq = qrels if isinstance(qrels, PreparedQrels) else prepare_qrels(qrels)
    run_q, q = _queries(pq, runs)
    n_q = len(q.qids)

    # --- group rows by (run, query)
    n_runs = len(runs.run_names)
    perm, kstarts = _group(runs, run_q, q.lut, n_q, n_runs)
    gstarts = np.ascontiguousarray(kstarts[:-1])
    gends = np.ascontiguousarray(kstarts[1:])
    grid_q = np.tile(np.arange(n_q, dtype=np.int32), n_runs)
    grid_run = np.repeat(np.arange(n_runs, dtype=np.int32), n_q)
    # query-major visiting order: all runs' rankings of a query one after the other
    g_order = np.arange(n_q * n_runs, dtype=np.int64).reshape(n_runs, n_q).T.ravel()
    rel, row, jdx, gstarts, gends = _rank(
        runs,
        pq,
        kr.Rankings(perm, g_order, gstarts, gends, np.ascontiguousarray(q.qp[grid_q])),
        opts,
        keep_rows,
    )

    # --- which (run, query) groups are evaluated
    present = gends > gstarts
    evaluated = q.in_qrels[grid_q] & (present | opts.complete)
    sel = np.flatnonzero(evaluated)

    return Encoded(
        run_names=list(runs.run_names),
        qids=list(q.qids),
        in_qrels=q.in_qrels,
        starts=np.ascontiguousarray(gstarts[sel]),
        ends=np.ascontiguousarray(gends[sel]),
        group_run=grid_run[sel],
        group_q=grid_q[sel],
        rel=rel,
        row=row,
        jdx=jdx,
        qr_off=q.qr_off,
        qr_rel=pq.qr_rel,
        qr_rows=pq.qr_rows,
        prepared=pq,
        qp=q.qp,
    )


class _Queries(NamedTuple):
    """The queries of an encoding: the qrels', then those only the runs have."""

    qids: list[str]
    lut: np.ndarray  # the number of each distinct run query (first-appearance order)
    qp: np.ndarray  # each query's number in the prepared qrels (len(qids): none)
    in_qrels: np.ndarray
    qr_off: np.ndarray  # each query's judgments in the prepared qrels


def _group(
    runs: RunColumns, run_q: Heads, q_lut: np.ndarray, n_q: int, n_runs: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rows grouped by (run, query): ``kr.group_rows``' ``perm, starts``; an empty
    ``perm`` when the heads of equal ids show them grouped already (files, frames)."""
    n = len(runs)
    if n and run_q.rows.shape[0] * 8 <= n:  # (else few rows a stretch: sorted anyway)
        bounds = run_q.rows
        if n_runs > 1:
            # (np.union1d would load numpy.ma, a cost on the command's start)
            both = np.sort(np.concatenate((bounds, heads_of(runs.run))))
            bounds = both[np.diff(both, prepend=-1) != 0]
        at = np.searchsorted(run_q.rows, bounds, side="right") - 1
        keys = runs.run[bounds].astype(np.int64) * n_q + q_lut[run_q.codes[at]]
        if (keys[1:] >= keys[:-1]).all():  # grouped: each (run, query) one stretch
            starts = np.zeros(n_runs * n_q + 1, np.int64)
            np.add.at(starts, keys + 1, np.diff(bounds, append=n))
            return np.empty(0, np.int64), np.cumsum(starts)
    codes = spread(run_q.codes, run_q.rows, n)
    grouped: tuple[np.ndarray, np.ndarray] = kr.group_rows(runs.run, codes, q_lut, n_q, n_runs)
    return grouped


def _queries(pq: PreparedQrels, runs: RunColumns) -> tuple[Heads, _Queries]:
    """The runs' heads of equal query ids, and the queries (the qrels', then the runs'
    others, byte order)."""
    n_qp = len(pq.qids)
    run_q = encode_heads(runs.qid)
    run_q_first = run_q.first
    # each distinct query's number in the qrels (-1: none)
    names = run_q.strings(runs.qid)
    run_qp = np.array([pq.number.get(s, -1) for s in names], np.int32)
    if not (run_qp >= 0).any():
        ex_r = ", ".join(names[:3])
        ex_q = ", ".join(pq.first_qids)
        msg = (
            f"the runs and the qrels have no query in common (runs: {ex_r}, ...; "
            f"qrels: {ex_q}, ...)\n  hint: are these the qrels of this track?"
        )
        raise DataMismatchError(msg)
    if (run_qp >= 0).all():  # the usual case: no query outside the qrels
        qp = np.arange(n_qp, dtype=np.int32)
        return run_q, _Queries(pq.qids, run_qp, qp, np.ones(n_qp, bool), pq.qr_off[: n_qp + 1])
    q_names = runs.qid.take(run_q_first)
    extra = q_names.filter(pa.array(run_qp < 0))
    all_q = _byte_order(pa.concat_arrays([pq.qid_values.cast(extra.type), extra]))
    qids = all_q.to_pylist()
    in_qrels = np.zeros(len(qids), bool)
    in_qrels[_lookup(pq.qid_values.cast(all_q.type), all_q)] = True
    qp = np.full(len(qids), n_qp, np.int32)  # the empty query for the others
    qp[in_qrels] = np.arange(n_qp, dtype=np.int32)
    before = offsets(in_qrels)  # qrels queries before each
    return run_q, _Queries(qids, _lookup(q_names, all_q), qp, in_qrels, pq.qr_off[before])


def _rank(
    runs: RunColumns,
    pq: PreparedQrels,
    rk: kr.Rankings,
    opts: EvalOptions,
    keep_rows: bool,
) -> tuple[Any, ...]:
    """Judge and order every ranking: grades, run rows and qrels rows (empty without
    ``keep_rows``), the groups' starts and ends, less repeated documents."""
    n = len(runs)
    rel = np.empty(n, np.int32)
    row = np.empty(n if keep_rows else 0, np.int64)
    jdx = np.empty(n if keep_rows else 0, np.int64)
    is_dup = np.empty(n, np.bool_)
    # a frame's ids are read in place, ranking by ranking; others from their buffer
    views = runs.doc.in_place()
    kernel, docs = (
        (kr.rank_groups, ktext.Str(runs.doc.buf, runs.doc.starts, runs.doc.ends))
        if views is None
        else (kr.rank_view_groups, views)
    )
    parallel.run(
        kernel,
        (rk.end - rk.start)[rk.order].astype(np.float64),
        docs,
        runs.score,
        opts.compat == 9,
        rk,
        pq.table,
        kr.Ranked(rel, row, jdx, is_dup),
    )
    gstarts, gends = rk.start, rk.end
    if not is_dup.any():
        return rel, row, jdx, gstarts, gends
    if opts.on_duplicate == "error":
        if not keep_rows:  # the message names the row: ranked again with the rows
            _rank(runs, pq, rk, opts, True)
        _raise_duplicate_document(runs, row, is_dup)
    keep = ~is_dup
    removed = offsets(is_dup)
    if keep_rows:
        row, jdx = row[keep], jdx[keep]
    return rel[keep], row, jdx, gstarts - removed[gstarts], gends - removed[gends]
