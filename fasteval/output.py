"""Writing evaluation tables: trec_eval's text layout, CSV, JSON, Parquet."""

from __future__ import annotations

import io
import os
from pathlib import Path

import polars as pl

from fasteval.errors import ParameterError
from fasteval.measures.parser import MeasureSet

FORMATS = ("trec", "csv", "json", "jsonl", "parquet")


def format_trec(df: pl.DataFrame, measures: MeasureSet, *, zscore: bool = False) -> str:
    """Render a long result table exactly as trec_eval prints it.

    One block per run: per-query lines (when present), then the ``all``
    lines, led by ``runid`` when the measure set includes it. Integer
    measures print as integers, the rest with four decimals
    (``"%-22s\\t%s\\t%6.4f"``); string measures (``relstring``, from the
    ``text`` column) quoted, ``'...'``. With ``zscore`` (trec_eval ``-Z``)
    every numeric name is prefixed with ``Z`` and printed with four decimals.
    """
    integer = set() if zscore else {m.name for m in measures if m.info.integer}
    prefix = "Z" if zscore else ""
    has_text = "text" in df.columns
    cols = ["query_id", "measure", "value", *(["text"] if has_text else [])]
    first = next((m.name for m in measures if not m.info.text), None)  # first 'all' row
    buf = io.StringIO()
    for (run_id,), block in df.group_by("run_id", maintain_order=True):
        for row in block.select(cols).iter_rows():
            qid, name, value = row[:3]
            if qid == "all" and measures.runid and name == first:
                buf.write(f"{'runid':<22}\tall\t{run_id}\n")
            if has_text and row[3] is not None:
                buf.write(f"{name:<22}\t{qid}\t'{row[3]}'\n")
            elif name in integer:
                buf.write(f"{name:<22}\t{qid}\t{round(value)}\n")
            else:
                buf.write(f"{prefix}{name:<22}\t{qid}\t{value:6.4f}\n")
    return buf.getvalue()


def write_table(
    df: pl.DataFrame,
    measures: MeasureSet,
    fmt: str,
    path: str | os.PathLike[str] | None,
    *,
    zscore: bool = False,
) -> str | None:
    """Write ``df`` to ``path`` in ``fmt``; with no path, return the text to print.

    Parquet needs a path.
    """
    if fmt not in FORMATS:
        msg = f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"
        raise ParameterError(msg)
    if fmt == "parquet":
        if path is None:
            msg = "--format parquet needs an output path (-o FILE.parquet)"
            raise ParameterError(msg)
        df.write_parquet(Path(path))
        return None
    if fmt == "trec":
        text = format_trec(df, measures, zscore=zscore)
    elif fmt == "csv":
        text = df.write_csv()
    elif fmt == "jsonl":
        text = format_jsonl(df)
    else:
        text = df.write_json()
        text = text if text.endswith("\n") else text + "\n"
    if path is None:
        return text
    Path(path).write_text(text)
    return None


# --------------------------------------------------------------------------- issue 19
# Self-contained: ir_measures' record shape and PyTerrier's wide table.


def format_jsonl(df: pl.DataFrame) -> str:
    """JSON lines in ir_measures' ``Metric`` shape plus the run: one object per row.

    ``{"query_id": ..., "measure": ..., "value": ..., "run_id": ...}`` in the
    table's order; the aggregates keep ``query_id == "all"`` (trec_eval's
    convention; ir_measures' ``iter_calc`` has per-query records only). NaN
    values are written as ``null``; string measures (``relstring``) as their text.
    """
    import json
    import math

    has_text = "text" in df.columns
    cols = ["run_id", "query_id", "measure", "value", *(["text"] if has_text else [])]
    lines = []
    for row in df.select(cols).iter_rows():
        run, q, m, v = row[:4]
        if has_text and row[4] is not None:
            value: object = row[4]
        else:
            value = None if v is None or math.isnan(v) else v
        lines.append(
            json.dumps({"query_id": q, "measure": m, "value": value, "run_id": run}) + "\n"
        )
    return "".join(lines)


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
