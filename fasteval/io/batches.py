"""Batches of whole runs: how the inputs are cut, and the pieces of a large run file.

The units are the run files (directories expanded), Parquet archives and in-memory
tables, in the readers' order (text files first). Files naming the same run (by their
first line's tag, or their name) go into one batch; batches close when their estimated
rows (a text file's unpacked size at :data:`BYTES_PER_LINE`, a Parquet file's metadata,
a frame's length) reach the budget (:func:`plan_batches`). A text file or a fasteval
archive larger than the budget is a batch of its own, read in pieces of whole query
groups (:class:`PieceReader`) or of row groups; a lenient text file is not split (the
warning would name the pieces). :class:`BatchReader` reads any batch.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.columns import RunColumns
from fasteval.errors import FastevalError, ParameterError
from fasteval.io import formats, is_polars, stored
from fasteval.io.archive import (
    EVAL_COLUMNS,
    INGEST_AGAIN,
    Pieces,
    archive_info,
    read_row_groups,
    release_pool_memory,
    row_group_pieces,
)
from fasteval.io.files import PathLike, RawFiles, Workspace
from fasteval.io.tables import expand_paths, run_columns, runs_from_table
from fasteval.io.trec import parse_run_files, parse_run_piece, run_id_from_filename
from fasteval.options import DEFAULTS, EvalOptions

DEFAULT_BATCH_ROWS = 1_000_000
"""Rows (estimated) read and scored together by default."""

BATCH_ROWS_ENV = "FASTEVAL_BATCH_ROWS"
"""Environment variable overriding :data:`DEFAULT_BATCH_ROWS` (tests use tiny batches)."""

BYTES_PER_LINE = 48
"""Estimated bytes per run line (``401 Q0 FBIS3-10082 0 136.906 INQ603``) for the budget."""


def batch_rows_of(batch_rows: int | None) -> int:
    """The row budget: ``batch_rows``, else ``$FASTEVAL_BATCH_ROWS``, else the default."""
    if batch_rows is None:
        env = os.environ.get(BATCH_ROWS_ENV)
        if env is None:
            return DEFAULT_BATCH_ROWS
        try:
            batch_rows = int(env)
        except ValueError:
            msg = f"{BATCH_ROWS_ENV} must be a positive integer, got {env!r}"
            raise ParameterError(msg) from None
    if batch_rows <= 0:
        msg = f"batch_rows must be positive, got {batch_rows}"
        raise ParameterError(msg)
    return batch_rows


@dataclass
class Unit:
    """One input the readers read as a whole: a run file, an archive or a frame."""

    item: Any
    rows: int  # estimated
    run: str | None  # a text file's run id (None: unknown, a table)
    is_text: bool
    archive: bool = False  # a fasteval archive: may be read in pieces of row groups


@dataclass
class Batch:
    """Consecutive whole runs read together; ``units`` in input order."""

    units: list[Unit] = field(default_factory=list)
    rows: int = 0
    pieces: bool = False  # one input larger than the budget, read in pieces

    @property
    def archive_pieces(self) -> bool:
        """A fasteval archive, read in pieces of row groups."""
        return self.pieces and self.units[0].archive


def _units(items: list[Any], opts: EvalOptions) -> list[Unit]:
    """The input units in the readers' order: text files, then tables and archives."""
    text: list[Unit] = []
    tables: list[Unit] = []
    for x in expand_paths(items):
        if isinstance(x, (str, os.PathLike)):
            p = Path(x)
            if formats.is_parquet(p):
                try:
                    rows = pq.ParquetFile(p).metadata.num_rows
                except (OSError, pa.ArrowException):
                    rows = 0  # the reader raises its own message
                ours = rows > 0 and archive_info(p) is not None
                tables.append(Unit(x, rows, None, is_text=False, archive=ours))
                continue
            if not p.is_file():  # the reader raises its own message
                text.append(Unit(x, 0, None, is_text=True))
                continue
            size = formats.unpacked_size(p)
            by_name = opts.run_id_from == "filename"
            run = run_id_from_filename(p) if by_name else formats.first_tag(p)
            text.append(Unit(x, max(1, size // BYTES_PER_LINE), run, is_text=True))
        else:
            n = x.height if is_polars(x) else getattr(x, "num_rows", 0)
            tables.append(Unit(x, int(n), None, is_text=False))
    return text + tables


def plan_batches(
    items: list[Any], batch_rows: int, opts: EvalOptions = DEFAULTS, *, split: bool = True
) -> list[Batch]:
    """Cut the inputs into batches of whole runs of about ``batch_rows`` rows each.

    Runs follow their first appearance; text files of one run go into the batch of its
    first. A fasteval archive larger than the budget, and with ``split`` a text file too,
    is a batch of its own, read in pieces (``Batch.pieces``).
    """
    units = _units(items, opts)
    # runs in first-appearance order, each with its units (text files of one run together)
    runs: dict[Any, list[Unit]] = {}
    for i, u in enumerate(units):
        key = ("run", u.run) if u.is_text and u.run is not None else ("unit", i)
        runs.setdefault(key, []).append(u)
    batches: list[Batch] = []
    cur = Batch()
    for group in runs.values():
        big = [u for u in group if u.rows > batch_rows and (u.archive or (split and u.is_text))]
        whole = [u for u in group if u not in big]
        rows = sum(u.rows for u in whole)
        if cur.units and cur.rows + rows > batch_rows:
            batches.append(cur)
            cur = Batch()
        cur.units.extend(whole)
        cur.rows += rows
        for u in big:  # after the run's other files: the unbatched path reads text in order
            batches.append(Batch([u], u.rows, pieces=True))
    if cur.units:
        batches.append(cur)
    order = {id(u): i for i, u in enumerate(units)}
    for b in batches:  # a batch reads its files in input order
        b.units.sort(key=lambda u: order[id(u)])
    batches.sort(key=lambda b: order[id(b.units[0])])
    return batches


def _qid(line: bytes) -> bytes | None:
    """The first field of a content line (None for blank and ``#`` comment lines)."""
    f = line.split(None, 1)
    return None if not f or f[0].startswith(b"#") else f[0]


def _cut(data: bytes) -> int:
    """End of the last whole query group of ``data`` (whole lines): 0 if it holds one query."""
    end = len(data)
    last: bytes | None = None
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        q = _qid(data[start:end])
        if q is not None:
            if last is None:
                last = q
            elif q != last:
                return end
        end = start
    return 0


def _window_cut(buf: np.ndarray, filled: int) -> int:
    """:func:`_cut` over the whole lines of ``buf[:filled]``, looking back only as far as
    needed (0: no newline, or one query so far)."""
    window = 1 << 20
    while True:
        lo = max(0, filled - window)
        data = bytes(buf[lo:filled])
        # whole lines: a partial line could look like a query change
        start, end = (data.find(b"\n") + 1 if lo else 0), data.rfind(b"\n") + 1
        cut = _cut(data[start:end]) if end > start else 0
        if cut or lo == 0:
            return lo + start + cut if cut else 0
        window *= 4


class PieceReader:
    """A run file's bytes (unpacked) in pieces of whole query groups of about ``piece_bytes``,
    each next piece read on a thread of its own while one is in use, into two alternating
    buffers (``bufs``: the previous file's reader's), grown only when one query outgrows
    one. A query's lines must be consecutive (the caller checks)."""

    def __init__(self, path: Path, piece_bytes: int, bufs: list[np.ndarray] | None = None) -> None:
        self.path = path
        self.piece_bytes = max(1, piece_bytes)
        want = 2 * self.piece_bytes + 1
        self.bufs = [
            b if b.dtype == np.uint8 and b.shape[0] >= want else np.empty(want, np.uint8)
            for b in (bufs or [np.empty(0, np.uint8)] * 2)
        ]

    def _fill(self, f: Any, buf: np.ndarray, filled: int) -> tuple[np.ndarray, int, bool]:
        """Read up to ``piece_bytes`` more bytes after ``filled``; (buf, filled, end of file)."""
        want = filled + self.piece_bytes + 1
        if buf.shape[0] < want:  # one query's lines outgrew the buffer
            grown = np.empty(max(want, 2 * buf.shape[0]), np.uint8)
            grown[:filled] = buf[:filled]
            buf = grown
        view = buf.data
        stop = filled + self.piece_bytes
        while filled < stop:
            n = f.readinto(view[filled:stop])
            if not n:
                return buf, filled, True
            filled += n
        return buf, filled, False

    def _next(self, f: Any, buf: np.ndarray, filled: int) -> tuple[np.ndarray, int, int]:
        """Read on to the next cut: (buf, the piece's size, filled); at the end of the
        file filled is -1 (and the size 0 when nothing but blanks is left)."""
        while True:
            buf, filled, eof = self._fill(f, buf, filled)
            if eof:
                return buf, (filled if filled and (buf[:filled] > 32).any() else 0), -1
            cut = _window_cut(buf, filled)
            if cut:
                return buf, cut, filled

    def pieces(self) -> Generator[tuple[np.ndarray, int], None, None]:
        """The pieces, in order: ``buf[:size]`` holds one until the next is asked for."""
        with formats.open_bytes(self.path) as f, ThreadPoolExecutor(1) as pool:
            ahead = pool.submit(self._next, f, self.bufs[0], 0)
            k = 0
            while True:
                buf, size, filled = ahead.result()
                self.bufs[k] = buf
                if filled >= 0:
                    nxt = self.bufs[1 - k]  # as big as the other (grown for one query)
                    nxt = nxt if nxt.shape[0] >= buf.shape[0] else np.empty_like(buf)
                    rest = filled - size
                    nxt[:rest] = buf[size:filled]
                    ahead = pool.submit(self._next, f, nxt, rest)
                if size:
                    yield buf, size
                if filled < 0:
                    return
                k = 1 - k


class BatchReader:
    """The run columns of planned batches, whatever their kind: the one reader that
    evaluation and studies share. Errors name a piece's rows or lines as in the whole input.

    ``budget``: rows (estimated) per piece; ``opts``: as for
    :func:`fasteval.io.tables.run_columns`; ``workspace``: arrays to reuse for text (a
    batch's columns are then valid until the next is asked for).
    """

    def __init__(
        self,
        budget: int,
        opts: EvalOptions = DEFAULTS,
        *,
        workspace: Workspace | None = None,
    ) -> None:
        self.budget = budget
        self.opts = opts
        self.ws = workspace
        self.piece_bufs: list[np.ndarray] | None = None  # big files' bytes, two buffers for all

    def columns(self, b: Batch, raw: RawFiles | None = None) -> Iterator[RunColumns]:
        """Batch ``b``'s run columns, piece by piece where it is read in pieces (``raw``:
        whole text files' bytes, read ahead by the caller)."""
        if b.archive_pieces:  # pieces of row groups (about the budget), read one by one
            pieces = row_group_pieces(b.units[0].item, self.budget)
            for k in range(len(pieces.groups)):
                yield archive_piece(b.units[0].item, pieces, k)
                release_pool_memory()  # the piece is gone when the next is asked for
        elif b.pieces:
            yield from self._text_pieces(b.units[0])
        elif raw is not None:
            yield parse_run_files(raw.paths, self.opts, workspace=self.ws, raw=raw)
        else:
            items = [u.item for u in b.units]
            yield run_columns(items, self.opts)

    def _text_pieces(self, unit: Unit) -> Iterator[RunColumns]:
        """A text file larger than the budget, in pieces of whole query groups."""
        tag: tuple[str, int] | None = None  # the file's run tag and its line
        reader = PieceReader(Path(unit.item), self.budget * BYTES_PER_LINE // 2, self.piece_bufs)
        lines = 0  # the file's lines before the piece
        for buf, size in reader.pieces():
            cols, n_lines = parse_run_piece(
                buf,
                size,
                unit.item,
                lines_before=lines,
                opts=self.opts,
                workspace=self.ws,
                tag=tag,
            )
            lines += n_lines
            if tag is None:
                tag = (cols.run_names[0], int(cols.source.lines(len(cols))[0]))
            yield cols
            del cols, buf  # before the reader moves the next piece into this buffer
        self.piece_bufs = reader.bufs  # (grown, perhaps) for the next big file


def archive_piece(path: PathLike, pieces: Pieces, k: int) -> RunColumns:
    """Piece ``k`` of an archive as run columns, decoded and converted on the calling thread
    (the piece's own, when pieces are scored one a core); its rows are named as the archive's."""
    table = read_row_groups(path, pieces.groups[k], EVAL_COLUMNS, verified=pieces.verified)
    try:
        return runs_from_table(table, str(path), pieces.before[k])
    except FastevalError:  # a damaged archive's own error first (its digest)
        stored.check_digest(path, advice=INGEST_AGAIN)
        raise
