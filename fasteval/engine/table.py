"""The one builder of the long result table ``run_id, query_id, measure, value``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.measures.parser import MeasureSet


@dataclass
class Evaluation:
    """Raw result of an evaluation: per-group values and their aggregates.

    ``values[g, m]`` is measure ``m`` for group ``g`` (a (run, query) pair);
    ``summary[r, m]`` the aggregate over run ``r``'s evaluated queries.
    """

    measures: MeasureSet
    enc: Encoded
    values: np.ndarray
    summary: np.ndarray
    has_rows: np.ndarray  # bool per group: the run retrieved something for that query
    # string-valued columns (relstring): column -> one string per group
    text: dict[int, list[str]] | None = None


def to_frame(ev: Evaluation, *, per_query: bool = True, compat: int = 9) -> pl.DataFrame:
    """Long table ``run_id, query_id, measure, value`` in trec_eval's order.

    Per run: the per-query rows (with ``per_query``; under ``compat=9`` only
    for queries the run retrieved something for), then the ``all`` rows.
    String measures (relstring) have per-query rows only, in a ``text`` column.
    """
    measures = ev.measures
    out, index = _long_table(
        ev.enc,
        [m.name for m in measures],
        ev.values,
        ev.summary,
        rows=(ev.has_rows if compat == 9 else np.ones_like(ev.has_rows)) if per_query else None,
        per_query_cols=np.array([m.info.per_query for m in measures], dtype=bool),
        summary_cols=np.array([j for j, m in enumerate(measures) if not m.info.text], np.int64),
    )
    out = _with_text(out, index, ev.enc, ev.text) if ev.text else out
    return _without_undefined(out, ev)


def _without_undefined(out: pl.DataFrame, ev: Evaluation) -> pl.DataFrame:
    """``out`` without the rows of measures undefined for a query (NaN: Accuracy with no
    relevant document retrieved), as ir_measures leaves them out."""
    cols = [j for j, m in enumerate(ev.measures) if m.info.aggregate == "defined"]
    if not cols or not (np.isnan(ev.values[:, cols]).any() or np.isnan(ev.summary[:, cols]).any()):
        return out
    names = [ev.measures[j].name for j in cols]
    return out.filter(~(pl.col("measure").is_in(names) & pl.col("value").is_nan()))


def long_table(
    enc: Encoded,
    names: Sequence[str],
    values: np.ndarray,
    summary: np.ndarray,
    *,
    per_query: bool = True,
) -> pl.DataFrame:
    """Long table of ``values[group, measure]`` and ``summary[run, measure]``.

    Per run: every measure for each query the run retrieved something for
    (with ``per_query``), then the ``all`` rows; the order of ``names``.
    """
    n = len(names)
    out, _ = _long_table(
        enc,
        names,
        values,
        summary,
        rows=enc.ends > enc.starts if per_query else None,
        per_query_cols=np.ones(n, dtype=bool),
        summary_cols=np.arange(n, dtype=np.int64),
    )
    return out


def _long_table(
    enc: Encoded,
    names: Sequence[str],
    values: np.ndarray,
    summary: np.ndarray,
    *,
    rows: np.ndarray | None,
    per_query_cols: np.ndarray,
    summary_cols: np.ndarray,
) -> tuple[pl.DataFrame, _Index]:
    """The long table and its index (each row's run, query and measure number).

    The row order is worked out in numpy and the frame built once: a one-run
    call's table (150 rows) costs 0.2 ms this way, against 1.8 ms through polars
    frames concatenated and sorted (and 0.15 ms since the columns of a small
    table are built from lists, :data:`SMALL_TABLE`). A small table's layout is
    kept for the next call with the same queries and measures (:func:`_layout`).
    """
    lay = _layout(enc, names, rows, per_query_cols, summary_cols)
    value = np.concatenate([values[lay.pq_g, lay.pq_m], summary[lay.s_run, lay.s_m]])[lay.order]
    idx = lay.idx
    n_rows = idx.run.shape[0]
    run_id = (
        pl.Series("run_id", enc.run_names * n_rows)  # one run: its name on every row
        if len(enc.run_names) == 1 and n_rows
        else _strings("run_id", enc.run_names, idx.run)
    )
    # (a frame from its first column, the others stacked on: 13 Python calls in polars
    # against 66 for ``pl.DataFrame(columns)``)
    out = run_id.to_frame().hstack(
        [lay.query, lay.measure, pl.Series("value", value.astype(np.float64, copy=False))]
    )
    return out, idx


class _Layout(NamedTuple):
    """Where each row of a long table comes from, and its query and measure columns.

    Row ``i`` (before ``order``) holds ``values[pq_g[i], pq_m[i]]`` for the
    per-query rows, then ``summary[s_run[j], s_m[j]]`` for the ``all`` rows.
    """

    idx: _Index
    pq_g: np.ndarray
    pq_m: np.ndarray
    s_run: np.ndarray
    s_m: np.ndarray
    order: np.ndarray
    query: pl.Series
    measure: pl.Series


LAYOUTS = 16
"""Layouts of small long tables kept for reuse (the most recently used)."""

LAYOUT_ROWS = 4096
"""Rows up to which a long table's layout is kept. A warm one-run call (TREC-8, three
measures: 153 rows) rebuilt its query and measure columns and its row order on every
call: 0.10-0.12 ms of a 2.3 ms call, caches cold after the kernels."""

_layouts: OrderedDict[tuple[Any, ...], _Layout] = OrderedDict()
_layouts_lock = threading.Lock()


def _layout(
    enc: Encoded,
    names: Sequence[str],
    rows: np.ndarray | None,
    per_query_cols: np.ndarray,
    summary_cols: np.ndarray,
) -> _Layout:
    """The layout of a long table (:class:`_Layout`), reused for a small table whose
    runs, queries, groups and measures are those of one built before (runs by number:
    one run's table serves every single run scored on the same queries)."""
    n_pq = int(per_query_cols.sum()) * (int(rows.sum()) if rows is not None else 0)
    key: tuple[Any, ...] | None = None
    if n_pq + len(enc.run_names) * summary_cols.shape[0] <= LAYOUT_ROWS:
        key = (
            len(enc.run_names),
            tuple(enc.qids),
            tuple(names),
            enc.group_run.tobytes(),
            enc.group_q.tobytes(),
            None if rows is None else rows.tobytes(),
            per_query_cols.tobytes(),
            summary_cols.tobytes(),
        )
        with _layouts_lock:
            hit = _layouts.get(key)
            if hit is not None:
                _layouts.move_to_end(key)
                return hit
    n_runs = len(enc.run_names)
    n_q = len(enc.qids)
    # per-query block: groups are run-major, query order within a run
    if rows is not None and per_query_cols.any():
        g_idx = np.flatnonzero(rows)
        m_idx = np.flatnonzero(per_query_cols)
        gg = np.repeat(g_idx, m_idx.shape[0])
        pq_run = enc.group_run[gg].astype(np.int64)
        pq_q = enc.group_q[gg].astype(np.int64)
        pq_m = np.tile(m_idx, g_idx.shape[0]).astype(np.int64)
    else:
        gg = pq_run = pq_q = pq_m = np.zeros(0, np.int64)
    s_run = np.repeat(np.arange(n_runs, dtype=np.int64), summary_cols.shape[0])
    s_m = np.tile(summary_cols.astype(np.int64), n_runs)
    run_idx = np.concatenate([pq_run, s_run])
    # per run: its per-query rows (in group order), then its ``all`` rows
    is_all = np.arange(run_idx.shape[0]) >= pq_run.shape[0]
    order = np.argsort(run_idx * 2 + is_all, kind="stable")
    idx = _Index(
        run_idx[order],
        np.concatenate([pq_q, np.full(s_run.shape[0], n_q, np.int64)])[order],
        np.concatenate([pq_m, s_m])[order],
    )
    for a in (*idx, gg, pq_m, s_run, s_m, order):  # shared by later calls: read-only
        a.flags.writeable = False
    made = _Layout(
        idx,
        gg,
        pq_m,
        s_run,
        s_m,
        order,
        _strings("query_id", [*enc.qids, "all"], idx.query),
        _strings("measure", list(names), idx.measure),
    )
    if key is not None:
        with _layouts_lock:
            _layouts[key] = made
            while len(_layouts) > LAYOUTS:
                _layouts.popitem(last=False)
    return made


SMALL_TABLE = 512
"""Rows up to which a string column of the long table is built from a Python list:
polars' gather has a fixed cost of about 20 microseconds a column, a list about
0.04 a row (one run's table, 153 rows: 11 against 23 microseconds a column)."""


def _strings(name: str, words: Sequence[str], idx: np.ndarray) -> pl.Series:
    """The column ``words[idx]``."""
    if idx.shape[0] <= SMALL_TABLE:
        picked = [words[i] for i in idx.tolist()]
        # strings are inferred as such (half polars' Python calls of a typed list)
        return pl.Series(name, picked) if picked else pl.Series(name, picked, dtype=pl.String)
    # indexing a Series with numpy is polars' direct gather (``.gather`` builds a query)
    return pl.Series(name, words, dtype=pl.String)[idx]


class _Index(NamedTuple):
    """Each row's run, query (``len(qids)``: the ``all`` rows) and measure number."""

    run: np.ndarray
    query: np.ndarray
    measure: np.ndarray


def _with_text(
    out: pl.DataFrame, idx: _Index, enc: Encoded, text: dict[int, list[str]]
) -> pl.DataFrame:
    """Add the ``text`` column of the string measures (relstring); null ``value`` there."""
    n_q = len(enc.qids)
    g_of = np.full(len(enc.run_names) * n_q, -1, np.int64)  # (run, query) -> group
    g_of[enc.group_run.astype(np.int64) * n_q + enc.group_q] = np.arange(enc.group_run.shape[0])
    m_idx = idx.measure
    key = idx.run * n_q + idx.query
    col = np.full(m_idx.shape[0], None, dtype=object)
    for j, strings in text.items():
        rows = np.flatnonzero(m_idx == j)
        col[rows] = np.asarray(strings, dtype=object)[g_of[key[rows]]]
    is_text = np.isin(m_idx, list(text))
    return out.with_columns(
        pl.when(pl.Series(is_text)).then(None).otherwise(pl.col("value")).alias("value"),
        pl.Series("text", col.tolist(), dtype=pl.String),
    )


def wide_table(df: pl.DataFrame, *, query_id: str = "all") -> pl.DataFrame:
    """One row per run, a column per measure (PyTerrier's ``pt.Experiment`` layout).

    Parameters
    ----------
    df
        A long table ``run_id, query_id, measure, value`` (``fasteval.evaluate``).
    query_id
        Which rows: ``"all"`` (the aggregates, default) or one query's values.

    Returns
    -------
    polars.DataFrame
        ``run_id`` (named ``name``, as PyTerrier does) and the measures in
        the order they first appear; runs in order of first appearance.
    """
    need = {"run_id", "query_id", "measure", "value"}
    if not need <= set(df.columns):
        msg = f"wide_table needs columns {sorted(need)}, got {df.columns}"
        raise ParameterError(msg)
    rows = df.filter(pl.col("query_id") == query_id)
    if rows.height == 0:
        msg = f"no rows with query_id {query_id!r}"
        raise ParameterError(msg)
    measures = rows["measure"].unique(maintain_order=True).to_list()
    wide = rows.pivot(on="measure", index="run_id", values="value", aggregate_function="first")
    return wide.select(pl.col("run_id").alias("name"), *measures)
