"""Ranking evaluation in batches: plan, read, encode, score, merge.

The route of :func:`fasteval.evaluate`, :class:`fasteval.Evaluator` and the command line.
One batch of run rows (:mod:`fasteval.io.batches`) is held at a time (an archive's pieces,
one a core), plus the small per-(run, query) results, aggregated at the end.

The result does not depend on the batches: a group's values depend only on its rows and
the qrels; queries are numbered by the prepared qrels, runs by first appearance, groups
sorted by (run, query) before :func:`fasteval.engine.ranking.aggregate`. Under
``complete`` one of a run's empty groups met in several batches is kept. A group split
over two pieces of a file (a query's lines not consecutive) makes that file read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from fasteval import parallel
from fasteval.columns import RunColumns, first_rows
from fasteval.engine.encode import PreparedQrels, encode
from fasteval.engine.inputs import RunsLike, as_list, check_runs_retrieved, number_runs
from fasteval.engine.ranking import aggregate, compute
from fasteval.engine.table import Evaluation, Long, ResultIndex, to_long
from fasteval.errors import DataMismatchError, FastevalError, InputFormatError
from fasteval.io.archive import Pieces, row_group_pieces
from fasteval.io.batches import (
    Batch,
    BatchReader,
    archive_piece,
    batch_rows_of,
    plan_batches,
)
from fasteval.io.files import RawFiles, Workspace, read_files
from fasteval.io.tables import run_columns
from fasteval.io.trec import duplicate_run_id
from fasteval.measures.parser import MeasureSet
from fasteval.options import EvalOptions

Progress = Callable[[int, int], None]
"""Called after each batch with (input units done, input units in all)."""


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


@dataclass
class _Stream:
    """What every batch of one evaluation shares."""

    q: PreparedQrels
    measures: MeasureSet
    options: EvalOptions
    reader: BatchReader
    one_unit: bool  # the plan has a single input
    source_of: dict[str, tuple[int, str]] = field(default_factory=dict)  # run -> (unit, file)

    def scored(self, cols: RunColumns, unit: int) -> _Scored:
        """Run rows of input ``unit`` encoded against the prepared qrels and scored; an
        error for a run id another input gave already (a single input cannot)."""
        if cols.run_names and not self.one_unit:
            files = cols.source.files(len(cols))
            for r, row in zip(*first_rows(cols.run), strict=True):
                name = cols.run_names[int(r)]
                file = cols.source.names[int(files[row])]
                seen = self.source_of.setdefault(name, (unit, file))
                if seen[0] != unit:
                    raise InputFormatError(duplicate_run_id(name, seen[1], file, self.options))
        try:
            # the measures read the grades alone: no rows written
            enc = encode(self.q, cols, self.options, keep_rows=False)
        except DataMismatchError as e:  # no query shared: the runs may have others elsewhere
            none = np.zeros(0, np.int32)
            values = np.zeros((0, len(self.measures)))
            return _Scored(list(cols.run_names), none, none, none > 0, values, None, str(e))
        ev = compute(enc, self.measures, self.options, summarise=False)  # aggregated by _merge
        assert enc.qp is not None  # encoded against prepared qrels
        return _Scored(
            run_names=list(enc.run_names),
            group_run=enc.group_run,
            group_q=enc.qp[enc.group_q],  # evaluated groups are qrels queries: 0..Q-1
            has_rows=ev.has_rows,
            values=ev.values,
            text=ev.text,
        )

    def batch(self, b: Batch, first_unit: int, reads: _ReadAhead, i: int) -> list[_Scored]:
        """Batch ``i`` scored piece by piece, its units numbered from ``first_unit``."""
        parts = []
        try:
            if b.archive_pieces:  # (pieces scored on their own threads)
                parts = list(reads.scored_pieces(i, lambda cols: self.scored(cols, first_unit)))
            else:
                for cols in self.reader.columns(b, reads.take(i)):
                    parts.append(self.scored(cols, first_unit))
                    del cols  # before the next piece or batch is read into the same memory
        except FastevalError:
            check = reads.groups[i].verified if i in reads.groups else None
            if check is not None:  # damage that decodes: the damaged file is the error
                check.join()
            raise
        if b.pieces and _splits_a_group(parts):
            # a query's lines are not consecutive: the input read whole (its memory)
            parts = [self.scored(run_columns([b.units[0].item], self.options), first_unit)]
        return parts


def _splits_a_group(parts: list[_Scored]) -> bool:
    """Whether a (run, query) group has rows in two of ``parts`` (an input's pieces)."""
    _, runs = number_runs((p.run_names, p.group_run) for p in parts)
    keys = [
        r[p.has_rows].astype(np.int64) << 32 | p.group_q[p.has_rows]
        for r, p in zip(runs, parts, strict=True)
    ]
    every = np.sort(np.concatenate([np.zeros(0, np.int64), *keys]))
    # (not np.unique: numpy 2 imports numpy.ma for it, on every command's start)
    return bool((every[1:] == every[:-1]).any())


class _ReadAhead:
    """Text batches read one ahead on a thread, into two alternating workspaces;
    archives in pieces of row groups, each read and scored on a thread of its own."""

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
        self.groups: dict[int, Pieces] = {}  # an archive batch's pieces

    def __enter__(self) -> _ReadAhead:
        self.start(0)
        self.start(1)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def start(self, j: int) -> None:
        """Ask for batch ``j``'s bytes if whole text files."""
        if self.pool and j < len(self.batches) and self.whole_text[j] and j not in self.ahead:
            paths = [u.item for u in self.batches[j].units]
            self.ahead[j] = self.pool.submit(read_files, paths, None, self.ws[j % 2])

    def scored_pieces(self, i: int, score: Callable[[RunColumns], _Scored]) -> Iterator[_Scored]:
        """Batch ``i``'s archive ``score``d piece by piece, in order: each piece decoded and
        scored on one thread, its kernels on that thread, one piece a core (no thread waits
        for another's decoding, nor for a kernel's slowest chunk)."""
        path = self.batches[i].units[0].item
        pieces = self.groups[i] = row_group_pieces(path, max(1, self.budget // PIECE_SHARE))
        n = len(pieces.groups)
        workers = min(n, parallel.threads())

        def one(k: int) -> _Scored:
            with parallel.kernel_threads(1 if workers > 1 else None):
                return score(archive_piece(path, pieces, k))

        if workers <= 1:  # one piece: read here, its kernels on every thread
            yield from map(one, range(n))
            return
        # threads of their own (a caller on the shared pool may not wait on it); all asked for
        pool = ThreadPoolExecutor(workers, thread_name_prefix="fasteval-piece")
        futures = [pool.submit(one, k) for k in range(n)]
        try:
            for f in futures:
                yield f.result()
        finally:  # (an error: the pieces not started are not read)
            pool.shutdown(wait=False, cancel_futures=True)

    def take(self, i: int) -> RawFiles | None:
        """Batch ``i``'s bytes (``None`` if it is not read ahead); asks for ``i + 1``."""
        raw = self.ahead.pop(i).result() if i in self.ahead else None
        self.start(i + 1)
        return raw


PIECE_SHARE = 4
"""An archive's pieces are this share of the row budget (one read and scored on each core)."""


def _merge(
    parts: list[_Scored], q: PreparedQrels, measures: MeasureSet, options: EvalOptions
) -> Evaluation:
    """One :class:`Evaluation` over every batch, groups sorted by (run, query) (of an
    empty ``complete`` group met in several batches, one kept), aggregated per run."""
    names, g_runs = number_runs((p.run_names, p.group_run) for p in parts)
    if parts and all(p.no_common is not None for p in parts):
        raise DataMismatchError(parts[0].no_common)
    qids = q.qids
    g_run = np.concatenate(g_runs)
    g_q = np.concatenate([p.group_q for p in parts])
    has_rows = np.concatenate([p.has_rows for p in parts])
    values = np.concatenate([p.values for p in parts])
    key = g_run.astype(np.int64) * len(qids) + g_q
    order = np.lexsort((~has_rows, key))  # rows first within a key, then batch order
    keep = order[np.diff(key[order], prepend=-1) != 0]
    g_run, g_q, has_rows, values = g_run[keep], g_q[keep], has_rows[keep], values[keep]
    text: dict[int, list[str]] | None = None
    cols_text = next((p.text for p in parts if p.text is not None), None)
    if cols_text is not None:
        text = {}
        for j in cols_text:
            flat = [s for p in parts for s in (p.text[j] if p.text else [""] * len(p.group_run))]
            text[j] = [flat[int(i)] for i in keep]
    check_runs_retrieved(names, g_run, has_rows)
    index = ResultIndex(names, qids, g_run, g_q)
    summary = aggregate(index, measures, values, q.qr_rel if options.complete else None)
    return Evaluation(measures, index, values, summary, has_rows, text)


def evaluate_ranking_stream(
    qrels: PreparedQrels,
    runs: RunsLike,
    measures: MeasureSet,
    options: EvalOptions,
    *,
    per_query: bool = True,
    progress: Progress | None = None,
) -> Long:
    """Score ``measures`` batch by batch against prepared ``qrels``: the long table.

    ``options.batch_rows`` (``None``: ``$FASTEVAL_BATCH_ROWS`` or the default) rows are
    scored together: peak memory grows with it, not with the runs. ``progress`` is
    called after each batch (not for one batch) with (units done, units in all).
    """
    budget = batch_rows_of(options.batch_rows)
    items = as_list(runs)
    if not items:
        run_columns([], options)  # its error
    with parallel.gc_paused():
        batches = plan_batches(items, budget, options, split=not options.lenient)
        total = sum(len(b.units) for b in batches)
        # token arrays reused by every batch; big files' bytes in one buffer
        reader = BatchReader(budget, options, workspace=Workspace())
        stream = _Stream(qrels, measures, options, reader, one_unit=total == 1)
        parts: list[_Scored] = []
        done = 0  # units are numbered over the whole plan
        with _ReadAhead(batches, budget) as reads:  # text batches read one ahead
            for i, b in enumerate(batches):
                parts += stream.batch(b, done, reads, i)
                done += len(b.units)
                if progress is not None and len(batches) > 1:
                    progress(done, total)
        del stream, reader  # the token arrays and piece buffers, before the table is built
        ev = _merge(parts, qrels, measures, options)
        return to_long(ev, per_query=per_query, compat=options.compat)
