"""Tables checked on their way in: one conversion to Arrow, then the column checks.

Every table reader (qrels, runs, diversity qrels) takes its input through
:func:`to_arrow`, checks it (:func:`require_columns`, :func:`no_nulls`,
:func:`judgments`) and reads its id columns with :func:`str_column`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from fasteval.columns import FEW_HEADS, Runs, Source, StrColumn, heads_of, numeric_numpy
from fasteval.errors import InputFormatError, SchemaError
from fasteval.io import adapters, archive, is_polars, stored


def to_arrow(
    x: Any,
    what: str,
    *,
    columns: Mapping[str, str] | None = None,
    default_run: str = "run",
) -> tuple[pa.Table, str]:
    """Any table-like input as an Arrow table, and its name for messages (the path, or
    e.g. ``"run DataFrame"``): a Parquet file's path, a polars or Arrow table, or an object
    of the ecosystem (:func:`fasteval.io.adapters.adapt` takes ``columns`` and
    ``default_run``); ``what`` names the input (``"qrels"``, ``"run"``, ...)."""
    adapted = adapters.adapt(x, what, columns=columns, default_run=default_run)
    if adapted is not None:
        return adapted
    if is_polars(x):
        import polars as pl  # noqa: PLC0415 (only for a polars input)

        # a run's ids are read in place from polars' string views (a run is read on every
        # call; other tables once), through the Arrow C stream where both libraries have it
        # (less read than to_arrow; no pandas import)
        from_stream = getattr(pa.RecordBatchReader, "from_stream", None)
        if what == "run" and from_stream is not None and hasattr(x, "__arrow_c_stream__"):
            return from_stream(x).read_all(), f"{what} DataFrame"
        compat = pl.CompatLevel.newest() if what == "run" else pl.CompatLevel.oldest()
        return x.to_arrow(compat_level=compat), f"{what} DataFrame"
    if isinstance(x, pa.Table):
        return x, f"{what} table"
    if isinstance(x, (str, os.PathLike)):
        return _parquet_to_arrow(Path(x)), str(Path(x))
    msg = (
        f"cannot read {what} from a {type(x).__name__}; "
        "give a path, a polars DataFrame or an Arrow table"
    )
    raise SchemaError(msg)


def _parquet_to_arrow(p: Path) -> pa.Table:
    """A Parquet file as an Arrow table: a run archive, a table fasteval stored, any other."""
    if archive.archive_info(p) is not None:
        # fasteval's own archive: pyarrow reads it straight into the types the
        # readers use (ids dictionary-encoded, doc ids large_string): no cast
        return archive.read_archive(p)
    if stored.digest_entry(stored.read_metadata(p)) is not None:  # (one line if none, or no file)
        # a table fasteval wrote (a fused run, a result table): its checksums and
        # digest are verified, which polars' reader does not do
        return stored.read_table(p)
    import polars as pl  # noqa: PLC0415 (not needed by text inputs)

    try:
        # polars reads Parquet faster than pyarrow.parquet here and hands over
        # large_string columns
        df = pl.read_parquet(p)
    except (pl.exceptions.PolarsError, OSError) as e:
        msg = f"{p}: not a readable Parquet file ({str(e).splitlines()[0]})"
        raise InputFormatError(msg) from None
    return df.to_arrow(compat_level=pl.CompatLevel.oldest())


def require_columns(table: pa.Table, name: str, cols: dict[str, str]) -> None:
    """Every column of ``cols`` (name -> its type, for the message) must be in ``table``."""
    names = table.schema.names  # (``column_names`` builds its list at every use)
    missing = [c for c in cols if c not in names]
    if missing:
        msg = (
            f"{name}: missing column(s) {', '.join(missing)}; expected "
            + ", ".join(f"{c}: {t}" for c, t in cols.items())
            + f"; found {', '.join(names)}"
        )
        raise SchemaError(msg)


def judgments(table: pa.Table, name: str, cols: dict[str, str], what: str) -> np.ndarray:
    """The checks of a table of judgments (``cols`` as :func:`require_columns` takes them,
    ``relevance`` among them; ``what``: the input, for messages): the grades, ``int32``."""
    require_columns(table, name, cols)
    no_nulls(table, name, list(cols))
    rel = table.column("relevance")
    if not pa.types.is_integer(rel.type):
        msg = f"{name}: column 'relevance' must be integer, found {rel.type}"
        raise SchemaError(msg)
    if table.num_rows == 0:
        msg = f"{name}: the {what} are empty"
        raise InputFormatError(msg)
    return numeric_numpy(rel).astype(np.int32)


def no_nulls(table: pa.Table, name: str, cols: list[str], row_offset: int = 0) -> None:
    """Columns ``cols`` of ``table`` must hold no null (else the first one's row is named,
    counting ``row_offset`` rows before the table: a piece of an archive)."""
    for c in cols:
        col = table.column(c)
        if col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            msg = f"{table_source(name, row_offset).where(row)}: column {c!r} is null"
            raise InputFormatError(msg)


def _binary_as_text(col: pa.Array | pa.ChunkedArray, name: str, c: str, offset: int) -> pa.Array:
    """A binary id column as text: every value must be UTF-8 (else the row is named)."""
    try:
        return col.cast(pa.large_string())
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
                f"{table_source(name, offset).where(i)}: column {c!r} is not valid UTF-8 "
                f"(byte {e.start} of {v[:60]!r}); ids must be UTF-8 text"
            )
            raise InputFormatError(msg) from None
    msg = f"{name}: column {c!r} cannot be read as text"
    raise SchemaError(msg)


def str_column(table: pa.Table, name: str, c: str, row_offset: int = 0) -> StrColumn:
    """Column ``c`` of ``table`` as text (an id column): strings as they are, dictionary
    strings as slices of their dictionary, binary as UTF-8 text (else the row is named, as
    :func:`no_nulls` names it), integers as their decimal text; other types are refused."""
    col = table.column(c)
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        col = _binary_as_text(col, name, c, row_offset)
    elif pa.types.is_binary_view(col.type):
        col = _binary_as_text(col.cast(pa.large_binary()), name, c, row_offset)
    t = col.type
    if pa.types.is_dictionary(t):
        return _dictionary_str_col(col)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return StrColumn.from_arrow(col)
    if pa.types.is_integer(t):
        return _integer_str_col(col)
    msg = f"{name}: column {c!r} must hold strings, found {t}"
    raise SchemaError(msg)


def _integer_str_col(col: pa.Array | pa.ChunkedArray) -> StrColumn:
    """An integer id column as its decimal text (with few runs of equal values, only their
    first values are turned into text and every row points at its run's)."""
    n = len(col)
    if n and not col.null_count:
        values = numeric_numpy(col)
        heads = heads_of(values)
        if heads.shape[0] * 4 <= n:
            firsts = pa.array(values[heads].tolist(), col.type)  # (from numpy: imports pandas)
            words = StrColumn.from_arrow(firsts.cast(pa.large_string()))
            return StrColumn(words.buf, None, None, Runs(words.starts, words.ends, n), heads)
    return StrColumn.from_arrow(col.cast(pa.large_string()))


def _plain(col: Any) -> Any:
    """A dictionary column (array or chunked) with ``string_view`` values as ``large_string``
    ones: polars' categoricals come so through the Arrow C stream, and Arrow cannot gather
    view values (casting such a column to strings failed)."""
    if not pa.types.is_string_view(col.type.value_type):
        return col
    if isinstance(col, pa.ChunkedArray):
        plain = pa.dictionary(col.type.index_type, pa.large_string())
        return pa.chunked_array([_plain(c) for c in col.chunks], plain)
    return pa.DictionaryArray.from_arrays(col.indices, col.dictionary.cast(pa.large_string()))


def one_dictionary(col: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray | None:
    """A dictionary-encoded column (an archive's run and query ids) as one array over one
    dictionary of distinct strings (``None`` if its values are not strings or repeat)."""
    col = _plain(col)
    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks == 0:
            return None
        col = col.unify_dictionaries().combine_chunks() if col.num_chunks > 1 else col.chunk(0)
    d = col.dictionary
    if d.null_count or not (pa.types.is_string(d.type) or pa.types.is_large_string(d.type)):
        return None
    if len(d) <= FEW_HEADS:  # a few ids (runs, queries): no pyarrow.compute loaded
        distinct = len(set(d.to_pylist()))
    else:
        import pyarrow.compute as pc  # noqa: PLC0415 (not needed by text inputs)

        distinct = pc.count_distinct(d).as_py()
    return col if distinct == len(d) else None


def _dictionary_str_col(col: pa.Array | pa.ChunkedArray) -> StrColumn:
    """A dictionary-encoded string column as slices of its dictionary (nothing decoded)."""
    arr = one_dictionary(col)
    if arr is None:
        return StrColumn.from_arrow(_plain(col).cast(pa.large_string()))
    words = StrColumn.from_arrow(arr.dictionary)
    idx = numeric_numpy(arr.indices, null=0)
    # by runs of equal entries (an archive's ids are sorted: a few long runs); distinct
    # entries: runs of equal indices are the runs of equal strings
    heads = heads_of(idx)
    at = idx[heads]
    runs = Runs(words.starts[at], words.ends[at], len(idx))
    return StrColumn(words.buf, None, None, runs, heads=heads)


def table_source(name: str, row_offset: int = 0) -> Source:
    """Where a table's rows come from: ``name, row i + 1`` (after ``row_offset`` rows)."""
    return Source([name], None, None, [True], row_offset)
