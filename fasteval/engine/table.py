"""The long result table ``run_id, query_id, measure, value`` of every evaluator."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from fasteval.columns import StrColumn, numeric_array, offsets
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.measures.parser import MeasureSet

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa


class ResultIndex(NamedTuple):
    """Group ``g`` is run ``run_names[group_run[g]]``, query ``qids[group_q[g]]``."""

    run_names: list[str]
    qids: list[str]
    group_run: np.ndarray
    group_q: np.ndarray

    @classmethod
    def of(cls, enc: Encoded) -> ResultIndex:
        return cls(enc.run_names, enc.qids, enc.group_run, enc.group_q)


@dataclass
class Evaluation:
    """``values[g, m]``: measure ``m`` of group ``g`` (a (run, query) pair);
    ``summary[r, m]``: its aggregate over run ``r``'s evaluated queries."""

    measures: MeasureSet
    index: ResultIndex
    values: np.ndarray
    summary: np.ndarray
    has_rows: np.ndarray  # bool per group: the run retrieved something for that query
    # string-valued columns (relstring): column -> one string per group
    text: dict[int, list[str]] | None = None


class Long(NamedTuple):
    """The long table ``run_id, query_id, measure, value`` (and ``text``) as arrays
    (rendered as text without polars; :meth:`to_polars` gives the frame).

    Row ``i`` is run ``run_names[run[i]]``, query ``qids[query[i]]`` (``len(qids)``:
    ``all``), measure ``names[measure[i]]``; ``text``: ``None`` or a string per row
    (``None`` on numeric rows; on the others ``value`` is not read).
    """

    run_names: list[str]
    qids: list[str]
    names: list[str]
    run: np.ndarray
    query: np.ndarray
    measure: np.ndarray
    value: np.ndarray
    text: np.ndarray | None

    @property
    def height(self) -> int:
        """The number of rows."""
        return int(self.run.shape[0])

    def rows(self) -> Iterator[tuple[str, str, str, float, str | None]]:
        """Each row as ``(run_id, query_id, measure, value, text)``."""
        qids = [*self.qids, "all"]
        runs, names = self.run_names, self.names
        text = self.text.tolist() if self.text is not None else repeat(None)
        for r, q, m, v, t in zip(
            self.run.tolist(),
            self.query.tolist(),
            self.measure.tolist(),
            self.value.tolist(),
            text,
            strict=False,
        ):
            yield runs[r], qids[q], names[m], v, t

    def to_arrow(self) -> pa.Table:
        """The table as Arrow, as :meth:`to_polars`' ``to_arrow`` gives it."""
        import pyarrow as pa  # noqa: PLC0415 (loaded where a table is written)

        is_text = None if self.text is None else self.text != None  # noqa: E711
        cols = {
            "run_id": _large_strings(self.run_names, self.run),
            "query_id": _large_strings([*self.qids, "all"], self.query),
            "measure": _large_strings(self.names, self.measure),
            "value": numeric_array(self.value, is_text, np.float64),
        }
        if self.text is not None:
            cols["text"] = pa.array(self.text.tolist(), pa.large_string())
        return pa.table(cols)

    def to_polars(self) -> pl.DataFrame:
        """The table as a polars DataFrame (``text`` only when some row has text)."""
        import polars as pl  # noqa: PLC0415 (a text evaluation never loads polars)

        value = pl.Series("value", self.value.astype(np.float64, copy=False))
        cols = [
            _strings("query_id", [*self.qids, "all"], self.query),
            _strings("measure", self.names, self.measure),
            value,
        ]
        if self.text is not None:
            is_text = pl.Series(self.text != None)  # noqa: E711 (elementwise)
            cols[2] = pl.select(
                pl.when(is_text).then(None).otherwise(value).alias("value")
            ).to_series()
            cols.append(pl.Series("text", self.text.tolist(), dtype=pl.String))
        # a frame from its first column, the others stacked on (fewer Python calls)
        return _strings("run_id", self.run_names, self.run).to_frame().hstack(cols)


def to_long(ev: Evaluation, *, per_query: bool = True, compat: int = 9) -> Long:
    """The long table of ``ev`` in trec_eval's order: per run, the per-query rows
    (with ``per_query``; under ``compat=9`` only queries it retrieved for), then the
    ``all`` rows. Text measures have per-query rows only; undefined (NaN) values of
    ``defined``-aggregated measures are left out, as ir_measures leaves them."""
    measures = ev.measures
    out = _long_table(
        ev.index,
        [m.name for m in measures],
        ev.values,
        ev.summary,
        rows=(ev.has_rows if compat == 9 else np.ones_like(ev.has_rows)) if per_query else None,
        per_query_cols=np.array([m.info.per_query for m in measures], dtype=bool),
        summary_cols=np.array([j for j, m in enumerate(measures) if not m.info.text], np.int64),
    )
    out = _with_text(out, ev.index, ev.text) if ev.text else out
    return _without_undefined(out, ev)


def to_frame(ev: Evaluation, *, per_query: bool = True, compat: int = 9) -> pl.DataFrame:
    """:func:`to_long` as a polars DataFrame."""
    return to_long(ev, per_query=per_query, compat=compat).to_polars()


def _without_undefined(out: Long, ev: Evaluation) -> Long:
    """``out`` without the NaN rows of ``defined``-aggregated measures."""
    cols = [j for j, m in enumerate(ev.measures) if m.info.aggregate == "defined"]
    if not cols or not (np.isnan(ev.values[:, cols]).any() or np.isnan(ev.summary[:, cols]).any()):
        return out
    keep = np.flatnonzero(~(np.isin(out.measure, cols) & np.isnan(out.value)))
    text = None if out.text is None else out.text[keep]
    return Long(*out[:3], out.run[keep], out.query[keep], out.measure[keep], out.value[keep], text)


def long_table(
    enc: Encoded,
    names: Sequence[str],
    values: np.ndarray,
    summary: np.ndarray,
    *,
    per_query: bool = True,
) -> pl.DataFrame:
    """Long frame of ``values[group, measure]`` and ``summary[run, measure]``: per run,
    its queries with rows (with ``per_query``), then the ``all`` rows."""
    n = len(names)
    return _long_table(
        ResultIndex.of(enc),
        names,
        values,
        summary,
        rows=enc.ends > enc.starts if per_query else None,
        per_query_cols=np.ones(n, dtype=bool),
        summary_cols=np.arange(n, dtype=np.int64),
    ).to_polars()


def _long_table(
    enc: ResultIndex,
    names: Sequence[str],
    values: np.ndarray,
    summary: np.ndarray,
    *,
    rows: np.ndarray | None,
    per_query_cols: np.ndarray,
    summary_cols: np.ndarray,
) -> Long:
    """The long table: per run, its per-query rows, then its ``all`` rows."""
    n_runs = len(enc.run_names)
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
    is_all = np.arange(run_idx.shape[0]) >= pq_run.shape[0]
    order = np.argsort(run_idx * 2 + is_all, kind="stable")
    query = np.concatenate([pq_q, np.full(s_run.shape[0], len(enc.qids), np.int64)])
    value = np.concatenate([values[gg, pq_m], summary[s_run, s_m]])[order]
    measure = np.concatenate([pq_m, s_m])[order]
    return Long(
        list(enc.run_names),
        list(enc.qids),
        list(names),
        run_idx[order],
        query[order],
        measure,
        value,
        None,
    )


SMALL_TABLE = 512
"""Rows up to which a string column of the long table is built from a Python list (polars'
gather has a fixed cost per column that a small list does not)."""


def _strings(name: str, words: Sequence[str], idx: np.ndarray) -> pl.Series:
    """The column ``words[idx]``."""
    import polars as pl  # noqa: PLC0415 (a text evaluation never loads polars)

    if idx.shape[0] <= SMALL_TABLE:
        picked = [words[i] for i in idx.tolist()]
        # strings are inferred as such (half polars' Python calls of a typed list)
        return pl.Series(name, picked) if picked else pl.Series(name, picked, dtype=pl.String)
    # indexing a Series with numpy is polars' direct gather (``.gather`` builds a query)
    return pl.Series(name, words, dtype=pl.String)[idx]


def _large_strings(words: Sequence[str], idx: np.ndarray) -> pa.Array:
    """``words[idx]`` as an Arrow ``large_string`` array (gathered by a kernel, not per row)."""
    raw = [w.encode() for w in words]
    off = offsets([len(b) for b in raw])
    return StrColumn(np.frombuffer(b"".join(raw), np.uint8), off[:-1], off[1:]).take(idx)


def _with_text(out: Long, enc: ResultIndex, text: dict[int, list[str]]) -> Long:
    """``out`` with the ``text`` of the string measures (relstring) on their rows."""
    n_q = len(enc.qids)
    g_of = np.full(len(enc.run_names) * n_q, -1, np.int64)  # (run, query) -> group
    g_of[enc.group_run.astype(np.int64) * n_q + enc.group_q] = np.arange(enc.group_run.shape[0])
    key = out.run * n_q + out.query
    col = np.full(out.height, None, dtype=object)
    for j, strings in text.items():
        rows = np.flatnonzero(out.measure == j)
        col[rows] = np.asarray(strings, dtype=object)[g_of[key[rows]]]
    return out._replace(text=col)


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
    import polars as pl  # noqa: PLC0415 (a text evaluation never loads polars)

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
