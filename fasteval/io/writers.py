"""The one module that writes result tables and runs: text layouts, CSV, TSV, JSON, Parquet.

Every file fasteval writes is opened here, and written atomically: into a
temporary file in the same folder, then renamed over the target
(``os.replace``), so a crash never leaves a half-written table behind.
"Parquet needs an output path" is checked here once.
"""

from __future__ import annotations

import io
import json
import math
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.errors import ParameterError
from fasteval.measures.diversity import parse_diversity_measures
from fasteval.measures.parser import MeasureSet

FORMATS = ("trec", "csv", "json", "jsonl", "parquet")
DIVERSITY_FORMATS = ("trec", "csv", "json", "parquet", "ndeval")
TABLE_FORMATS = ("tsv", "csv", "json", "parquet")  # the analysis commands' tables
PARQUET_SUFFIXES = (".parquet", ".pq")

PathLike = str | os.PathLike[str]


@contextmanager
def replacing(path: PathLike) -> Iterator[str]:
    """A temporary path beside ``path``, renamed to ``path`` when the block succeeds.

    On any exception (Ctrl-C included) the temporary file is removed and
    ``path`` is left as it was.
    """
    target = Path(path)
    # a unique name (not mkstemp, whose 0600 mode the renamed file would keep)
    tmp = str(target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(text: str, path: PathLike) -> None:
    """Write ``text`` to ``path`` (atomically)."""
    with replacing(path) as tmp, open(tmp, "w") as f:
        f.write(text)


def write_parquet(df: pl.DataFrame, path: PathLike) -> None:
    """Write a polars frame to ``path`` as Parquet (atomically)."""
    with replacing(path) as tmp:
        df.write_parquet(tmp)


def write_arrow(table: pa.Table, path: PathLike) -> None:
    """Write a qrels or run Arrow table to Parquet (zstd, dictionary-encoded ids), atomically."""
    dictionary = ["run_id", "query_id", "doc_id"] if "run_id" in table.column_names else True
    with replacing(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", use_dictionary=dictionary)


def emit(text: str, path: PathLike | None) -> str | None:
    """Write ``text`` to ``path``; with no path, return it (for the caller to print)."""
    if path is None:
        return text
    write_text(text, path)
    return None


def require_path(fmt: str, path: PathLike | None) -> PathLike:
    """The output path of a binary format; a :class:`ParameterError` when there is none."""
    if path is None:
        msg = f"--format {fmt} needs an output path (-o FILE.{fmt})"
        raise ParameterError(msg)
    return path


def check_format(fmt: str, formats: Sequence[str]) -> None:
    """Raise a :class:`ParameterError` unless ``fmt`` is one of ``formats``."""
    if fmt not in formats:
        msg = f"unknown format {fmt!r}; choose one of {', '.join(formats)}"
        raise ParameterError(msg)


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


def _topic_key(q: str) -> tuple[int, int | str]:
    return (0, int(q)) if q.isdigit() else (1, q)


def format_ndeval(df: pl.DataFrame) -> str:
    """ndeval's CSV layout: ``runid,topic,<measures>``, a row per topic, then ``amean``.

    Measures are named as ndeval names them (``alpha-nDCG@20``), values
    printed with six decimals; topics in numeric order when they are numbers.
    One header line heads all runs.
    """
    names = list(dict.fromkeys(df["measure"].to_list()))
    col = {n: parse_diversity_measures(n)[0].ndeval_name for n in names}
    buf = io.StringIO()
    buf.write("runid,topic," + ",".join(col[n] for n in names) + "\n")
    for (run_id,), block in df.group_by("run_id", maintain_order=True):
        wide: dict[str, dict[str, float]] = {}
        for qid, name, value in block.select("query_id", "measure", "value").iter_rows():
            wide.setdefault(qid, {})[name] = value
        topics = sorted((q for q in wide if q != "all"), key=_topic_key)
        for q in [*topics, "all"]:
            if q not in wide:
                continue
            vals = ",".join(f"{wide[q].get(n, float('nan')):.6f}" for n in names)
            buf.write(f"{run_id},{'amean' if q == 'all' else q},{vals}\n")
    return buf.getvalue()


def format_trec_diversity(df: pl.DataFrame) -> str:
    """trec_eval's layout: ``measure <tab> query <tab> value`` (four decimals).

    A ``runid`` line heads each run's ``all`` block.
    """
    buf = io.StringIO()
    last = None
    for run, name, qid, value in df.select("run_id", "measure", "query_id", "value").iter_rows():
        if qid == "all" and run != last:
            buf.write(f"{'runid':<22}\tall\t{run}\n")
            last = run
        buf.write(f"{name:<22}\t{qid}\t{value:6.4f}\n")
    return buf.getvalue()


def _json(df: pl.DataFrame) -> str:
    text = df.write_json()
    return text if text.endswith("\n") else text + "\n"


def write_table(
    df: pl.DataFrame,
    fmt: str,
    path: PathLike | None,
    *,
    measures: MeasureSet | None = None,
    zscore: bool = False,
    formats: Sequence[str] = FORMATS,
    tsv_digits: int | None = None,
    float_precision: int | None = None,
) -> str | None:
    """Write a long result table in ``fmt``; with no path, return the text to print.

    Parameters
    ----------
    df
        The table (``run_id, query_id, measure, value`` for ``trec`` and ``ndeval``).
    fmt
        One of ``formats``: ``trec`` (trec_eval's layout for ``measures``;
        ndeval's trec layout when ``measures`` is None), ``ndeval`` (ndeval's
        CSV), ``csv``, ``tsv``, ``json`` or ``parquet`` (needs ``path``).
    path
        Where to write; None returns the text.
    measures, zscore
        For ``trec``: the measure set (integer measures, ``runid`` line) and
        trec_eval ``-Z``'s ``Z`` prefix.
    formats
        The formats the caller accepts.
    tsv_digits
        For ``tsv``: round float columns to this many digits first.
    float_precision
        For ``csv`` / ``tsv``: digits printed after the point.
    """
    check_format(fmt, formats)
    if fmt == "parquet":
        write_parquet(df, require_path(fmt, path))
        return None
    if fmt == "trec":
        text = (
            format_trec_diversity(df)
            if measures is None
            else format_trec(df, measures, zscore=zscore)
        )
    elif fmt == "ndeval":
        text = format_ndeval(df)
    elif fmt in ("csv", "tsv"):
        if fmt == "tsv" and tsv_digits is not None:
            df = df.with_columns(pl.col(pl.Float64).round(tsv_digits))
        text = df.write_csv(
            separator="\t" if fmt == "tsv" else ",", float_precision=float_precision
        )
    elif fmt == "jsonl":
        text = format_jsonl(df)
    else:
        text = _json(df)
    return emit(text, path)


def format_jsonl(df: pl.DataFrame) -> str:
    """JSON lines in ir_measures' ``Metric`` shape plus the run: one object per row.

    ``{"query_id": ..., "measure": ..., "value": ..., "run_id": ...}`` in the
    table's order; the aggregates keep ``query_id == "all"`` (trec_eval's
    convention; ir_measures' ``iter_calc`` has per-query records only). NaN
    values are written as ``null``; string measures (``relstring``) as their text.
    """
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


def write_frame(df: pl.DataFrame, path: PathLike) -> None:
    """Write a table by its file name: Parquet (``.parquet``/``.pq``), TSV (``.tsv``) or CSV."""
    suffix = Path(path).suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        write_parquet(df, path)
    else:
        write_text(df.write_csv(separator="\t" if suffix == ".tsv" else ","), path)


def write_run(df: pl.DataFrame, path: PathLike) -> None:
    """Write a run-schema frame as TREC text (``qid Q0 doc rank score tag``) or Parquet."""
    if Path(path).suffix.lower() in PARQUET_SUFFIXES:
        write_arrow(df.to_arrow(compat_level=pl.CompatLevel.oldest()), path)
        return
    lines = df.select(
        pl.format(
            "{} Q0 {} {} {} {}",
            "query_id",
            "doc_id",
            "rank",
            pl.col("score").cast(pl.String),
            "run_id",
        )
    ).to_series()
    text = "\n".join(lines.to_list())
    write_text(text + "\n" if text else "", path)
