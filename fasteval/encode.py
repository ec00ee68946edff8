"""From parsed columns to the arrays the measure kernels read.

* Query ids become integer codes once, in byte-wise string order (trec_eval's
  query order).
* Rows are grouped by (run, query) with a counting sort (skipped when the
  input is already grouped).
* Document ids are never re-encoded: trec_eval compares documents only within
  a query (the qrels lookup, the duplicate check and the tie-break), so
  ``kernels.ranking.rank_groups`` hashes each id once against a small
  per-query table of judged documents and a per-ranking set, and breaks
  score ties by comparing the id bytes. Rankings already in trec_eval order
  are only checked, never sorted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fasteval import parallel
from fasteval.columns import QrelsColumns, RunColumns, StrColumn, dict_encode, numeric_numpy
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError
from fasteval.kernels import ranking as kr
from fasteval.kernels import text as ktext


def _lookup(values: pa.Array, into: pa.Array) -> np.ndarray:
    """Index of each of ``values`` in ``into`` (-1 where absent)."""
    return numeric_numpy(pc.index_in(values, value_set=into), null=-1).astype(np.int32)


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
    qrels: QrelsColumns,
    runs: RunColumns,
    *,
    compat: int = 9,
    complete: bool = False,
    on_duplicate: str = "error",
) -> Encoded:
    """Encode qrels and runs for the kernels.

    Parameters
    ----------
    qrels, runs
        Parsed columns.
    compat
        9: scores are rounded to float32 before ordering (trec_eval <= 9
        stores them as C ``float``); 10: float64.
    complete
        trec_eval ``-c``: evaluate every qrels query for every run (missing
        ones as empty rankings).
    on_duplicate
        ``"error"`` (default) or ``"first"`` to keep the first occurrence of a
        document repeated within a (run, query).
    """
    if on_duplicate not in ("error", "first"):
        msg = f"on_duplicate must be 'error' or 'first', got {on_duplicate!r}"
        raise ParameterError(msg)
    # --- queries: union of qrels and run query ids, sorted
    run_q_codes, run_q_first = dict_encode(runs.qid)
    run_q = runs.qid.take(run_q_first)  # distinct query ids, first-appearance order
    qr_q_codes, qr_q_first = dict_encode(qrels.qid)
    qr_q = qrels.qid.take(qr_q_first)
    all_q = pc.unique(pa.concat_arrays([run_q, qr_q]))
    all_q = all_q.take(pc.sort_indices(pc.cast(all_q, pa.large_binary())))
    n_q = len(all_q)
    # run rows keep first-appearance codes; q_lut maps them to sorted query indices
    q_lut = _lookup(run_q, all_q)
    qq = _lookup(qr_q, all_q)[qr_q_codes]
    in_qrels = np.zeros(n_q, bool)
    in_qrels[qq] = True
    in_runs = np.zeros(n_q, bool)
    in_runs[q_lut] = True
    if not (in_qrels & in_runs).any():
        ex_r = ", ".join(run_q.slice(0, 3).to_pylist())
        ex_q = ", ".join(qr_q.slice(0, 3).to_pylist())
        msg = (
            f"the runs and the qrels have no query in common (runs: {ex_r}, ...; "
            f"qrels: {ex_q}, ...)\n  hint: are these the qrels of this track?"
        )
        raise DataMismatchError(msg)

    # --- group rows by (run, query)
    n_runs = len(runs.run_names)
    perm, kstarts = kr.group_rows(runs.run, run_q_codes, q_lut, n_q, n_runs)
    gstarts = np.ascontiguousarray(kstarts[:-1])
    gends = np.ascontiguousarray(kstarts[1:])
    grid_q = np.tile(np.arange(n_q, dtype=np.int32), n_runs)
    grid_run = np.repeat(np.arange(n_runs, dtype=np.int32), n_q)

    # --- judge and order every ranking (documents compared by bytes, never re-encoded)
    qr_rows = np.argsort(qq, kind="stable").astype(np.int64)
    qr_off = np.searchsorted(qq[qr_rows], np.arange(n_q + 1), side="left").astype(np.int64)
    # the judged ids copied together per query: a query's table and ids stay in cache
    qd_buf, qd_off = ktext.gather(qrels.doc.buf, qrels.doc.starts, qrels.doc.ends, qr_rows)
    qd = StrColumn(qd_buf, qd_off[:-1], qd_off[1:])
    t_off = kr.qrels_table_offsets(qr_off)
    t_slots = np.full(int(t_off[-1]), -1, np.int64)
    t_hash = np.zeros(int(t_off[-1]), np.uint64)
    qr_dup = np.full(n_q, -1, np.int64)
    qr_rel = np.ascontiguousarray(qrels.rel[qr_rows])
    parallel.run(
        kr.build_qrels_tables,
        np.diff(qr_off).astype(np.float64) + 1.0,
        qd.buf,
        qd.starts,
        qd.ends,
        qr_off,
        qr_rows,
        t_off,
        t_slots,
        t_hash,
        qr_dup,
    )
    if (qr_dup >= 0).any():
        _raise_duplicate_judgment(qrels, qq, qr_dup)
    n = perm.shape[0]
    rel = np.empty(n, np.int32)
    row = np.empty(n, np.int64)
    jdx = np.empty(n, np.int64)
    is_dup = np.empty(n, np.bool_)
    was_sorted = np.zeros(gstarts.shape[0], np.bool_)
    # query-major visiting order: all runs' rankings of a query one after the other
    g_order = np.arange(gstarts.shape[0], dtype=np.int64).reshape(n_runs, n_q).T.ravel()
    parallel.run(
        kr.rank_groups,
        (gends - gstarts)[g_order].astype(np.float64),
        runs.doc.buf,
        runs.doc.starts,
        runs.doc.ends,
        runs.score,
        compat == 9,
        perm,
        g_order,
        gstarts,
        gends,
        grid_q,
        qd.buf,
        qd.starts,
        qd.ends,
        qr_rel,
        t_off,
        t_slots,
        t_hash,
        rel,
        row,
        jdx,
        is_dup,
        was_sorted,
    )
    if is_dup.any():
        if on_duplicate == "error":
            _raise_duplicate_document(runs, row, is_dup)
        keep = ~is_dup
        rel = rel[keep]
        row = row[keep]
        jdx = jdx[keep]
        removed = np.concatenate([[0], np.cumsum(is_dup, dtype=np.int64)])
        gstarts = gstarts - removed[gstarts]
        gends = gends - removed[gends]

    # --- which (run, query) groups are evaluated
    present = gends > gstarts
    evaluated = in_qrels[grid_q] & (present | complete)
    sel = np.flatnonzero(evaluated)

    return Encoded(
        run_names=list(runs.run_names),
        qids=all_q.to_pylist(),
        in_qrels=in_qrels,
        starts=np.ascontiguousarray(gstarts[sel]),
        ends=np.ascontiguousarray(gends[sel]),
        group_run=grid_run[sel],
        group_q=grid_q[sel],
        rel=rel,
        row=row,
        jdx=jdx,
        qr_off=qr_off,
        qr_rel=qr_rel,
        qr_rows=qr_rows,
    )
