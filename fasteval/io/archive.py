"""fasteval's run archive: Parquet written batch by batch, sorted, read back in pieces.

``fasteval ingest`` writes one with :class:`ArchiveWriter`; ``evaluate`` /
``fasteval eval`` read it whole (:func:`read_archive`) or in pieces of
consecutive row groups (:func:`row_group_pieces`, :func:`read_row_groups`).

Layout (version 1)
------------------
* Columns: ``run_id`` and ``query_id`` dictionary-encoded (in Parquet and in
  Arrow), ``doc_id`` a ``large_string`` (read back without a cast), ``rank``
  int64 (``DELTA_BINARY_PACKED``: as small as int32, and no cast), ``score``
  float64 exactly as parsed (``BYTE_STREAM_SPLIT``: smaller). LZ4
  (:data:`COMPRESSION`). All but ``rank`` are required (non-null): no
  definition levels to decode. (Archives written before, with every column
  nullable and ``score`` plain, are read as well.)
* Rows are sorted by run (runs in input order, each run's rows together),
  then query id in byte order (trec_eval's order: the encoder's grouping
  pass finds the rows already grouped and skips its counting sort); within a
  (run, query) in trec_eval's ranking order (score descending, then document
  id descending by bytes: the ranking kernel finds each ranking in order and
  skips its sort). ``rank`` moves with its row, as given. A (run, query) that
  repeats a document keeps its input order, so ``on_duplicate="first"`` keeps
  the same row. (Archives written before keep every group's input order.)
* Each row group ends at a (run, query) boundary, so any run of consecutive
  row groups holds whole (run, query) groups: a reader may cut the archive
  at any row group.
* The footer's key-value metadata holds :data:`META_KEY` -> JSON
  ``{"format": "fasteval-runs", "version": 1, "sorted_by": [...],
  "row_groups": "whole (run_id, query_id) groups"}``.
* Every page carries a CRC32 and the footer a whole-file digest
  (:mod:`fasteval.io.stored`). The digest is checked on a thread of its own
  while the pieces are decoded (their pages then unchecked) and joined before
  the piece holding the last row group is returned and before any error of a
  read: a damaged archive is a :class:`~fasteval.errors.DamagedFileError`
  ("ingest the runs again"), never numbers. (Archives written before the
  digest are read with their pages checked.)

A Parquet file without this key (written by other tools, or by fasteval
before version 1) is read whole, as any table. An archive of a later layout
version (a newer fasteval's) is refused with one line.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.columns import RunColumns, dict_encode, heads_of, numeric_numpy
from fasteval.errors import FastevalError, InputFormatError
from fasteval.io import provenance, stored, trec
from fasteval.io.writers import ParquetOut, parquet_output
from fasteval.options import DEFAULTS, EvalOptions

META_KEY = b"fasteval"
"""Footer key-value metadata key of a fasteval archive."""

FORMAT = "fasteval-runs"
VERSION = 1
SORTED_BY = [
    "run_id (input order)",
    "query_id (byte order)",
    "score (descending), doc_id (descending bytes); input order where a doc_id repeats",
]

COMPRESSION = "lz4"
"""The archive's codec: an archive is for reading fast, and LZ4 decodes faster than
zstd for more bytes (figures: benchmarks/RESULTS.md, "Fresh install: what changed")."""

ROW_GROUP_ROWS = 262_144
"""Rows per row group (a group ends at the first (run, query) boundary past this)."""

_IDS = pa.dictionary(pa.int32(), pa.large_string())
ARCHIVE_SCHEMA = pa.schema(
    [
        pa.field("run_id", _IDS, nullable=False),
        pa.field("query_id", _IDS, nullable=False),
        pa.field("doc_id", pa.large_string(), nullable=False),
        ("rank", pa.int64()),
        pa.field("score", pa.float64(), nullable=False),
    ]
)

INGEST_AGAIN = "ingest the runs again (fasteval ingest)"
"""What to do about a damaged archive."""

EVAL_COLUMNS = ["run_id", "query_id", "doc_id", "score"]
"""The columns ranking measures read (``rank`` is for diversity measures only)."""


def archive_info(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The archive header of a fasteval Parquet archive, ``None`` for any other file."""
    try:
        meta = pq.read_metadata(path).metadata
    except (OSError, pa.ArrowException):
        return None
    info = provenance.footer_json(meta, META_KEY)
    if not info or info.get("format") != FORMAT:
        return None
    version = info.get("version")
    if isinstance(version, int) and version > VERSION:
        msg = (
            f"{path}: an archive of layout version {version}, written by a newer fasteval; "
            f"this one reads version {VERSION}\n"
            "  hint: upgrade fasteval (pip install -U fasteval), or ingest the runs again"
        )
        raise InputFormatError(msg)
    if version != VERSION:
        return None  # not a layout of ours: read whole, as a plain table
    return info


class Pieces(NamedTuple):
    """An archive's row groups in pieces, and its whole-file digest being checked."""

    groups: list[list[int]]
    verified: stored.DigestCheck | None  # None: no digest (see read_row_groups)
    before: list[int]  # the archive's rows before each piece (errors name the archive's rows)


def row_group_pieces(path: str | os.PathLike[str], budget: int) -> Pieces:
    """Consecutive row groups of an archive in pieces of about ``budget`` rows (at least one
    group each); the whole-file digest is checked once, from here on."""
    md = stored.read_metadata(path, advice=INGEST_AGAIN)
    verified = stored.start_check(path, md, advice=INGEST_AGAIN)
    pieces: list[list[int]] = []
    before: list[int] = []
    rows = total = 0
    for i in range(md.num_row_groups):
        n = md.row_group(i).num_rows
        if not pieces or rows + n > budget:
            pieces.append([])
            before.append(total)
            rows = 0
        pieces[-1].append(i)
        rows += n
        total += n
    return Pieces(pieces, verified, before)


def read_row_groups(
    path: str | os.PathLike[str],
    groups: list[int],
    columns: list[str] | None = None,
    *,
    verified: stored.DigestCheck | None = None,
) -> pa.Table:
    """Row groups of a Parquet file (``columns`` only), ids kept dictionary-encoded, decoded
    on the calling thread (Arrow's threads each keep a ``malloc`` arena holding what is freed
    there). ``verified``: the digest being checked (page checksums are then not computed),
    joined before an error and before the piece holding the last row group is returned."""
    with _joined_on_error(verified), stored.reading(path, advice=INGEST_AGAIN):
        f = _archive_file(path, verified)
        table = f.read_row_groups(groups, columns=columns, use_threads=False)
    if verified is not None and f.metadata.num_row_groups - 1 in groups:
        verified.join()
    return table


@contextmanager
def _joined_on_error(check: stored.DigestCheck | None) -> Iterator[None]:
    """Join ``check`` before an error leaves the block: a damaged file's own error wins."""
    try:
        yield
    except Exception:
        if check is not None:
            check.join()
        raise


def release_pool_memory() -> None:
    """Give back what Arrow's pool (mimalloc, not the system's) keeps of a piece that is
    gone: a study's input from an archive otherwise peaks above the same from gz files."""
    pool = pa.default_memory_pool()
    if pool.backend_name != "system":
        pool.release_unused()


def _archive_file(
    path: str | os.PathLike[str], verified: stored.DigestCheck | None
) -> pq.ParquetFile:
    return stored.parquet_file(
        path,
        advice=INGEST_AGAIN,
        read_dictionary=["run_id", "query_id"],
        check=False,
        page_checks=verified is None,
    )


def run_row_groups(path: str | os.PathLike[str], runs: Iterable[str]) -> Pieces:
    """The row groups of an archive that may hold any of ``runs``, as one piece (from
    the run id statistics of each row group: a group whose smallest and largest run id
    bracket none of them is skipped). The whole-file digest is checked from here on."""
    md = stored.read_metadata(path, advice=INGEST_AGAIN)
    verified = stored.start_check(path, md, advice=INGEST_AGAIN)
    wanted = sorted(set(runs))
    col = md.schema.to_arrow_schema().get_field_index("run_id")
    keep = []
    for i in range(md.num_row_groups):
        st = md.row_group(i).column(col).statistics
        if st is None or not st.has_min_max:
            keep.append(i)
            continue
        lo, hi = str(st.min), str(st.max)
        j = bisect.bisect_left(wanted, lo)
        if j < len(wanted) and wanted[j] <= hi:
            keep.append(i)
    return Pieces([keep], verified, [0])


def read_runs(
    path: str | os.PathLike[str], runs: Iterable[str], columns: list[str] | None = None
) -> pa.Table:
    """Only the rows of ``runs`` of an archive, from the row groups that may hold them
    (:func:`run_row_groups`), decoded in batches of :data:`RUN_BATCH_ROWS` rows, each cut to
    its rows of ``runs`` before the next is read; the digest joined before they are returned."""
    wanted = set(runs)
    groups, verified, _ = run_row_groups(path, wanted)
    cols = None if columns is None else list(dict.fromkeys(["run_id", *columns]))
    parts: list[pa.Table] = []
    with _joined_on_error(verified):
        for b in read_batches(path, groups[0], cols, verified=verified):
            parts += _rows_of(pa.Table.from_batches([b]), wanted)
        if not parts:  # no row group may hold them
            parts = [read_row_groups(path, [], cols, verified=verified)]
    if verified is not None:
        verified.join()
    table = pa.concat_tables(parts)
    return table if columns is None else table.select(columns)


RUN_BATCH_ROWS = 65_536
"""Rows decoded at a time by :func:`read_runs`."""


def read_batches(
    path: str | os.PathLike[str],
    groups: list[int],
    columns: list[str] | None,
    *,
    verified: stored.DigestCheck | None,
) -> Iterator[pa.RecordBatch]:
    """Row groups in batches of :data:`RUN_BATCH_ROWS` rows (pages checked as by
    :func:`read_row_groups`; the caller joins ``verified``)."""
    f = _archive_file(path, verified)
    with stored.reading(path, advice=INGEST_AGAIN):
        yield from f.iter_batches(
            RUN_BATCH_ROWS, row_groups=groups, columns=columns, use_threads=False
        )


def _rows_of(table: pa.Table, wanted: set[str]) -> list[pa.Table]:
    """The rows of ``table`` whose run id (dictionary-encoded) is one of ``wanted``, as
    slices (no Arrow array built: ``pa.array`` imports pandas)."""
    out = []
    at = 0
    for chunk in table.column("run_id").chunks:
        n = len(chunk)
        hit = np.array([v in wanted for v in chunk.dictionary.to_pylist()] + [False])
        keep = hit[numeric_numpy(chunk.indices, null=-1)]  # a null: the last, False
        edges = np.flatnonzero(np.diff(np.concatenate([[0], keep.astype(np.int8), [0]])))
        out += [table.slice(at + a, b - a) for a, b in zip(edges[::2], edges[1::2], strict=True)]
        at += n
    return out


def read_archive(path: str | os.PathLike[str], columns: list[str] | None = None) -> pa.Table:
    """A whole archive (``columns`` only), ids kept dictionary-encoded, verified first."""
    return stored.read_table(
        path, columns, advice=INGEST_AGAIN, read_dictionary=["run_id", "query_id"]
    )


def _sorted_order(cols: RunColumns, doc: pa.Array) -> np.ndarray | None:
    """Row order (run, query in byte order, then trec_eval's ranking order of ``doc`` and the
    scores, or input order in a group that repeats a document); ``None`` if already in it."""
    import pyarrow.compute as pc  # noqa: PLC0415 (ingest only: not on a command's start)

    q_codes, q_first = dict_encode(cols.qid)
    distinct = cols.qid.take(q_first)
    # byte order of the distinct query ids (a handful per run: Python sorts them)
    by_bytes = sorted(range(len(distinct)), key=lambda i: distinct[i].as_py().encode())
    q_rank = np.argsort(by_bytes)  # the inverse permutation: each id's place in byte order
    key = cols.run.astype(np.int64) * max(1, len(by_bytes)) + q_rank[q_codes]
    docs = doc.cast(pa.large_binary())  # (binary: compared by bytes)
    # a group that repeats a document keeps its input order (no score or id to sort by)
    codes = np.asarray(pc.dictionary_encode(docs).indices, np.int64)
    pair = np.sort(key * (width := int(codes.max(initial=0)) + 1) + codes)
    keep = np.isin(key, pair[1:][pair[1:] == pair[:-1]] // width)
    s = np.where(keep, 0.0, cols.score)
    t = pa.table({"g": key, "s": s, "d": pc.if_else(keep, b"", docs), "i": np.arange(len(key))})
    by = [("g", "ascending"), ("s", "descending"), ("d", "descending"), ("i", "ascending")]
    order = np.asarray(pc.sort_indices(t, sort_keys=by))
    return None if bool((order == np.arange(len(order))).all()) else order


def _group_ends(run: np.ndarray, qid: pa.Array) -> np.ndarray:
    """Row indices where a (run, query) group ends (exclusive ends, last = len)."""
    q = np.asarray(qid.indices)  # dictionary-encoded
    ends = np.flatnonzero((run[1:] != run[:-1]) | (q[1:] != q[:-1])) + 1
    return np.append(ends, len(run)).astype(np.int64)


def _row_group_cuts(ends: np.ndarray, target: int) -> list[tuple[int, int]]:
    """Cut rows into ``(start, stop)`` slices of about ``target`` rows at group ends."""
    cuts: list[tuple[int, int]] = []
    start = 0
    while start < ends[-1]:
        # the first group end at or past start + target (or the last end)
        j = int(np.searchsorted(ends, start + target, side="left"))
        stop = int(ends[min(j, len(ends) - 1)])
        cuts.append((start, stop))
        start = stop
    return cuts


class ArchiveWriter:
    """Write runs into a fasteval archive batch by batch, atomically.

    Use as a context manager: the archive is written to a temporary file
    beside ``path`` and renamed over it when the block ends without an
    exception; on any exception (Ctrl-C included) nothing is left behind.
    Each :meth:`write` takes the runs of one batch (whole runs); a run id
    given again by a later batch is an :class:`~fasteval.errors.InputFormatError`
    naming both places, as the readers raise it for two files.

    Parameters
    ----------
    path
        The archive to write (``.parquet``).
    opts
        Its ``run_id_from`` (how the inputs name their runs): only for the
        hint of the duplicate-run message.
    row_group_rows
        Rows per row group (a row group ends at a (run, query) boundary).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        opts: EvalOptions = DEFAULTS,
        *,
        row_group_rows: int = ROW_GROUP_ROWS,
    ) -> None:
        self.path = Path(path)
        self.opts = opts
        self.row_group_rows = row_group_rows
        self.runs = 0
        self.rows = 0
        self._origin: dict[str, str] = {}
        self._stack = ExitStack()
        self._writer: ParquetOut | None = None

    def __enter__(self) -> ArchiveWriter:
        meta = {"format": FORMAT, "version": VERSION, "sorted_by": SORTED_BY}
        meta["row_groups"] = "whole (run_id, query_id) groups"
        out = parquet_output(
            self.path,
            ARCHIVE_SCHEMA.with_metadata({META_KEY: json.dumps(meta).encode()}),
            compression=COMPRESSION,
            use_dictionary=["run_id", "query_id"],
            column_encoding={"rank": "DELTA_BINARY_PACKED", "score": "BYTE_STREAM_SPLIT"},
        )
        self._writer = self._stack.enter_context(out)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._writer = None
        self._stack.__exit__(exc_type, exc, tb)  # the footer, then the rename

    def _check_new_runs(self, cols: RunColumns) -> None:
        heads = heads_of(cols.run)
        first = heads[np.unique(cols.run[heads], return_index=True)[1]]  # each run's first row
        for k, name in enumerate(cols.run_names):
            if self.opts.run_id_from == "filename":
                here = cols.source.names[int(cols.source.files(len(cols))[first[k]])]
            else:
                here = cols.source.where(int(first[k]))
            if name in self._origin:
                msg = trec.duplicate_run_id(name, self._origin[name], here, self.opts)
                raise InputFormatError(msg)
            self._origin[name] = here

    def write(self, cols: RunColumns) -> None:
        """Append one batch of whole runs (sorted, cut into row groups at group ends)."""
        if self._writer is None:
            msg = "ArchiveWriter.write outside its with block"
            raise FastevalError(msg)
        if len(cols) == 0:
            return
        self._check_new_runs(cols)
        doc = cols.doc.to_arrow()  # (once: for the sort and the table)
        order = _sorted_order(cols, doc)
        rows = np.arange(len(cols), dtype=np.int64) if order is None else order
        run = cols.run[rows]
        names = pa.array(cols.run_names, pa.large_string())
        qid = cols.qid.take(rows).dictionary_encode()
        rank = cols.rank if order is None else cols.rank.take(pa.array(order))
        table = pa.table(
            [
                pa.DictionaryArray.from_arrays(pa.array(run, pa.int32()), names),
                qid,
                doc if order is None else doc.take(pa.array(order)),
                rank,
                pa.array(cols.score[rows], pa.float64()),
            ],
            schema=ARCHIVE_SCHEMA,
        )
        for start, stop in _row_group_cuts(_group_ends(run, qid), self.row_group_rows):
            self._writer.write(table.slice(start, stop - start), row_group_size=stop - start)
        self.runs += len(cols.run_names)
        self.rows += len(cols)
