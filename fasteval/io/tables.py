"""Accept qrels and runs as paths, directories, Parquet archives, polars or Arrow tables.

Fixed schemas (see SPEC section 1):

* qrels: ``query_id: str, doc_id: str, relevance: int32``
* runs: ``run_id: str, query_id: str, doc_id: str, rank: int64 (nullable), score: float64``
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from fasteval.columns import (
    QrelsColumns,
    RunColumns,
    Source,
    concat_str,
    encode_heads,
    heads_of,
    numeric_numpy,
    one_chunk,
    spread,
)
from fasteval.errors import FastevalWarning, InputFormatError, SchemaError
from fasteval.io import adapters, files, formats, tokens, trec
from fasteval.io.formats import is_parquet
from fasteval.io.validate import (
    judgments,
    no_nulls,
    one_dictionary,
    require_columns,
    str_column,
    table_source,
    to_arrow,
)
from fasteval.options import DEFAULTS, EvalOptions

QRELS_SCHEMA = pa.schema(
    [("query_id", pa.large_string()), ("doc_id", pa.large_string()), ("relevance", pa.int32())]
)
RUN_SCHEMA = pa.schema(
    [
        ("run_id", pa.large_string()),
        ("query_id", pa.large_string()),
        ("doc_id", pa.large_string()),
        ("rank", pa.int64()),
        ("score", pa.float64()),
    ]
)

if TYPE_CHECKING:
    import polars as pl


def _run_codes(table: pa.Table, name: str, row_offset: int) -> tuple[np.ndarray, list[str]]:
    """Run codes in order of first appearance, and the run names: from a dictionary
    column's indices (an archive's: no string compared), else from the heads of runs of
    equal ids (:func:`encode_heads`)."""
    col = table.column("run_id")
    arr = one_dictionary(col) if pa.types.is_dictionary(col.type) else None
    if arr is None:
        rid = str_column(table, name, "run_id", row_offset)
        h = encode_heads(rid)
        return spread(h.codes, h.rows, len(rid)), h.strings(rid)
    idx = numeric_numpy(arr.indices, null=0)
    heads = heads_of(idx)  # runs of equal entries (an archive's: one a run or so)
    entries, first = np.unique(idx[heads], return_index=True)
    seen = entries[np.argsort(first)]  # dictionary entries in order of first appearance
    lut = np.full(len(arr.dictionary), -1, np.int32)
    lut[seen] = np.arange(len(seen), dtype=np.int32)
    # the names by Python indexing: pa.array(numpy) would import pandas
    words = arr.dictionary.to_pylist()
    return spread(lut[idx[heads]], heads, len(idx)), [words[i] for i in seen.tolist()]


def qrels_from_table(table: pa.Table, name: str) -> QrelsColumns:
    """Qrels columns from an Arrow table with ``query_id, doc_id, relevance``."""
    cols = {"query_id": "str", "doc_id": "str", "relevance": "int"}
    rel = judgments(table, name, cols, "qrels")
    return QrelsColumns(
        str_column(table, name, "query_id"),
        str_column(table, name, "doc_id"),
        rel,
        table_source(name),
    )


def runs_from_table(table: pa.Table, name: str, row_offset: int = 0) -> RunColumns:
    """Run columns from an Arrow table with ``run_id, query_id, doc_id, score`` (+ ``rank``);
    its rows are named after ``row_offset`` rows before it (a piece of an archive)."""
    require_columns(
        table, name, {"run_id": "str", "query_id": "str", "doc_id": "str", "score": "float"}
    )
    no_nulls(table, name, ["run_id", "query_id", "doc_id", "score"], row_offset)
    src = table_source(name, row_offset)
    if table.num_rows == 0:
        msg = f"{name}: the run table is empty"
        raise InputFormatError(msg)
    sc = table.column("score")
    if not (pa.types.is_floating(sc.type) or pa.types.is_integer(sc.type)):
        msg = f"{name}: column 'score' must be numeric, found {sc.type}"
        raise SchemaError(msg)
    if not pa.types.is_float64(sc.type):
        sc = sc.cast(pa.float64())  # (loads pyarrow.compute)
    score = numeric_numpy(sc)
    if not np.isfinite(score).all():
        bad = np.flatnonzero(~np.isfinite(score))
        msg = f"{src.where(int(bad[0]))}: score is not a finite number: {score[bad[0]]}"
        raise InputFormatError(msg)
    codes, names = _run_codes(table, name, row_offset)
    rk = table.column("rank") if "rank" in table.schema.names else None
    if rk is not None and pa.types.is_integer(rk.type):
        rank = one_chunk(rk if pa.types.is_int64(rk.type) else rk.cast(pa.int64()))
    else:
        rank = pa.nulls(table.num_rows, pa.int64())
    return RunColumns(
        run_names=names,
        run=codes,
        qid=str_column(table, name, "query_id", row_offset),
        doc=str_column(table, name, "doc_id", row_offset),
        score=score,
        rank=rank,
        source=src,
    )


def qrels_columns(x: Any, *, lenient: bool = False) -> QrelsColumns:
    """Qrels from a text/.gz/Parquet path, a polars DataFrame or an Arrow table."""
    if isinstance(x, (str, os.PathLike)) and not is_parquet(Path(x)):
        return trec.parse_qrels_files([x], lenient=lenient)
    table, name = to_arrow(x, "qrels")
    return qrels_from_table(table, name)


def _run_origin(part: RunColumns, code: int) -> str:
    """Where run ``code`` of ``part`` starts (file and line, or table and row)."""
    return part.source.where(int(np.argmax(part.run == code)))


def concat_runs(parts: list[RunColumns]) -> RunColumns:
    """Concatenate run columns; a run id given by two parts (files, archives, tables) is an error.

    Raises
    ------
    InputFormatError
        Naming both places the run id comes from, and how to name runs apart.
    """
    if len(parts) == 1:
        return parts[0]
    names: dict[str, int] = {}
    owner: dict[str, tuple[int, int]] = {}
    run_codes = []
    for i, p in enumerate(parts):
        for k, n in enumerate(p.run_names):
            if n in owner:
                j, kj = owner[n]
                first = _run_origin(parts[j], kj)
                raise InputFormatError(trec.duplicate_run_id(n, first, _run_origin(p, k)))
            owner[n] = (i, k)
        remap = np.array([names.setdefault(n, len(names)) for n in p.run_names], np.int32)
        run_codes.append(remap[p.run])
    offsets = np.cumsum([0] + [len(p.source.names) for p in parts[:-1]])
    src = Source(
        [n for p in parts for n in p.source.names],
        np.concatenate([p.source.files(len(p)) + o for p, o in zip(parts, offsets, strict=True)]),
        np.concatenate([p.source.lines(len(p)) for p in parts]),
        [t for p in parts for t in (p.source.is_table or [False] * len(p.source.names))],
    )
    return RunColumns(
        run_names=list(names),
        run=np.concatenate(run_codes),
        qid=concat_str([p.qid for p in parts]),
        doc=concat_str([p.doc for p in parts]),
        score=np.concatenate([p.score for p in parts]),
        rank=pa.concat_arrays([p.rank for p in parts]),
        source=src,
    )


def looks_like_run(p: Path) -> bool:
    """Whether a file in a folder of runs is a run: one of its first ten content lines reads
    ``qid Q0 docno rank score tag`` (an integer rank, a numeric score), or its head cannot
    tell (the reader then names its problem)."""
    head = formats.head(p)
    if head is None:
        return True
    lines = head.removeprefix(files.BOM).split(b"\n")
    if len(head) == 16384:
        lines = lines[:-1]  # the last line may be cut short
        if not lines:
            return True
    content = (f for line in lines if (f := line.split()) and not f[0].startswith(b"#"))
    return any(len(f) >= tokens.RUN_FIELDS and _ranked(f) for f in itertools.islice(content, 10))


def _ranked(f: list[bytes]) -> bool:
    """Whether a line's 4th and 5th fields read as a rank and a score."""
    try:
        int(f[3])
        float(f[4])
    except ValueError:
        return False
    return True


def expand_paths(items: list[Any]) -> list[Any]:
    """Each directory replaced by its run files and Parquet files (sorted; hidden files
    skipped; others, :func:`looks_like_run`, named in a
    :class:`~fasteval.errors.FastevalWarning`); the rest kept."""
    out: list[Any] = []
    for x in items:
        if isinstance(x, (str, os.PathLike)) and Path(x).is_dir():
            p = Path(x)
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            runs = [f for f in files if is_parquet(f) or looks_like_run(f)]
            kept = set(runs)
            skipped = [f.name for f in files if f not in kept]
            if skipped:
                shown = ", ".join(skipped[:10]) + (" ..." if len(skipped) > 10 else "")
                msg = (
                    f"{p}: skipped {len(skipped)} file(s) that do not look like runs (no line "
                    f"qid Q0 docno rank score tag near the top): {shown}"
                )
                warnings.warn(msg, FastevalWarning, stacklevel=3)
            if not runs:
                msg = f"{p}: the directory holds no run files"
                raise InputFormatError(msg)
            out.extend(runs)
        else:
            out.append(x)
    return out


def run_columns(items: list[Any], opts: EvalOptions = DEFAULTS) -> RunColumns:
    """Runs from any mix of run files, directories, Parquet archives, frames and tables
    (text files read as ``opts.lenient`` and ``opts.run_id_from`` say)."""
    if not items:
        msg = "no runs given"
        raise InputFormatError(msg)
    text_paths: list[Path] = []
    parts: list[RunColumns] = []
    expanded = expand_paths(items)
    for i, x in enumerate(expanded):
        if isinstance(x, (str, os.PathLike)):
            p = Path(x)
            if is_parquet(p):
                parts.append(runs_from_table(*to_arrow(p, "run")))
            else:
                text_paths.append(p)
        else:
            # a run without a run id column: "run", or run1, run2, ... among several inputs
            default = "run" if len(expanded) == 1 else f"run{i + 1}"
            parts.append(runs_from_table(*to_arrow(x, "run", default_run=default)))
    if text_paths:
        parts.insert(0, trec.parse_run_files(text_paths, opts))
    return concat_runs(parts)


def qrels_to_table(q: QrelsColumns) -> pa.Table:
    """Arrow table in the qrels schema."""
    return pa.table(
        [q.qid.to_arrow(), q.doc.to_arrow(), pa.array(q.rel, pa.int32())], schema=QRELS_SCHEMA
    )


def runs_to_table(r: RunColumns) -> pa.Table:
    """Arrow table in the run schema (run ids dictionary-encoded in memory)."""
    names = pa.array(r.run_names, pa.large_string())
    return pa.table(
        [
            names.take(pa.array(r.run)),
            r.qid.to_arrow(),
            r.doc.to_arrow(),
            r.rank,
            pa.array(r.score, pa.float64()),
        ],
        schema=RUN_SCHEMA,
    )


def load_qrels(source: Any, *, lenient: bool = False) -> pl.DataFrame:
    """Read qrels into a polars DataFrame ``query_id, doc_id, relevance``.

    Parameters
    ----------
    source
        A TREC qrels file (plain or .gz: ``qid iter docno rel``), a Parquet
        file, a polars DataFrame or an Arrow table.
    lenient
        Skip malformed lines (reported in a warning) instead of raising.
    """
    import polars as pl  # noqa: PLC0415 (the evaluation itself never loads it)

    return pl.from_arrow(qrels_to_table(qrels_columns(source, lenient=lenient)))  # type: ignore[return-value]


def load_runs(source: Any, *, lenient: bool = False, run_id_from: str = "tag") -> pl.DataFrame:
    """Read one or many runs into one polars DataFrame ``run_id, query_id, doc_id, rank, score``.

    Parameters
    ----------
    source
        Run files (plain or .gz), directories of them, Parquet archives,
        frames or tables, or a list of these.
    lenient
        Skip malformed lines (reported in a warning) instead of raising.
    run_id_from
        ``"tag"`` (the 6th column) or ``"filename"``.
    """
    many = isinstance(source, (list, tuple)) and not adapters.is_single_input(source)
    items = list(source) if many else [source]
    import polars as pl  # noqa: PLC0415 (the evaluation itself never loads it)

    cols = run_columns(items, EvalOptions(lenient=lenient, run_id_from=run_id_from))
    return pl.from_arrow(runs_to_table(cols))  # type: ignore[return-value]


def as_qrels(x: Any, *, columns: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Qrels from any recognised object as a polars frame ``query_id, doc_id, relevance``."""
    got = adapters.adapt(x, "qrels", columns=columns)
    return load_qrels(got[0] if got is not None else x)


def as_run(x: Any, *, columns: Mapping[str, str] | None = None, name: str = "run") -> pl.DataFrame:
    """A run (or runs) from any recognised object as ``run_id, query_id, doc_id, rank, score``.

    ``name`` is the run id when the input has no run id column.
    """
    got = adapters.adapt(x, "run", columns=columns, default_run=name)
    return load_runs(got[0] if got is not None else x)
