"""The one builder of the long result table ``run_id, query_id, measure, value``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
    return _with_text(out, index, ev.enc, ev.text) if ev.text else out


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
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The long table and its index frame (``run_idx, block, query_idx, measure_idx``)."""
    name_s = pl.Series("measure", list(names), dtype=pl.String)
    runs = pl.Series("run_id", enc.run_names, dtype=pl.String)
    qids = pl.Series("query_id", [*enc.qids, "all"], dtype=pl.String)
    parts = []
    n_runs = len(enc.run_names)
    # per-query block: groups are run-major, query order within a run
    if rows is not None and per_query_cols.any():
        g_idx = np.flatnonzero(rows)
        m_idx = np.flatnonzero(per_query_cols)
        gg = np.repeat(g_idx, m_idx.shape[0])
        mm = np.tile(m_idx, g_idx.shape[0])
        parts.append(
            pl.DataFrame(
                {
                    "run_idx": enc.group_run[gg].astype(np.int64),
                    "block": np.zeros(gg.shape[0], np.int8),
                    "query_idx": enc.group_q[gg].astype(np.int64),
                    "measure_idx": mm.astype(np.int64),
                    "value": values[gg, mm],
                }
            )
        )
    rr = np.repeat(np.arange(n_runs), summary_cols.shape[0])
    mm = np.tile(summary_cols, n_runs)
    parts.append(
        pl.DataFrame(
            {
                "run_idx": rr.astype(np.int64),
                "block": np.ones(rr.shape[0], np.int8),
                "query_idx": np.full(rr.shape[0], len(enc.qids), np.int64),
                "measure_idx": mm.astype(np.int64),
                "value": summary[rr, mm],
            }
        )
    )
    df = pl.concat(parts).sort(["run_idx", "block"], maintain_order=True)
    out = df.select(
        runs.gather(df["run_idx"]).alias("run_id"),
        qids.gather(df["query_idx"]).alias("query_id"),
        name_s.gather(df["measure_idx"]).alias("measure"),
        pl.col("value"),
    )
    return out, df


def _with_text(
    out: pl.DataFrame, df: pl.DataFrame, enc: Encoded, text: dict[int, list[str]]
) -> pl.DataFrame:
    """Add the ``text`` column of the string measures (relstring); null ``value`` there."""
    n_q = len(enc.qids)
    g_of = np.full(len(enc.run_names) * n_q, -1, np.int64)  # (run, query) -> group
    g_of[enc.group_run.astype(np.int64) * n_q + enc.group_q] = np.arange(enc.group_run.shape[0])
    m_idx = df["measure_idx"].to_numpy()
    key = df["run_idx"].to_numpy() * n_q + df["query_idx"].to_numpy()
    col = np.full(len(df), None, dtype=object)
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
