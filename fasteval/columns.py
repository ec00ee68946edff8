"""Column containers shared by the readers and the engine: a string column is a byte
buffer and ``[start, end)`` offsets, whether from text or Arrow (no Python strings)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from fasteval.kernels import strings as kstr
from fasteval.kernels.text import ViewStr


class Runs(NamedTuple):
    """``n`` rows in runs of equal strings: the run from row ``heads[k]`` (the column's) is
    ``buf[starts[k]:ends[k]]``."""

    starts: np.ndarray
    ends: np.ndarray
    n: int


@dataclass
class StrColumn:
    """Strings as slices ``buf[starts[i]:ends[i]]`` of one ``uint8`` buffer.

    An Arrow ``string_view`` column (polars' strings) is read in place: ``buf`` and the
    offsets are made on first use; reading chosen rows copies those rows only. A column
    given by its runs of equal strings (:class:`Runs`, a dictionary column's) makes its
    offsets per row only when they are asked for.
    """

    _buf: np.ndarray | None
    _starts: np.ndarray | None
    _ends: np.ndarray | None
    # a string_view column's buffers while ``buf`` is not made; a column's runs while
    # its offsets per row are not made
    _lazy: ViewStr | Runs | None = None
    # the first row of each run of equal values, when the reader knows them (the
    # tokenizer's marks, a dictionary column's indices)
    heads: np.ndarray | None = None

    def __post_init__(self) -> None:
        # one array type (C-contiguous, read-only) per kernel argument: one signature
        if self._buf is not None:
            self._buf.flags.writeable = False
        if self._lazy is None:
            self._set(self._starts, self._ends)
        elif isinstance(self._lazy, Runs):
            assert self._buf is not None and self.heads is not None
            starts, ends = _frozen(self._lazy.starts, self._lazy.ends)
            self._lazy = Runs(starts, ends, self._lazy.n)

    def _set(self, starts: Any, ends: Any) -> None:
        self._starts, self._ends = _frozen(starts, ends)

    @property
    def buf(self) -> np.ndarray:
        """The strings' bytes."""
        if self._buf is None:
            self._make()
        return self._buf  # type: ignore[return-value]

    @property
    def starts(self) -> np.ndarray:
        """Where each string starts in ``buf``."""
        if self._starts is None:
            self._make()
        return self._starts  # type: ignore[return-value]

    @property
    def ends(self) -> np.ndarray:
        """Where each string ends in ``buf`` (exclusive)."""
        if self._ends is None:
            self._make()
        return self._ends  # type: ignore[return-value]

    def in_place(self) -> ViewStr | None:
        """A ``string_view`` column's buffers while ``buf`` is not made, else ``None``."""
        return self._lazy if self._buf is None and isinstance(self._lazy, ViewStr) else None

    def _make(self) -> None:
        """A view column's buffer and offsets, or a column's offsets from its runs (two
        threads racing make equal arrays)."""
        lazy = self._lazy
        if isinstance(lazy, Runs):
            assert self.heads is not None
            self._set(*(spread(o, self.heads, lazy.n) for o in (lazy.starts, lazy.ends)))
            return
        assert lazy is not None  # the other columns are made when built
        raw = _raw(lazy)
        buf = np.concatenate([raw, lazy.data])
        buf.flags.writeable = False
        self._set(*kstr.view_offsets(raw, lazy.bases))
        self._buf = buf

    def _chosen(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The strings ``rows`` in a buffer of their own, and their offsets."""
        rows = np.ascontiguousarray(rows, np.int64)
        lazy = self._lazy
        if self._starts is None and isinstance(lazy, Runs):  # from the rows' runs
            assert self.heads is not None
            at = np.searchsorted(self.heads, rows, side="right") - 1
            data, offsets = kstr.gather(self.buf, lazy.starts, lazy.ends, at)
        elif self._buf is None and isinstance(lazy, ViewStr):  # these rows only
            data, offsets = kstr.view_gather(_raw(lazy), lazy.data, lazy.bases, rows)
        else:
            data, offsets = kstr.gather(self.buf, self.starts, self.ends, rows)
        return data, offsets

    def __len__(self) -> int:
        if self._starts is None and self._lazy is not None:
            lazy = self._lazy
            return lazy.n if isinstance(lazy, Runs) else int(lazy.views.shape[0])
        return int(self.starts.shape[0])

    @classmethod
    def from_arrow(cls, arr: pa.Array | pa.ChunkedArray) -> StrColumn:
        """View an Arrow string array (any string type) without copying where possible."""
        arr = one_chunk(arr)
        if pa.types.is_string_view(arr.type):
            return cls._from_views(arr)
        if not (pa.types.is_large_string(arr.type) or pa.types.is_string(arr.type)):
            arr = arr.cast(pa.large_string())  # (loads pyarrow.compute)
        width = np.int32 if pa.types.is_string(arr.type) else np.int64
        bufs = arr.buffers()
        n = len(arr)
        # a sliced array shares its parent's buffers: honour the slice offset
        offsets = np.frombuffer(bufs[1], dtype=width, count=arr.offset + n + 1)[arr.offset :]
        offsets = offsets.astype(np.int64, copy=False)
        data = (
            np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        )
        return cls(data, offsets[:-1], offsets[1:])

    @classmethod
    def _from_views(cls, arr: pa.Array) -> StrColumn:
        """A ``string_view`` array read in place (several data buffers joined now)."""
        bufs = arr.buffers()
        n = len(arr)
        raw = np.frombuffer(bufs[1], np.uint8, count=16 * (arr.offset + n))[16 * arr.offset :]
        if bufs[1].address % 8:  # read as words below (Arrow aligns its buffers)
            raw = raw.copy()
        data = [
            np.zeros(0, np.uint8) if b is None else np.frombuffer(b, np.uint8) for b in bufs[2:]
        ]
        bases = np.zeros(max(len(data), 1), np.int64)
        bases[1 : len(data)] = np.cumsum([d.shape[0] for d in data[:-1]])
        # the usual single data buffer read in place (none: every string inline)
        joined = data[0] if len(data) == 1 else np.concatenate(data or [np.zeros(0, np.uint8)])
        return cls(None, None, None, ViewStr(raw.view(np.uint64).reshape(-1, 2), joined, bases))

    def strings(self, rows: np.ndarray) -> list[str]:
        """The strings at ``rows``, checked as UTF-8 (a few decoded in Python, more by Arrow)."""
        if rows.shape[0] > FEW_HEADS:
            return list(self.take(rows).to_pylist())
        try:
            return [b.decode() for b in self.bytes_of(rows)]
        except UnicodeDecodeError:
            return list(self.take(rows).to_pylist())  # Arrow's own error, as before

    def bytes_of(self, rows: np.ndarray) -> list[bytes]:
        """The bytes of the strings at ``rows`` (a few)."""
        data, offsets = self._chosen(rows)
        mv = data.data
        return [mv[a:b].tobytes() for a, b in itertools.pairwise(offsets.tolist())]

    def take(self, rows: np.ndarray) -> pa.LargeStringArray:
        """The strings at ``rows`` as an Arrow array (UTF-8 validated)."""
        data, offsets = self._chosen(rows)
        arr = pa.LargeStringArray.from_buffers(len(rows), pa.py_buffer(offsets), pa.py_buffer(data))
        arr.validate(full=True)
        return arr

    def to_arrow(self) -> pa.LargeStringArray:
        """All strings as an Arrow array."""
        return self.take(np.arange(len(self), dtype=np.int64))

    def value(self, i: int) -> str:
        """One string, decoded for messages (never fails on bad bytes)."""
        return self.bytes_of(np.array([i], np.int64))[0].decode("utf-8", "replace")


def _frozen(*offsets: Any) -> tuple[np.ndarray, ...]:
    """Offsets as kernels take them: C-contiguous, read-only ``int64``."""
    out = tuple(np.ascontiguousarray(o, dtype=np.int64) for o in offsets)
    for a in out:
        a.flags.writeable = False
    return out


def _raw(views: ViewStr) -> np.ndarray:
    """The 16 bytes of view per string, as ``uint8`` (what ``kstr.view_offsets`` reads)."""
    return views.views.view(np.uint8).reshape(-1)


def one_chunk(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``arr`` as one Arrow array (a chunked array's chunks joined when there are several)."""
    if isinstance(arr, pa.ChunkedArray):
        return arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
    return arr


def numeric_numpy(arr: pa.Array | pa.ChunkedArray, null: float | int | None = None) -> np.ndarray:
    """An Arrow integer or float array as numpy, nulls replaced by ``null`` (from the
    buffers: pyarrow's ``to_numpy`` imports pandas)."""
    arr = one_chunk(arr)
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        return np.asarray(arr.to_numpy(zero_copy_only=False))
    dt = np.dtype(arr.type.to_pandas_dtype())
    n = len(arr)
    out = np.frombuffer(arr.buffers()[1], dtype=dt, count=arr.offset + n)[arr.offset :]
    if arr.null_count:
        out = np.where(null_mask(arr), null if null is not None else 0, out).astype(dt)
    return out


def null_mask(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``True`` where an Arrow array is null (from its validity bitmap)."""
    arr = one_chunk(arr)
    n = len(arr)
    if not arr.null_count:
        return np.zeros(n, np.bool_)
    if pa.types.is_null(arr.type):
        return np.ones(n, np.bool_)
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], np.uint8), bitorder="little")
    return ~bits[arr.offset : arr.offset + n].astype(np.bool_)


def numeric_array(
    values: np.ndarray, invalid: np.ndarray | None = None, dtype: type = np.int64
) -> pa.Array:
    """An Arrow ``int64``/``float64`` array of ``values``, null where ``invalid`` (from
    buffers: ``pa.array`` imports pandas)."""
    values = np.ascontiguousarray(values, dtype=dtype)
    n_null = 0 if invalid is None else int(np.count_nonzero(invalid))
    validity = None
    if invalid is not None and n_null:
        validity = pa.py_buffer(np.packbits(~invalid, bitorder="little"))
    kind = pa.int64() if values.dtype == np.int64 else pa.float64()
    return pa.Array.from_buffers(
        kind, values.shape[0], [validity, pa.py_buffer(values)], null_count=n_null
    )


FEW_HEADS = 1 << 16
"""Runs of equal values up to which :func:`dict_encode` numbers them in a dict (cheaper
than loading ``pyarrow.compute``)."""


def encode_few(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``int32`` codes of a few strings or bytes in order of first appearance, and the
    ``int64`` index of each code's first value."""
    index: dict[Any, int] = {}
    first: list[int] = []
    codes = []
    for i, v in enumerate(values):
        c = index.get(v)
        if c is None:
            c = index[v] = len(first)
            first.append(i)
        codes.append(c)
    return np.array(codes, np.int32), np.array(first, np.int64)


class Heads(NamedTuple):
    """A column's runs of equal values, numbered in order of first appearance."""

    rows: np.ndarray  # int64: the row where each run starts
    codes: np.ndarray  # int32: each run's code
    first: np.ndarray  # int64: the row where each code first occurs
    # each code's bytes, when the heads were numbered from their bytes (a few)
    first_bytes: list[bytes] | None = None

    def strings(self, col: StrColumn) -> list[str]:
        """Each code's string (``col``: the column numbered), checked as UTF-8."""
        if self.first_bytes is not None:
            try:
                return [b.decode() for b in self.first_bytes]
            except UnicodeDecodeError:
                pass  # Arrow's own error, as StrColumn.strings raises it
        return col.strings(self.first)


def encode_heads(col: StrColumn) -> Heads:
    """The runs of equal values of ``col`` and their codes (each run's first row read)."""
    if len(col) == 0:
        return Heads(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64))
    heads, lazy = col.heads, col.in_place()
    if heads is None and lazy is not None:
        heads = kstr.equal_view_runs(*lazy)
    elif heads is None:
        heads = kstr.equal_runs(col.buf, col.starts, col.ends)
    if heads.shape[0] <= FEW_HEADS:
        # the heads' bytes are gathered once: numbered here, decoded by Heads.strings
        raw = col.bytes_of(heads)
        head_codes, first_idx = encode_few(raw)
        first_bytes = [raw[i] for i in first_idx.tolist()]
        return Heads(heads, head_codes, heads[first_idx], first_bytes)
    import pyarrow.compute as pc  # noqa: PLC0415 (not needed by text inputs)

    d = pc.dictionary_encode(col.take(heads))
    head_codes = numeric_numpy(d.indices).astype(np.int32)
    # Arrow numbers values by first appearance: code k first occurs at head first_idx[k]
    _, first_idx = np.unique(head_codes, return_index=True)
    return Heads(heads, head_codes, heads[first_idx])


def dict_encode(col: StrColumn) -> tuple[np.ndarray, np.ndarray]:
    """Codes in order of first appearance, and the row where each code first occurs
    (:func:`encode_heads`' codes, one per row)."""
    h = encode_heads(col)
    return spread(h.codes, h.rows, len(col)), h.first


def spread(head_codes: np.ndarray, heads: np.ndarray, n: int) -> np.ndarray:
    """Each of ``n`` rows' code, from the codes of the runs starting at rows ``heads``."""
    if head_codes.shape[0] == 1:  # one run of equal values (one run's run ids)
        return np.full(n, head_codes[0], head_codes.dtype)
    return np.repeat(head_codes, np.diff(heads, append=n))


def offsets(counts: Any) -> np.ndarray:
    """``[0, counts[0], counts[0] + counts[1], ...]`` as ``int64``: where each part starts."""
    out = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def heads_of(values: np.ndarray) -> np.ndarray:
    """The first row of each run of equal consecutive ``values`` (row 0 the first)."""
    if values.shape[0] == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))


def first_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``codes`` (sorted) and the row where each first occurs."""
    if codes.shape[0] == 0:
        return codes[:0], np.zeros(0, np.int64)
    heads = heads_of(codes)
    values, first = np.unique(codes[heads], return_index=True)
    return values, heads[first]


def concat_str(cols: list[StrColumn]) -> StrColumn:
    """Concatenate string columns into one buffer (offsets shifted)."""
    if len(cols) == 1:
        return cols[0]
    bases = np.cumsum([0] + [c.buf.shape[0] for c in cols[:-1]])
    buf = np.concatenate([c.buf for c in cols]) if cols else np.zeros(0, np.uint8)
    starts = np.concatenate([c.starts + b for c, b in zip(cols, bases, strict=True)])
    ends = np.concatenate([c.ends + b for c, b in zip(cols, bases, strict=True)])
    return StrColumn(buf, starts, ends)


@dataclass
class Source:
    """Where rows came from, for messages: a file and a line per row (``None``: every
    row from ``names[0]``; row ``i`` at number ``i + 1``)."""

    names: list[str]
    file_of_row: np.ndarray | None  # int32 index into names (None: all 0)
    line_of_row: np.ndarray | None  # int64, 1-based line or table row (None: row + 1)
    is_table: list[bool] = field(default_factory=list)
    row_offset: int = 0  # rows before these (a piece of a table): row i is row_offset + i + 1

    def where(self, row: int) -> str:
        f = 0 if self.file_of_row is None else int(self.file_of_row[row])
        name = self.names[f]
        line = row + 1 + self.row_offset if self.line_of_row is None else int(self.line_of_row[row])
        if self.is_table and self.is_table[f]:
            return f"{name}, row {line}"
        return f"{name}:{line}"

    def files(self, n: int) -> np.ndarray:
        """The file index of each of the ``n`` rows."""
        return np.zeros(n, np.int32) if self.file_of_row is None else self.file_of_row

    def lines(self, n: int) -> np.ndarray:
        """The line (or table row) number of each of the ``n`` rows."""
        if self.line_of_row is None:
            return np.arange(1 + self.row_offset, n + 1 + self.row_offset, dtype=np.int64)
        return self.line_of_row

    def take(self, rows: np.ndarray) -> Source:
        """The source of the rows ``rows`` (in that order)."""
        n = int(rows.max()) + 1 if len(rows) else 0
        return Source(self.names, self.files(n)[rows], self.lines(n)[rows], self.is_table)


@dataclass
class QrelsColumns:
    """Parsed qrels: one row per judgment."""

    qid: StrColumn
    doc: StrColumn
    rel: np.ndarray  # int32
    source: Source

    def __len__(self) -> int:
        return int(self.rel.shape[0])


@dataclass
class RunColumns:
    """Parsed runs (one or many): one row per retrieved document."""

    run_names: list[str]
    run: np.ndarray  # int32 index into run_names per row
    qid: StrColumn
    doc: StrColumn
    score: np.ndarray  # float64
    rank: pa.Array  # int64, nullable (kept, never used for ordering)
    source: Source

    def __post_init__(self) -> None:
        # read-only float64 from text or Arrow: the kernels compile one signature
        self.score = np.ascontiguousarray(self.score, dtype=np.float64)
        self.score.flags.writeable = False

    def __len__(self) -> int:
        return int(self.score.shape[0])
