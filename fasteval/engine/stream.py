"""Ranking evaluation in batches: plan, read, encode, score, merge.

The route of :func:`fasteval.evaluate`, :class:`fasteval.Evaluator` and the command
line; the analyses that need every ranking at once (RIC, the report, studies,
fusion) use :func:`fasteval.engine.inputs.prepare` and
:func:`fasteval.engine.ranking.compute` instead.

:func:`evaluate_ranking_stream` scores runs against prepared qrels
(:class:`fasteval.engine.encode.PreparedQrels`) holding only one batch of run
rows in memory at a time, plus the small per-(run, query) result arrays; runs
are aggregated at the end. A small input is one batch. How the inputs are cut
into batches and a large file into pieces: :mod:`fasteval.io.batches`.

Why the result is the same whatever the batches
-----------------------------------------------
A (run, query) group's values depend only on its own rows (in input order)
and the qrels. Evaluated groups are always qrels queries, numbered by the
prepared qrels the same way in every batch; runs are numbered by first
appearance over the batches, which follow the input order; the groups are then
sorted by (run, query) and each run's aggregate is summed over them in that
order (:func:`fasteval.engine.ranking.aggregate`). Under ``complete`` every
batch holding a run adds empty groups for the qrels queries it lacks: one is
kept. A run given by two inputs is an error (the readers' message), whichever
batches read them. A group with rows in two pieces of one file (a query whose
lines are not consecutive) cannot be scored piece by piece: the plan is then
made again with such files read whole. Errors met in a batch are raised as
they are, with the file's own line (or the archive's own row) numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from fasteval.columns import RunColumns, first_rows
from fasteval.engine.encode import Encoded, PreparedQrels, encode
from fasteval.engine.inputs import RunsLike, as_list
from fasteval.engine.ranking import aggregate, compute
from fasteval.engine.table import Evaluation, Long, to_long
from fasteval.errors import DataMismatchError, FastevalError, InputFormatError
from fasteval.io.archive import (
    EVAL_COLUMNS,
    Pieces,
    read_row_groups,
    row_group_pieces,
)
from fasteval.io.batches import (
    Batch,
    BatchReader,
    batch_rows_of,
    plan_batches,
)
from fasteval.io.tables import run_columns
from fasteval.io.trec import (
    RawFiles,
    Workspace,
    duplicate_run_id,
    read_files,
)
from fasteval.measures.parser import MeasureSet
from fasteval.options import EvalOptions
from fasteval.parallel import gc_paused

Progress = Callable[[int, int], None]
"""Called after each batch with (input units done, input units in all)."""


class _SplitGroupError(FastevalError):
    """A (run, query) group met in two pieces of one file: such files are read whole."""


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
        enc = encode(q, runs, options)
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
    # every batch is aggregated together (_merge)
    ev = compute(enc, measures, options, summarise=False)
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
    one_unit: bool = False  # the plan has a single input
    source_of: dict[str, tuple[int, str]] = field(default_factory=dict)  # run -> (unit, where)
    reader: BatchReader = field(init=False)

    def __post_init__(self) -> None:
        # token arrays reused by every batch; big files' bytes in one buffer
        self.reader = BatchReader(self.budget, self.options, workspace=Workspace())

    def one_input_per_run(self, cols: RunColumns, unit: int) -> None:
        """Raise when a run id was given by another input already (a run never spans
        inputs; one read in pieces gives its runs piece after piece)."""
        if not cols.run_names:
            return
        for r, row in zip(*first_rows(cols.run), strict=True):
            name = cols.run_names[int(r)]
            where = cols.source.where(int(row))
            seen = self.source_of.setdefault(name, (unit, where))
            if seen[0] != unit:
                msg = duplicate_run_id(name, _file_of(seen[1]), _file_of(where), self.options)
                raise InputFormatError(msg)

    def scored(self, cols: RunColumns, unit: int) -> _Scored:
        if not self.one_unit:  # a single input cannot give a run twice
            self.one_input_per_run(cols, unit)
        return _score(self.q, cols, self.measures, self.options)

    def batch(
        self, b: Batch, first_unit: int, raw: RawFiles | None, reads: _ReadAhead, i: int
    ) -> Iterator[_Scored]:
        """One batch scored: a large input piece by piece, text files (read ahead), tables.

        Units are numbered over the whole plan from ``first_unit`` (a batch of
        several text files is read as one: its reader reports a run given by two
        of them)."""
        tables = reads.archive_tables(i) if b.archive_pieces else None
        for cols in self.reader.columns(b, raw, tables):
            yield self.scored(cols, first_unit)
            del cols  # before the next piece or batch is read into the same memory


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
        self.groups: dict[int, Pieces] = {}  # an archive batch's pieces

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
        elif j == 0 and self.batches and self.batches[0].archive_pieces:
            path = self.batches[0].units[0].item
            pieces = self.pieces(0)
            self.first_piece = self.pool.submit(
                read_row_groups, path, pieces.groups[0], EVAL_COLUMNS, verified=pieces.verified
            )

    def pieces(self, i: int) -> Pieces:
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
        pieces = self.pieces(i)
        for k, groups in enumerate(pieces.groups):
            first = self.first_piece if i == 0 and k == 0 else None
            table = (
                first.result()
                if first is not None
                else read_row_groups(path, groups, EVAL_COLUMNS, verified=pieces.verified)
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
    total = sum(len(b.units) for b in batches)
    stream = _Stream(q, measures, options, budget, one_unit=total == 1)
    done = 0
    for i, b in enumerate(batches):
        raw = reads.take(i)
        yield from stream.batch(b, done, raw, reads, i)
        done += len(b.units)
        if progress is not None and len(batches) > 1:
            progress(done, total)


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
) -> Long:
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
        ``$FASTEVAL_BATCH_ROWS`` or :data:`fasteval.io.batches.DEFAULT_BATCH_ROWS`) rows, estimated
        (see the module notes), are read and scored together: peak memory grows
        with this, not with the number of runs. A small input is one batch.
    per_query
        Include the per-query rows.
    progress
        Called after each batch with (input units done, units in all); not
        called when everything fits one batch.

    Returns
    -------
    Long
        The long table ``run_id, query_id, measure, value`` (and ``text``) as arrays
        (``.to_polars()``: the frame).
    """
    budget = batch_rows_of(options.batch_rows)
    items = as_list(runs)
    if not items:
        run_columns([], options)  # its error
    split = not options.lenient
    with gc_paused():
        while True:
            batches = plan_batches(items, budget, options, split=split)
            try:
                ev = _evaluate_batches(qrels, batches, measures, options, progress, budget)
                break
            except _SplitGroupError:
                if not split:  # pragma: no cover - whole files never split a group
                    raise
                # a query's lines are not consecutive in a file read in pieces:
                # read such files whole (the memory of the file, the same numbers)
                split = False
        return to_long(ev, per_query=per_query, compat=options.compat)


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
