"""Writing evaluation tables: trec_eval's text layout, CSV, JSON, Parquet."""

from __future__ import annotations

import io
import os
from pathlib import Path

import polars as pl

from fasteval.errors import ParameterError
from fasteval.measures.parser import MeasureSet

FORMATS = ("trec", "csv", "json", "parquet")


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
    else:
        text = df.write_json()
        text = text if text.endswith("\n") else text + "\n"
    if path is None:
        return text
    Path(path).write_text(text)
    return None
