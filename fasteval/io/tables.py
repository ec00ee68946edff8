"""Accept qrels and runs as paths, directories, Parquet archives, polars or Arrow tables.

Fixed schemas (see SPEC section 1):

* qrels: ``query_id: str, doc_id: str, relevance: int32``
* runs: ``run_id: str, query_id: str, doc_id: str, rank: int64 (nullable), score: float64``
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from fasteval.columns import (
    QrelsColumns,
    RunColumns,
    Source,
    StrColumn,
    concat_str,
    dict_encode,
    numeric_numpy,
)
from fasteval.errors import FastevalWarning, InputFormatError, SchemaError
from fasteval.io import adapters, archive, gz, stored, trec

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

PARQUET_SUFFIXES = (".parquet", ".pq")


def _is_parquet(p: Path) -> bool:
    return p.suffix.lower() in PARQUET_SUFFIXES


def _to_arrow(x: Any, what: str, default_run: str = "run") -> tuple[pa.Table, str]:
    # pandas / dict-of-dicts / named-tuple records / ecosystem column names
    adapted = adapters.to_arrow(x, what, default_run=default_run)
    if adapted is not None:
        return adapted
    if isinstance(x, pl.DataFrame):
        return x.to_arrow(compat_level=pl.CompatLevel.oldest()), f"{what} DataFrame"
    if isinstance(x, pa.Table):
        return x, f"{what} table"
    if isinstance(x, (str, os.PathLike)):
        p = Path(x)
        if not p.exists():
            msg = f"no such file: {p}"
            raise InputFormatError(msg)
        if archive.archive_info(p) is not None:
            # fasteval's own archive: pyarrow reads it straight into the types the
            # readers use (ids dictionary-encoded, doc ids large_string): no cast
            try:
                return archive.read_archive(p), str(p)
            except (OSError, pa.ArrowException) as e:
                msg = f"{p}: not a readable Parquet file ({str(e).splitlines()[0]})"
                raise InputFormatError(msg) from None
        if stored.is_ours(p):
            # a table fasteval wrote (a fused run, a result table): its checksums and
            # digest are verified, which polars' reader does not do
            return stored.read_table(p), str(p)
        try:
            # polars reads Parquet faster than pyarrow.parquet here (0.4 vs 1.0 s for a
            # 5M-row archive in a fresh process) and hands over large_string columns
            df = pl.read_parquet(p)
        except (pl.exceptions.PolarsError, OSError) as e:
            msg = f"{p}: not a readable Parquet file ({str(e).splitlines()[0]})"
            raise InputFormatError(msg) from None
        return df.to_arrow(compat_level=pl.CompatLevel.oldest()), str(p)
    msg = (
        f"cannot read {what} from a {type(x).__name__}; "
        "give a path, a polars DataFrame or an Arrow table"
    )
    raise SchemaError(msg)


def _require(table: pa.Table, name: str, cols: dict[str, str]) -> None:
    missing = [c for c in cols if c not in table.column_names]
    if missing:
        msg = (
            f"{name}: missing column(s) {', '.join(missing)}; expected "
            + ", ".join(f"{c}: {t}" for c, t in cols.items())
            + f"; found {', '.join(table.column_names)}"
        )
        raise SchemaError(msg)


def _no_nulls(table: pa.Table, name: str, cols: list[str]) -> None:
    for c in cols:
        col = table.column(c)
        if col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            msg = f"{name}, row {row + 1}: column {c!r} is null"
            raise InputFormatError(msg)


def _binary_as_text(col: pa.Array | pa.ChunkedArray, name: str, c: str) -> pa.Array:
    """A binary id column as text: every value must be UTF-8 (else the row is named)."""
    try:
        return pc.cast(col, pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    # error path only: find the first value that is not UTF-8
    for i, v in enumerate(col.to_pylist()):
        if v is None:
            continue
        try:
            v.decode("utf-8")
        except UnicodeDecodeError as e:
            msg = (
                f"{name}, row {i + 1}: column {c!r} is not valid UTF-8 (byte {e.start} of "
                f"{v[:60]!r}); ids must be UTF-8 text"
            )
            raise InputFormatError(msg) from None
    msg = f"{name}: column {c!r} cannot be read as text"
    raise SchemaError(msg)


def _str_col(table: pa.Table, name: str, c: str) -> StrColumn:
    col = table.column(c)
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        col = _binary_as_text(col, name, c)
    elif pa.types.is_binary_view(col.type):
        col = _binary_as_text(pc.cast(col, pa.large_binary()), name, c)
    if not (
        pa.types.is_string(col.type)
        or pa.types.is_large_string(col.type)
        or pa.types.is_string_view(col.type)
        or pa.types.is_dictionary(col.type)
    ):
        if pa.types.is_integer(col.type):
            col = pc.cast(col, pa.large_string())
        else:
            msg = f"{name}: column {c!r} must hold strings, found {col.type}"
            raise SchemaError(msg)
    if pa.types.is_dictionary(col.type):
        return _dictionary_str_col(col)
    return StrColumn.from_arrow(col)


def _one_dictionary(col: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray | None:
    """A dictionary-encoded string column as one array over one dictionary of distinct
    strings (``None`` if its values are not strings or repeat: the caller decodes)."""
    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks == 0:
            return None
        col = col.unify_dictionaries().combine_chunks() if col.num_chunks > 1 else col.chunk(0)
    d = col.dictionary
    if not (pa.types.is_string(d.type) or pa.types.is_large_string(d.type)):
        return None
    if d.null_count or pc.count_distinct(d).as_py() != len(d):
        return None
    return col


def _dictionary_str_col(col: pa.Array | pa.ChunkedArray) -> StrColumn:
    """A dictionary-encoded string column as slices of its dictionary (nothing decoded).

    Each row's ``[start, end)`` points into the dictionary's bytes: a query id
    column of an archive costs two integer gathers, not a copy of every string.
    """
    arr = _one_dictionary(col)
    if arr is None:
        return StrColumn.from_arrow(pc.cast(col, pa.large_string()))
    words = StrColumn.from_arrow(arr.dictionary)
    idx = numeric_numpy(arr.indices, null=0)
    return StrColumn(words.buf, words.starts[idx], words.ends[idx])


def _run_codes(table: pa.Table, name: str) -> tuple[np.ndarray, list[str]]:
    """Run codes in order of first appearance and the run names (:func:`dict_encode`'s).

    A dictionary-encoded column (an archive's) is numbered from its indices:
    no string is compared or copied.
    """
    col = table.column("run_id")
    arr = _one_dictionary(col) if pa.types.is_dictionary(col.type) else None
    if arr is None:
        rid = _str_col(table, name, "run_id")
        codes, first = dict_encode(rid)
        return codes, rid.take(first).to_pylist()
    idx = numeric_numpy(arr.indices, null=0)
    if len(idx) == 0:
        return np.zeros(0, np.int32), []
    heads = np.flatnonzero(np.concatenate([[True], idx[1:] != idx[:-1]]))
    head_idx = idx[heads]
    _, first = np.unique(head_idx, return_index=True)
    seen = head_idx[np.sort(first)]  # dictionary entries in order of first appearance
    lut = np.full(len(arr.dictionary), -1, np.int32)
    lut[seen] = np.arange(len(seen), dtype=np.int32)
    return lut[idx], arr.dictionary.take(pa.array(seen)).to_pylist()


def _table_source(name: str) -> Source:
    """A table's rows: ``name, row i + 1`` (nothing stored per row)."""
    return Source([name], None, None, [True])


def qrels_from_table(table: pa.Table, name: str) -> QrelsColumns:
    """Qrels columns from an Arrow table with ``query_id, doc_id, relevance``."""
    _require(table, name, {"query_id": "str", "doc_id": "str", "relevance": "int"})
    _no_nulls(table, name, ["query_id", "doc_id", "relevance"])
    rel = table.column("relevance")
    if not pa.types.is_integer(rel.type):
        msg = f"{name}: column 'relevance' must be integer, found {rel.type}"
        raise SchemaError(msg)
    if table.num_rows == 0:
        msg = f"{name}: the qrels are empty"
        raise InputFormatError(msg)
    return QrelsColumns(
        _str_col(table, name, "query_id"),
        _str_col(table, name, "doc_id"),
        numeric_numpy(rel).astype(np.int32),
        _table_source(name),
    )


def runs_from_table(table: pa.Table, name: str) -> RunColumns:
    """Run columns from an Arrow table with ``run_id, query_id, doc_id, score`` (+ ``rank``)."""
    _require(table, name, {"run_id": "str", "query_id": "str", "doc_id": "str", "score": "float"})
    _no_nulls(table, name, ["run_id", "query_id", "doc_id", "score"])
    if table.num_rows == 0:
        msg = f"{name}: the run table is empty"
        raise InputFormatError(msg)
    sc = table.column("score")
    if not (pa.types.is_floating(sc.type) or pa.types.is_integer(sc.type)):
        msg = f"{name}: column 'score' must be numeric, found {sc.type}"
        raise SchemaError(msg)
    score = numeric_numpy(pc.cast(sc, pa.float64())).astype(np.float64, copy=False)
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        msg = f"{name}, row {int(bad[0]) + 1}: score is not a finite number: {score[bad[0]]}"
        raise InputFormatError(msg)
    codes, names = _run_codes(table, name)
    if "rank" in table.column_names and pa.types.is_integer(table.column("rank").type):
        rank = pc.cast(table.column("rank"), pa.int64()).combine_chunks()
    else:
        rank = pa.nulls(table.num_rows, pa.int64())
    return RunColumns(
        run_names=names,
        run=codes,
        qid=_str_col(table, name, "query_id"),
        doc=_str_col(table, name, "doc_id"),
        score=score,
        rank=rank,
        source=_table_source(name),
    )


def qrels_columns(x: Any, *, lenient: bool = False) -> QrelsColumns:
    """Qrels from a text/.gz/Parquet path, a polars DataFrame or an Arrow table."""
    if isinstance(x, (str, os.PathLike)) and not _is_parquet(Path(x)):
        return trec.parse_qrels_files([x], lenient=lenient)
    table, name = _to_arrow(x, "qrels")
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


def _head(p: Path, size: int = 16384) -> bytes | None:
    """The first ``size`` bytes of a file, decompressed if gzip (``None`` if unreadable)."""
    try:
        with open(p, "rb") as fh:
            raw = fh.read(size)
        if raw[:2] == b"\x1f\x8b":
            with gz.open_gzip(p) as fh:
                raw = fh.read(size)
    except gz.ERRORS:
        return None
    return raw


def looks_like_run(p: Path) -> bool:
    """Whether a file in a folder of runs is a run: one of its first ten content lines reads
    ``qid Q0 docno rank score tag`` (an integer rank, a numeric score). A file that cannot
    be judged from its head (unreadable, a very long first line) counts as a run: the reader
    then names its problem."""
    head = _head(p)
    if head is None:
        return True
    lines = head.removeprefix(trec.BOM).split(b"\n")
    if len(head) == 16384:
        lines = lines[:-1]  # the last line may be cut short
        if not lines:
            return True
    seen = 0
    for line in lines:
        f = line.split()
        if not f or f[0].startswith(b"#"):
            continue
        seen += 1
        if len(f) >= trec.RUN_FIELDS:
            try:
                int(f[3])
                float(f[4])
            except ValueError:
                pass
            else:
                return True
        if seen == 10:
            break
    return False


def expand_paths(items: list[Any]) -> list[Any]:
    """Replace each directory by its run files (sorted; hidden files skipped); keep the rest.

    Files in a directory that are not runs (a README, notes, an empty file: see
    :func:`looks_like_run`) are skipped with a :class:`~fasteval.io.trec.FastevalWarning`
    naming them. Parquet files in a directory are kept (read as run archives).
    """
    out: list[Any] = []
    for x in items:
        if isinstance(x, (str, os.PathLike)) and Path(x).is_dir():
            p = Path(x)
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            runs = [f for f in files if _is_parquet(f) or looks_like_run(f)]
            skipped = [f.name for f in files if f not in runs]
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


def run_columns(items: list[Any], *, lenient: bool = False, run_id_from: str = "tag") -> RunColumns:
    """Runs from any mix of run files, directories, Parquet archives, frames and tables."""
    if not items:
        msg = "no runs given"
        raise InputFormatError(msg)
    text_paths: list[Path] = []
    parts: list[RunColumns] = []
    expanded = expand_paths(items)
    for i, x in enumerate(expanded):
        if isinstance(x, (str, os.PathLike)):
            p = Path(x)
            if _is_parquet(p):
                parts.append(runs_from_table(*_to_arrow(p, "run")))
            else:
                text_paths.append(p)
        else:
            # a run without a run id column: "run", or run1, run2, ... among several inputs
            default = "run" if len(expanded) == 1 else f"run{i + 1}"
            parts.append(runs_from_table(*_to_arrow(x, "run", default)))
    if text_paths:
        parts.insert(0, trec.parse_run_files(text_paths, lenient=lenient, run_id_from=run_id_from))
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
    items = (
        [source]
        if adapters.is_single_input(source) or not isinstance(source, (list, tuple))
        else source
    )
    cols = run_columns(list(items), lenient=lenient, run_id_from=run_id_from)
    return pl.from_arrow(runs_to_table(cols))  # type: ignore[return-value]


def as_qrels(x: Any, *, columns: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Qrels from any recognised object as a polars frame ``query_id, doc_id, relevance``."""
    got = adapters.to_arrow(x, "qrels", columns=columns)
    return load_qrels(got[0] if got is not None else x)


def as_run(x: Any, *, columns: Mapping[str, str] | None = None, name: str = "run") -> pl.DataFrame:
    """A run (or runs) from any recognised object as ``run_id, query_id, doc_id, rank, score``.

    ``name`` is the run id when the input has no run id column.
    """
    got = adapters.to_arrow(x, "run", columns=columns, default_run=name)
    return load_runs(got[0] if got is not None else x)
