"""From parsed columns to the integer arrays the kernels read.

* Query and document ids become integer codes once. Codes are
  *order-preserving*: code order equals byte-wise string order, so trec_eval's
  tie-break (doc id descending) and query order are integer comparisons.
  Encoding hashes byte slices exactly (``kernels.text.dict_encode``) and
  sorts only the distinct strings.
* Rows are grouped by (run, query) with a counting sort (skipped when the
  input is already grouped) and put in trec_eval order per group; groups
  already in order are only checked, never sorted.
* Qrels become, per query, a slice sorted by document code for binary search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fasteval.columns import QrelsColumns, RunColumns, StrColumn
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError
from fasteval.kernels import ranking as kr
from fasteval.kernels import text as kt


@dataclass
class Dictionary:
    """Distinct strings of a column and each row's code (order-preserving)."""

    values: pa.LargeStringArray  # sorted distinct strings
    codes: np.ndarray  # int32 per row: index into values


def encode_strings(col: StrColumn) -> Dictionary:
    """Dictionary-encode a string column with codes in byte-wise sorted order."""
    codes, first = kt.dict_encode(col.buf, col.starts, col.ends)
    uniq = col.take(first)
    order = pc.sort_indices(pc.cast(uniq, pa.large_binary())).to_numpy()
    rank = np.empty(order.shape[0], np.int32)
    rank[order] = np.arange(order.shape[0], dtype=np.int32)
    return Dictionary(uniq.take(pa.array(order)), rank[codes])


def _lookup(values: pa.Array, into: pa.Array) -> np.ndarray:
    """Index of each of ``values`` in ``into`` (-1 where absent)."""
    idx = pc.index_in(values, value_set=into)
    return idx.fill_null(-1).to_numpy().astype(np.int32)


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
    doc: np.ndarray  # int32 doc codes, trec_eval order within each group
    # qrels per query, sorted by doc code (codes of docs no run retrieved are -1)
    qr_off: np.ndarray
    qr_doc: np.ndarray
    qr_rel: np.ndarray
    n_sorted_groups: int = 0


def _doc_codes(
    qrels: QrelsColumns,
    runs: RunColumns,
    qq: np.ndarray,
    n_q: int,
    g_start: np.ndarray,
    g_end: np.ndarray,
    group_q: np.ndarray,
    perm: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query, order-preserving document codes for qrels rows and run rows (perm order)."""
    qr_rows = np.argsort(qq, kind="stable").astype(np.int64)
    qr_off = np.searchsorted(qq[qr_rows], np.arange(n_q + 1), side="left").astype(np.int64)
    q_grps = np.argsort(group_q, kind="stable").astype(np.int64)
    q_grp_off = np.searchsorted(group_q[q_grps], np.arange(n_q + 1), side="left").astype(np.int64)
    qr_code, run_code, n_uniq, qr_dup, u_base, u_src, u_row = kt.encode_by_query(
        qrels.doc.buf,
        qrels.doc.starts,
        qrels.doc.ends,
        qr_off,
        qr_rows,
        runs.doc.buf,
        runs.doc.starts,
        runs.doc.ends,
        q_grp_off,
        q_grps,
        g_start,
        g_end,
        perm,
    )
    if (qr_dup >= 0).any():
        b = int(qr_dup[qr_dup >= 0][0])
        same = np.flatnonzero(qq == qq[b])
        docs = [qrels.doc.value(int(i)) for i in same]
        a = int(same[docs.index(qrels.doc.value(b))])
        n_more = int((qr_dup >= 0).sum()) - 1
        msg = (
            f"{qrels.source.where(b)}: duplicate judgment for query {qrels.qid.value(b)!r} "
            f"document {qrels.doc.value(b)!r} (first at {qrels.source.where(a)})"
        )
        if n_more:
            msg += f"\n  (duplicates in {n_more} more quer(y/ies))"
        raise InputFormatError(msg)
    # sort each query's distinct documents byte-wise; rank = code
    slot_q = np.repeat(np.arange(n_q, dtype=np.int32), np.diff(u_base))
    valid = (np.arange(u_base[-1]) - u_base[slot_q]) < n_uniq[slot_q]
    slots = np.flatnonzero(valid)
    src = u_src[slots]
    from_q = slots[src == 0]
    from_r = slots[src == 1]
    a = pc.cast(qrels.doc.take(u_row[from_q]), pa.large_binary())
    b = pc.cast(runs.doc.take(u_row[from_r]), pa.large_binary())
    where = np.empty(slots.shape[0], np.int64)
    where[src == 0] = np.arange(from_q.shape[0])
    where[src == 1] = from_q.shape[0] + np.arange(from_r.shape[0])
    strings = pa.concat_arrays([a, b]).take(pa.array(where))
    idx = pc.sort_indices(
        pa.table({"q": slot_q[slots], "s": strings}),
        sort_keys=[("q", "ascending"), ("s", "ascending")],
    ).to_numpy()
    rank = np.zeros(u_base[-1], np.int32)
    sorted_slots = slots[idx]
    rank[sorted_slots] = (
        np.arange(sorted_slots.shape[0])
        - np.searchsorted(slot_q[sorted_slots], slot_q[sorted_slots])
    ).astype(np.int32)
    kt.remap_codes(g_start, g_end, group_q, u_base, rank, run_code, qq.astype(np.int32), qr_code)
    return qr_code, run_code


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
    run_q = encode_strings(runs.qid)
    qr_q = encode_strings(qrels.qid)
    all_q = pc.unique(pa.concat_arrays([run_q.values, qr_q.values]))
    all_q = all_q.take(pc.sort_indices(pc.cast(all_q, pa.large_binary())))
    n_q = len(all_q)
    rq = _lookup(run_q.values, all_q)[run_q.codes]
    qq = _lookup(qr_q.values, all_q)[qr_q.codes]
    in_qrels = np.zeros(n_q, bool)
    in_qrels[qq] = True
    in_runs = np.zeros(n_q, bool)
    in_runs[rq] = True
    if not (in_qrels & in_runs).any():
        ex_r = ", ".join(run_q.values.slice(0, 3).to_pylist())
        ex_q = ", ".join(qr_q.values.slice(0, 3).to_pylist())
        msg = (
            f"the runs and the qrels have no query in common (runs: {ex_r}, ...; "
            f"qrels: {ex_q}, ...)\n  hint: are these the qrels of this track?"
        )
        raise DataMismatchError(msg)

    # --- group rows by (run, query)
    n_runs = len(runs.run_names)
    keys = runs.run.astype(np.int64) * n_q + rq
    if keys.shape[0] > 1 and bool(np.any(keys[1:] < keys[:-1])):
        perm, kstarts = kr.counting_sort(keys, n_runs * n_q)
    else:
        perm = np.arange(keys.shape[0], dtype=np.int64)
        kstarts = np.searchsorted(keys, np.arange(n_runs * n_q + 1), side="left").astype(np.int64)
    gstarts = np.ascontiguousarray(kstarts[:-1])
    gends = np.ascontiguousarray(kstarts[1:])
    grid_q = np.tile(np.arange(n_q, dtype=np.int32), n_runs)
    grid_run = np.repeat(np.arange(n_runs, dtype=np.int32), n_q)

    # --- documents: per-query codes in byte order (qrels and runs together)
    qr_code, doc = _doc_codes(qrels, runs, qq, n_q, gstarts, gends, grid_q, perm)
    score = runs.score[perm]
    if compat == 9:
        score = score.astype(np.float32).astype(np.float64)

    # --- duplicates within a (run, query)
    nonempty = np.flatnonzero(gends > gstarts)
    is_dup = np.zeros(doc.shape[0], dtype=np.bool_)
    n_dup_groups = kr.mark_duplicates(gstarts[nonempty], gends[nonempty], doc, is_dup)
    if n_dup_groups:
        if on_duplicate == "error":
            i = int(np.flatnonzero(is_dup)[0])
            row = int(perm[i])
            msg = (
                f"{runs.source.where(row)}: document {runs.doc.value(row)!r} appears more "
                f"than once for query {runs.qid.value(row)!r} in run "
                f"{runs.run_names[runs.run[row]]!r} ({int(is_dup.sum())} repeated row(s) "
                f"in {n_dup_groups} ranking(s))\n  hint: on_duplicate='first' "
                "(CLI: --keep-first) keeps the first occurrence"
            )
            raise InputFormatError(msg)
        keep = ~is_dup
        doc = doc[keep]
        score = score[keep]
        perm = perm[keep]
        removed = np.concatenate([[0], np.cumsum(is_dup)])
        gstarts = gstarts - removed[gstarts]
        gends = gends - removed[gends]

    n_sorted = kr.order_groups(gstarts, gends, score, doc, perm)

    # --- which (run, query) groups are evaluated
    present = gends > gstarts
    evaluated = in_qrels[grid_q] & (present | complete)
    sel = np.flatnonzero(evaluated)

    # --- qrels per query, sorted by doc code
    qorder = np.lexsort((qr_code, qq))
    qr_off = np.searchsorted(qq[qorder], np.arange(n_q + 1), side="left").astype(np.int64)
    return Encoded(
        run_names=list(runs.run_names),
        qids=all_q.to_pylist(),
        in_qrels=in_qrels,
        starts=np.ascontiguousarray(gstarts[sel]),
        ends=np.ascontiguousarray(gends[sel]),
        group_run=grid_run[sel],
        group_q=grid_q[sel],
        doc=np.ascontiguousarray(doc),
        qr_off=qr_off,
        qr_doc=np.ascontiguousarray(qr_code[qorder]),
        qr_rel=np.ascontiguousarray(qrels.rel[qorder]),
        n_sorted_groups=int(n_sorted),
    )
