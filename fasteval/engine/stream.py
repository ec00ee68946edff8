"""Streaming ranking evaluation: runs read, judged and scored in batches, bounded memory.

:func:`evaluate_ranking_stream` gives exactly the table of
:func:`fasteval.engine.ranking.evaluate_ranking` while holding only one batch of
run rows in memory at a time, plus the qrels (read once) and the small
per-(run, query) result arrays; runs are aggregated at the end.

How the inputs are cut
----------------------
The input units are the run files (directories expanded, as the readers do),
Parquet archives and in-memory frames/tables, in the order the readers
concatenate them (text files first, then the tables). The first line of each
text file names its run (its tag, or its file name under
``run_id_from="filename"``); files naming the same run go into one batch.
Batches are consecutive runs in first-appearance order, closed when their
estimated size reaches ``batch_rows``. A text file larger than the budget is
a batch of its own, read in pieces that end where the query id changes
(:class:`PieceReader`, one reused buffer); each piece is parsed in memory with
the whole file's name and line numbers (:func:`fasteval.io.trec.parse_run_piece`).
A fasteval archive (:mod:`fasteval.io.archive`: rows sorted by run and query, every row group
ending at a (run, query) boundary) larger than the budget is a batch of its
own, read in pieces of consecutive row groups (only the columns the ranking
measures use); any other Parquet file or a frame is one unit. Under
``lenient`` text files are not split (the reader's warning would name the
pieces).

The size of a text file is estimated from its uncompressed size (the gzip
trailer for ``.gz``) at :data:`BYTES_PER_LINE`; a Parquet archive's from its
metadata; a frame's is its length.

Why the result is identical
---------------------------
A (run, query) group's values depend only on its own rows (in input order)
and the qrels. Evaluated groups are always qrels queries, so a batch's query
indices map onto the sorted qrels query ids, the same in every batch; runs
are numbered by first appearance over the batches, which follow the input
order; the groups are then sorted by (run, query), the unbatched order, and
each run's aggregate is summed over them in that order
(:func:`fasteval.engine.ranking.aggregate`). Under ``complete`` every batch
holding a run adds empty groups for the qrels queries it lacks: one is kept.
A group with rows in two batches (a query whose lines are not consecutive in
a split file, or shared by two files of one run in different batches), or an
error inside a piece of a split file or archive, cannot be reproduced batch
by batch: the whole evaluation is then redone unbatched, so the answer (or the error
message, naming the file and line) is today's by construction, at today's
memory. Errors met in whole batches are raised as they are; a count in such
a message (repeated rows, runs without a qrels query) covers the batch only.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.columns import RunColumns
from fasteval.engine.encode import Encoded, PreparedQrels, encode
from fasteval.engine.inputs import RunsLike, as_list
from fasteval.engine.options import EvalOptions
from fasteval.engine.ranking import aggregate, compute
from fasteval.engine.table import Evaluation, to_frame
from fasteval.errors import DataMismatchError, FastevalError, InputFormatError, ParameterError
from fasteval.io import gz
from fasteval.io.archive import (
    EVAL_COLUMNS,
    archive_info,
    read_archive,
    read_row_groups,
    row_group_pieces,
)
from fasteval.io.tables import (
    PARQUET_SUFFIXES,
    expand_paths,
    run_columns,
    runs_from_table,
)
from fasteval.io.trec import (
    RawFiles,
    Workspace,
    count_newlines,
    duplicate_run_id,
    parse_run_files,
    parse_run_piece,
    read_files,
    run_id_from_filename,
)
from fasteval.measures.parser import MeasureSet
from fasteval.parallel import gc_paused

DEFAULT_BATCH_ROWS = 1_000_000
"""Rows (estimated) read and scored together by default."""

BATCH_ROWS_ENV = "FASTEVAL_BATCH_ROWS"
"""Environment variable overriding :data:`DEFAULT_BATCH_ROWS` (tests use tiny batches)."""

BYTES_PER_LINE = 48
"""Estimated bytes per run line (``401 Q0 FBIS3-10082 0 136.906 INQ603``) for the budget."""

Progress = Callable[[int, int], None]
"""Called after each batch with (input units done, input units in all)."""


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
    pieces: bool = False  # one text file larger than the budget, read in pieces


def _gzip_size(p: Path) -> int:
    """Uncompressed size of a gzip file from its trailer (mod 2**32), else its size."""
    size = p.stat().st_size
    try:
        with p.open("rb") as f:
            if f.read(2) != b"\x1f\x8b" or size < 18:
                return size
            f.seek(-4, os.SEEK_END)
            isize = int(struct.unpack("<I", f.read(4))[0])
    except OSError:
        return size
    # a file over 4 GiB uncompressed wraps around; never estimate below the compressed size
    return max(isize, size)


def _first_tag(p: Path) -> str | None:
    """The 6th field of the first non-blank line (None if it cannot be read)."""
    try:
        with gz.open_gzip(p) if p.suffix == ".gz" else open(p, "rb") as f:
            for line in f:
                fields = line.split()
                if fields:
                    return fields[5].decode() if len(fields) >= 6 else None
    except (OSError, EOFError, UnicodeDecodeError):
        return None
    return None


def _units(items: list[Any], run_id_from: str) -> list[Unit]:
    """The input units in the readers' order: text files, then tables and archives."""
    text: list[Unit] = []
    tables: list[Unit] = []
    for x in expand_paths(items):
        if isinstance(x, (str, os.PathLike)):
            p = Path(x)
            if p.suffix.lower() in PARQUET_SUFFIXES:
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
            size = _gzip_size(p) if p.suffix == ".gz" else p.stat().st_size
            run = run_id_from_filename(p) if run_id_from == "filename" else _first_tag(p)
            text.append(Unit(x, max(1, size // BYTES_PER_LINE), run, is_text=True))
        else:
            n = x.height if isinstance(x, pl.DataFrame) else getattr(x, "num_rows", 0)
            tables.append(Unit(x, int(n), None, is_text=False))
    return text + tables


def plan_batches(
    items: list[Any], batch_rows: int, run_id_from: str = "tag", *, split: bool = True
) -> list[Batch]:
    """Cut the inputs into batches of whole runs of about ``batch_rows`` rows each.

    Text files naming the same run (by their first line) go into the batch
    of that run's first file; runs follow their first appearance. With
    ``split``, a text file estimated larger than the budget is a batch of its
    own, read in pieces (``Batch.pieces``); so is a fasteval archive larger
    than the budget (pieces of row groups), whatever ``split``.
    """
    units = _units(items, run_id_from)
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


def _run_in_two_files(batches: list[Batch]) -> bool:
    """Whether two text files name the same run (by their first line)."""
    seen: dict[str, Any] = {}
    for b in batches:
        for u in b.units:
            if u.is_text and u.run is not None and seen.setdefault(u.run, u.item) != u.item:
                return True
    return False


def _qid(line: bytes) -> bytes | None:
    """The first field of a content line (None for blank and ``#`` comment lines)."""
    f = line.split(None, 1)
    return None if not f or f[0].startswith(b"#") else f[0]


def _cut(data: bytes) -> int:
    """End of the last whole query group of ``data`` (whole lines): 0 if it holds one query.

    The lines after the cut all belong to the query of the last content line.
    """
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


def _last_newline(buf: np.ndarray, filled: int) -> int:
    """The offset just after the last newline of ``buf[:filled]`` (0 if there is none)."""
    step = 1 << 16
    hi = filled
    while hi > 0:
        lo = max(0, hi - step)
        hits = np.flatnonzero(buf[lo:hi] == 10)
        if hits.size:
            return lo + int(hits[-1]) + 1
        hi = lo
        step *= 4
    return 0


def _window_cut(buf: np.ndarray, nl: int) -> int:
    """:func:`_cut` over ``buf[:nl]`` (whole lines), looking back only as far as needed."""
    window = 1 << 20
    while True:
        lo = max(0, nl - window)
        if lo > 0:  # start at a line boundary: a partial line could look like a query change
            first_nl = int(np.argmax(buf[lo:nl] == 10))
            lo += first_nl + 1
        cut = _cut(bytes(buf[lo:nl]))
        if cut or lo == 0:
            return lo + cut if cut else 0
        window *= 4


class PieceReader:
    """A run file's bytes (gzip decompressed) in pieces of whole query groups, in one buffer.

    :meth:`pieces` yields ``(size, lines before it)``: ``buf[:size]`` holds the
    piece (whole lines) until the next piece is asked for. A piece is cut at
    the last query change within about ``piece_bytes`` bytes, so a query's
    lines must be consecutive for the pieces to keep every (run, query) group
    whole (the caller checks). The buffer is reused from piece to piece (no
    temporary files, no per-piece allocation); it grows only when one
    query's lines exceed it.
    """

    def __init__(self, path: Path, piece_bytes: int) -> None:
        self.path = path
        self.piece_bytes = max(1, piece_bytes)
        self.buf = np.empty(2 * self.piece_bytes + 1, np.uint8)

    def _fill(self, f: Any, filled: int) -> tuple[int, bool]:
        """Read up to ``piece_bytes`` more bytes after ``filled``; (filled, end of file)."""
        want = filled + self.piece_bytes + 1
        if self.buf.shape[0] < want:  # one query's lines outgrew the buffer
            grown = np.empty(max(want, 2 * self.buf.shape[0]), np.uint8)
            grown[:filled] = self.buf[:filled]
            self.buf = grown
        view = self.buf.data
        stop = filled + self.piece_bytes
        while filled < stop:
            n = f.readinto(view[filled:stop])
            if not n:
                return filled, True
            filled += n
        return filled, False

    def pieces(self) -> Iterator[tuple[int, int]]:
        filled = 0
        lines = 0
        with gz.open_gzip(self.path) if _is_gzip(self.path) else open(self.path, "rb") as f:
            while True:
                filled, eof = self._fill(f, filled)
                if eof:
                    if filled and (self.buf[:filled] > 32).any():
                        yield filled, lines
                    return
                nl = _last_newline(self.buf, filled)
                if nl == 0:
                    continue  # no newline yet: one line longer than the piece
                cut = _window_cut(self.buf, nl)
                if cut == 0:
                    continue  # one query so far: read on
                yield cut, lines
                lines += count_newlines(self.buf, cut)
                rest = filled - cut
                self.buf[:rest] = self.buf[cut:filled]  # numpy copies overlapping ranges safely
                filled = rest


def _is_gzip(p: Path) -> bool:
    with p.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"


class _SplitGroupError(Exception):
    """A (run, query) group met in two batches: only the unbatched path can join it."""


@dataclass
class _Scored:
    """One batch's small results: per-group values, runs by name, queries by qrels index."""

    run_names: list[str]
    group_run: np.ndarray
    group_q: np.ndarray
    has_rows: np.ndarray
    values: np.ndarray
    text: dict[int, list[str]] | None
    no_common: str | None = None  # the message when the batch shares no query with the qrels


def _score(
    q: PreparedQrels, runs: RunColumns, measures: MeasureSet, options: EvalOptions
) -> _Scored:
    """Encode one batch of run rows against the prepared qrels and score it."""
    try:
        enc = encode(
            q,
            runs,
            compat=options.compat,
            complete=options.complete,
            on_duplicate=options.on_duplicate,
        )
    except DataMismatchError as e:  # no query shared: the runs may have others elsewhere
        return _Scored(
            list(runs.run_names),
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
            np.zeros(0, bool),
            np.zeros((0, len(measures))),
            None,
            no_common=str(e),
        )
    ev = compute(
        enc,
        measures,
        relevance_level=options.relevance_level,
        compat=options.compat,
        max_depth=options.max_depth,
        judged_only=options.judged_only,
        complete=options.complete,
        num_docs=options.num_docs,
        zscores=options.zscores,
    )
    assert enc.qp is not None  # encoded against prepared qrels
    return _Scored(
        run_names=list(enc.run_names),
        group_run=enc.group_run.copy(),
        group_q=enc.qp[enc.group_q],  # evaluated groups are qrels queries: 0..Q-1
        has_rows=ev.has_rows.copy(),
        values=ev.values,
        text=ev.text,
    )


@dataclass
class _Stream:
    """What every batch of one evaluation shares."""

    q: PreparedQrels
    measures: MeasureSet
    options: EvalOptions
    budget: int
    ws: Workspace = field(default_factory=Workspace)  # token arrays, reused by every batch
    source_of: dict[str, tuple[int, str]] = field(default_factory=dict)  # run -> (unit, where)

    def one_input_per_run(self, cols: RunColumns, unit: int) -> None:
        """Raise when a run id was given by another input already (a run never spans
        inputs; one read in pieces gives its runs piece after piece)."""
        if not cols.run_names:
            return
        firsts = np.unique(cols.run, return_index=True)[1]
        for r, row in zip(np.unique(cols.run), firsts, strict=True):
            name = cols.run_names[int(r)]
            where = cols.source.where(int(row))
            seen = self.source_of.setdefault(name, (unit, where))
            if seen[0] != unit:
                msg = duplicate_run_id(
                    name, _file_of(seen[1]), _file_of(where), self.options.run_id_from
                )
                raise InputFormatError(msg)

    def scored(self, cols: RunColumns, unit: int) -> _Scored:
        self.one_input_per_run(cols, unit)
        return _score(self.q, cols, self.measures, self.options)

    def batch(
        self, b: Batch, first_unit: int, raw: RawFiles | None, reads: _ReadAhead, i: int
    ) -> Iterator[_Scored]:
        """One batch scored: a large input piece by piece, text files (read ahead), tables.

        Units are numbered over the whole plan from ``first_unit`` (a batch of
        several text files is read as one: its reader reports a run given by two
        of them)."""
        opts = self.options
        if _is_archive(b):
            path = str(b.units[0].item)
            before = 0  # the archive's rows before this piece
            for k, table in enumerate(reads.archive_tables(i)):
                n = table.num_rows
                try:
                    cols = runs_from_table(table, path)
                except FastevalError:
                    if k == 0:
                        raise
                    # the reader's own checks count rows from the piece: name the
                    # archive's row (an archive that ingest wrote holds no such row)
                    del table
                    runs_from_table(read_archive(path, EVAL_COLUMNS), path)
                    raise
                del table
                cols.source = replace(cols.source, row_offset=before)
                before += n
                yield self.scored(cols, first_unit)
                del cols
        elif b.pieces:
            yield from self._pieces(b.units[0], first_unit)
        else:
            if raw is not None:
                cols = parse_run_files(
                    raw.paths,
                    lenient=opts.lenient,
                    run_id_from=opts.run_id_from,
                    workspace=self.ws,
                    raw=raw,
                )
            else:
                cols = run_columns(
                    [u.item for u in b.units], lenient=opts.lenient, run_id_from=opts.run_id_from
                )
            # the units of one batch are read together (their reader checks them)
            yield self.scored(cols, first_unit)
            del cols  # before the next batch is tokenised into the workspace

    def _pieces(self, unit: Unit, k: int) -> Iterator[_Scored]:
        """A text file larger than the budget, in pieces of whole query groups."""
        run: str | None = None
        first_line = ""
        reader = PieceReader(Path(unit.item), self.budget * BYTES_PER_LINE)
        for size, lines in reader.pieces():
            try:
                cols = parse_run_piece(
                    reader.buf,
                    size,
                    unit.item,
                    lines_before=lines,
                    run_id_from=self.options.run_id_from,
                    workspace=self.ws,
                )
            except FastevalError:
                if lines == 0:
                    raise
                # a check that looks back (a tag against the file's first line) would
                # name the piece's first line: the whole file's reader names the file's
                del reader
                run_columns([unit.item], run_id_from=self.options.run_id_from)
                raise
            if run is None:
                run, first_line = cols.run_names[0], cols.source.where(0)
            elif cols.run_names != [run]:  # the tag changed between two pieces
                where = cols.source.where(0)
                msg = (
                    f"{where}: run tag {cols.run_names[0]!r} differs from {run!r} on line "
                    f"{first_line.rsplit(':', 1)[-1]}; a run file holds one run\n  hint: name "
                    "runs after their files instead: use --run-id filename "
                    "(API: run_id_from='filename')"
                )
                raise InputFormatError(msg)
            yield self.scored(cols, k)
            del cols  # before the reader moves the next piece into its buffer


def _file_of(where: str) -> str:
    """The input named in a ``Source.where`` string (``path:line`` or ``name, row n``)."""
    if ", row " in where:
        return where.rsplit(", row ", 1)[0]
    return where.rsplit(":", 1)[0]


class _ReadAhead:
    """Text batches read in a thread, one ahead, into two alternating byte workspaces;
    archives in pieces of row groups.

    File reads and gzip release the GIL: batch ``i + 1``'s bytes arrive while
    batch ``i`` is scored, into the buffer of batch ``i - 1`` (gone by then).
    The first two batches (or an archive's first piece) are asked for before
    the qrels are read, so that their reading overlaps the qrels and numba's
    start.
    """

    def __init__(self, batches: Sequence[Batch], budget: int) -> None:
        self.batches = batches
        self.budget = budget
        self.whole_text = [not b.pieces and all(u.is_text for u in b.units) for b in batches]
        self.ws = (Workspace(), Workspace())
        self.ahead: dict[int, Future[RawFiles]] = {}
        # one thread of its own, only when there is a next batch to read ahead
        self.pool = (
            ThreadPoolExecutor(1, thread_name_prefix="fasteval-read") if len(batches) > 1 else None
        )
        self.first_piece: Future[pa.Table] | None = None
        self.groups: dict[int, list[list[int]]] = {}  # an archive batch's pieces

    def __enter__(self) -> _ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def start(self, j: int) -> None:
        """Ask for batch ``j``'s bytes (if it is whole text files, not yet asked for);
        for an archive first in the plan, its first piece of row groups."""
        if self.pool is None:
            return
        if j < len(self.batches) and self.whole_text[j] and j not in self.ahead:
            paths = [u.item for u in self.batches[j].units]
            self.ahead[j] = self.pool.submit(read_files, paths, None, self.ws[j % 2])
        elif j == 0 and self.batches and _is_archive(self.batches[0]):
            path = self.batches[0].units[0].item
            first = self.pieces(0)[0]
            self.first_piece = self.pool.submit(read_row_groups, path, first, EVAL_COLUMNS)

    def pieces(self, i: int) -> list[list[int]]:
        """Archive batch ``i``'s pieces of row groups (its footer read once)."""
        if i not in self.groups:
            self.groups[i] = row_group_pieces(self.batches[i].units[0].item, self.budget)
        return self.groups[i]

    def archive_tables(self, i: int) -> Iterator[pa.Table]:
        """Batch ``i``'s archive in pieces of consecutive row groups (whole groups each).

        Only the first piece is read ahead (while the qrels are read): reading
        each next piece during scoring gained nothing measurable (the cores are
        busy) and held one more piece (+80 MB on TREC-8).
        """
        path = self.batches[i].units[0].item
        for k, groups in enumerate(self.pieces(i)):
            first = self.first_piece if i == 0 and k == 0 else None
            table = (
                first.result() if first is not None else read_row_groups(path, groups, EVAL_COLUMNS)
            )
            self.first_piece = None
            yield table
            del table

    def take(self, i: int) -> RawFiles | None:
        """Batch ``i``'s bytes (``None`` if it is not read ahead); asks for ``i + 1``."""
        raw = self.ahead.pop(i).result() if i in self.ahead else None
        self.start(i + 1)
        return raw


def _batches_scored(
    q: PreparedQrels,
    batches: Sequence[Batch],
    measures: MeasureSet,
    options: EvalOptions,
    progress: Progress | None,
    budget: int,
    reads: _ReadAhead,
) -> Iterator[_Scored]:
    """Read, encode and score each batch; text batches are read one ahead."""
    stream = _Stream(q, measures, options, budget)
    done = 0
    total = sum(len(b.units) for b in batches)
    for i, b in enumerate(batches):
        raw = reads.take(i)
        yield from stream.batch(b, done, raw, reads, i)
        done += len(b.units)
        if progress is not None and len(batches) > 1:
            progress(done, total)


def _is_archive(b: Batch) -> bool:
    """A fasteval archive, read in pieces of row groups."""
    return b.pieces and b.units[0].archive


def _no_query_shared(names: Sequence[str]) -> DataMismatchError:
    shown = ", ".join(repr(n) for n in names[:5]) + (" ..." if len(names) > 5 else "")
    msg = f"run(s) {shown} share no query with the qrels; nothing to evaluate for them"
    return DataMismatchError(msg)


def _merge(
    parts: list[_Scored], q: PreparedQrels, measures: MeasureSet, options: EvalOptions
) -> Evaluation:
    """One :class:`Evaluation` over every batch, aggregated per run at the end.

    Runs are numbered by first appearance; groups sorted by (run, query) as
    one encoding of all the runs orders them. A (run, query) group met in
    several batches is either an empty ``complete`` group (one is kept) or a
    group split between pieces of one file (:class:`_SplitGroupError`).
    """
    index: dict[str, int] = {}
    g_runs = []
    for p in parts:
        remap = np.array([index.setdefault(n, len(index)) for n in p.run_names], np.int32)
        g_runs.append(remap[p.group_run] if len(p.group_run) else np.zeros(0, np.int32))
    names = list(index)
    if parts and all(p.no_common is not None for p in parts):
        raise DataMismatchError(parts[0].no_common)
    qids = q.qids
    g_run = np.concatenate(g_runs)
    g_q = np.concatenate([p.group_q for p in parts])
    has_rows = np.concatenate([p.has_rows for p in parts])
    values = np.concatenate([p.values for p in parts])
    if len(parts) > 1:
        key = g_run.astype(np.int64) * len(qids) + g_q
        # rows first within a key, then batch order
        order = np.lexsort((~has_rows, key))
        key = key[order]
        first = np.concatenate([[True], key[1:] != key[:-1]])
        if (has_rows[order][~first]).any():
            raise _SplitGroupError
        keep = order[first]
        g_run, g_q, has_rows, values = g_run[keep], g_q[keep], has_rows[keep], values[keep]
    else:
        keep = np.arange(len(g_run))
    text: dict[int, list[str]] | None = None
    cols_text = next((p.text for p in parts if p.text is not None), None)
    if cols_text is not None:
        text = {}
        for j in cols_text:
            flat = [s for p in parts for s in (p.text[j] if p.text else [""] * len(p.group_run))]
            text[j] = [flat[int(i)] for i in keep]
    has = np.zeros(len(names), bool)
    has[g_run[has_rows]] = True
    if not has.all():
        raise _no_query_shared([names[i] for i in np.flatnonzero(~has)])
    empty_i64 = np.zeros(0, np.int64)
    n_q = len(qids)
    # what the table builder and aggregate() read: run names, query ids, each group's
    # (run, query), and the qrels grades (for -c's num_rel)
    enc = Encoded(
        run_names=names,
        qids=qids,
        in_qrels=np.ones(n_q, bool),
        starts=np.zeros(len(g_run), np.int64),
        ends=has_rows.astype(np.int64),
        group_run=g_run,
        group_q=g_q,
        rel=np.zeros(0, np.int32),
        row=empty_i64,
        jdx=empty_i64,
        qr_off=q.qr_off[: n_q + 1],
        qr_rel=q.qr_rel,
        qr_rows=empty_i64,
    )
    summary = aggregate(enc, measures, values, options.relevance_level, options.complete)
    return Evaluation(measures, enc, values, summary, has_rows, text)


def evaluate_ranking_stream(
    qrels: PreparedQrels,
    runs: RunsLike,
    measures: MeasureSet,
    options: EvalOptions,
    *,
    per_query: bool = True,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """Score ranking measures batch by batch against prepared qrels: the long table.

    Parameters
    ----------
    qrels
        The qrels, prepared once (:func:`fasteval.engine.encode.prepare_qrels`).
    runs
        As :func:`fasteval.evaluate`.
    measures
        Parsed ranking measures.
    options
        The evaluation options; ``options.batch_rows`` (``None``:
        ``$FASTEVAL_BATCH_ROWS`` or :data:`DEFAULT_BATCH_ROWS`) rows, estimated
        (see the module notes), are read and scored together: peak memory grows
        with this, not with the number of runs. A small input is one batch.
    per_query
        Include the per-query rows.
    progress
        Called after each batch with (input units done, units in all); not
        called when everything fits one batch.

    Returns
    -------
    polars.DataFrame
        The long table ``run_id, query_id, measure, value`` (and ``text``).
    """
    budget = batch_rows_of(options.batch_rows)
    items = as_list(runs)
    if not items:
        run_columns([], lenient=options.lenient, run_id_from=options.run_id_from)  # its error
    split = not options.lenient
    with gc_paused():
        while True:
            batches = plan_batches(items, budget, options.run_id_from, split=split)
            try:
                ev = _evaluate_batches(qrels, batches, measures, options, progress, budget)
                break
            except _SplitGroupError:
                if not split:  # pragma: no cover - whole files never split a group
                    raise
                # a query's lines are not consecutive in a file read in pieces:
                # read such files whole (the memory of the file, the same numbers)
                split = False
        return to_frame(ev, per_query=per_query, compat=options.compat)


def _evaluate_batches(
    q: PreparedQrels,
    batches: list[Batch],
    measures: MeasureSet,
    options: EvalOptions,
    progress: Progress | None,
    budget: int,
) -> Evaluation:
    with _ReadAhead(batches, budget) as reads:
        reads.start(0)
        reads.start(1)
        parts = list(_batches_scored(q, batches, measures, options, progress, budget, reads))
    return _merge(parts, q, measures, options)
