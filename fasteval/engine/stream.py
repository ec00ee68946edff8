"""Streaming ranking evaluation: runs read, judged and scored in batches of whole runs.

:func:`evaluate_ranking_stream` gives exactly the table of
:func:`fasteval.engine.ranking.evaluate_ranking` while holding only one batch of
runs in memory at a time, plus the qrels (read once) and the small per-(run,
query) result arrays.

How the inputs are cut
----------------------
The input units are the run files (directories expanded, as the readers do),
Parquet archives and in-memory frames/tables, in the order the readers
concatenate them (text files first, then the tables). The first line of each
text file names its run (its tag, or its file name under
``run_id_from="filename"``); files naming the same run go into the same batch,
so every run is scored whole and aggregated once, as unbatched. Runs are
never split across batches: a batch is a sequence of whole runs in
first-appearance order, closed when its estimated size reaches
``batch_rows`` (a run larger than the budget is a batch of its own).

The size of a text file is estimated from its uncompressed size (the gzip
trailer for ``.gz``) at :data:`BYTES_PER_LINE`; a Parquet archive's from its
metadata; a frame's is its length. A Parquet archive or a frame is one unit
(it is not split by row groups).

Why the result is identical
---------------------------
Evaluated (run, query) groups are always qrels queries, so a batch's query
indices map onto the sorted qrels query ids, which are the same in every
batch; runs keep their first-appearance order because batches follow it and
each run lies in one batch; each run's rows keep their input order (a batch
reads its files in input order); per-run aggregates only see that run's
groups. If a batch nevertheless holds a run id already seen in an earlier
batch (a malformed first line under ``lenient``, the same run id in two
Parquet archives), the batches cannot reproduce the unbatched merge of those
rows, so the whole evaluation is redone unbatched: the answer is then today's
by construction, at today's memory.
"""

from __future__ import annotations

import gzip
import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.encode import Encoded, encode
from fasteval.engine.inputs import QrelsLike, RunsLike, as_list, check_runs_have_queries
from fasteval.engine.ranking import compute, evaluate_ranking
from fasteval.engine.table import Evaluation, to_frame
from fasteval.errors import DataMismatchError, ParameterError
from fasteval.io.tables import PARQUET_SUFFIXES, expand_paths, qrels_columns, run_columns
from fasteval.measures.parser import MeasureSet
from fasteval.parallel import gc_paused

DEFAULT_BATCH_ROWS = 2_000_000
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


@dataclass
class Batch:
    """Consecutive whole runs read together; ``units`` in input order."""

    units: list[Unit] = field(default_factory=list)
    rows: int = 0


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
    opener: Any = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rb") as f:
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
                tables.append(Unit(x, rows, None, is_text=False))
                continue
            if not p.is_file():  # the reader raises its own message
                text.append(Unit(x, 0, None, is_text=True))
                continue
            size = _gzip_size(p) if p.suffix == ".gz" else p.stat().st_size
            run: str | None
            if run_id_from == "filename":
                run = p.name[:-3] if p.name.endswith(".gz") else p.name
            else:
                run = _first_tag(p)
            text.append(Unit(x, max(1, size // BYTES_PER_LINE), run, is_text=True))
        else:
            n = x.height if isinstance(x, pl.DataFrame) else getattr(x, "num_rows", 0)
            tables.append(Unit(x, int(n), None, is_text=False))
    return text + tables


def plan_batches(items: list[Any], batch_rows: int, run_id_from: str = "tag") -> list[Batch]:
    """Cut the inputs into batches of whole runs of about ``batch_rows`` rows each.

    Text files naming the same run (by their first line) go into the batch
    of that run's first file; runs follow their first appearance.
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
        rows = sum(u.rows for u in group)
        if cur.units and cur.rows + rows > batch_rows:
            batches.append(cur)
            cur = Batch()
        cur.units.extend(group)
        cur.rows += rows
    if cur.units:
        batches.append(cur)
    order = {id(u): i for i, u in enumerate(units)}
    for b in batches:  # a batch reads its files in input order
        b.units.sort(key=lambda u: order[id(u)])
    return batches


class _SplitRunError(Exception):
    """A run id met in two batches: the batches cannot reproduce the unbatched merge."""


@dataclass
class _Scored:
    """One batch's small results, in global run and query indices."""

    run_names: list[str]
    group_run: np.ndarray
    group_q: np.ndarray
    has_rows: np.ndarray
    values: np.ndarray
    summary: np.ndarray
    text: dict[int, list[str]] | None


def _global(enc: Encoded, qids: list[str]) -> np.ndarray:
    """Map a batch's query indices onto ``qids`` (the sorted qrels queries)."""
    lut = np.full(len(enc.qids), -1, np.int64)
    mine = np.flatnonzero(enc.in_qrels)
    if len(mine) != len(qids):  # the same qrels in every batch: cannot happen
        msg = "internal error: batches disagree on the qrels queries"
        raise RuntimeError(msg)
    lut[mine] = np.arange(len(qids))
    return lut


def _batches_scored(
    qrels_cols: Any,
    batches: Sequence[Batch],
    measures: MeasureSet,
    options: dict[str, Any],
    progress: Progress | None,
) -> Iterator[tuple[_Scored, list[str]]]:
    """Read, encode and score each batch; yield its results and the sorted qrels query ids."""
    seen: set[str] = set()
    qids: list[str] | None = None
    done = 0
    total = sum(len(b.units) for b in batches)
    for b in batches:
        runs = run_columns(
            [u.item for u in b.units],
            lenient=options["lenient"],
            run_id_from=options["run_id_from"],
        )
        if seen.intersection(runs.run_names):
            raise _SplitRunError
        seen.update(runs.run_names)
        try:
            enc = encode(
                qrels_cols,
                runs,
                compat=options["compat"],
                complete=options["complete"],
                on_duplicate=options["on_duplicate"],
            )
        except DataMismatchError:
            # none of this batch's runs shares a query with the qrels (the unbatched
            # path names such runs when others do share queries)
            bad = runs.run_names
            shown = ", ".join(repr(n) for n in bad[:5]) + (" ..." if len(bad) > 5 else "")
            msg = f"run(s) {shown} share no query with the qrels; nothing to evaluate for them"
            raise DataMismatchError(msg) from None
        del runs  # the batch's rows: only the encoding (and its row indices) stays
        check_runs_have_queries(enc)
        ev = compute(
            enc,
            measures,
            relevance_level=options["relevance_level"],
            compat=options["compat"],
            max_depth=options["max_depth"],
            judged_only=options["judged_only"],
            complete=options["complete"],
            num_docs=options["num_docs"],
            zscores=options["zscores"],
        )
        if qids is None:
            qids = [enc.qids[i] for i in np.flatnonzero(enc.in_qrels)]
        scored = _Scored(
            run_names=list(enc.run_names),
            group_run=enc.group_run.copy(),
            group_q=_global(enc, qids)[enc.group_q],
            has_rows=ev.has_rows.copy(),
            values=ev.values,
            summary=ev.summary,
            text=ev.text,
        )
        del enc, ev
        done += len(b.units)
        if progress is not None:
            progress(done, total)
        yield scored, qids


def _merge(parts: list[_Scored], qids: list[str], measures: MeasureSet) -> Evaluation:
    """One :class:`Evaluation` over every batch (run indices offset batch after batch)."""
    names: list[str] = []
    group_run = []
    for p in parts:
        group_run.append(p.group_run.astype(np.int32) + np.int32(len(names)))
        names.extend(p.run_names)
    text: dict[int, list[str]] | None = None
    if parts[0].text is not None:
        text = {j: [s for p in parts if p.text for s in p.text[j]] for j in parts[0].text}
    g_run = np.concatenate(group_run)
    g_q = np.concatenate([p.group_q for p in parts]).astype(np.int32)
    has_rows = np.concatenate([p.has_rows for p in parts])
    empty_i64 = np.zeros(0, np.int64)
    # the table builder reads run names, query ids and the (run, query) of each group
    enc = Encoded(
        run_names=names,
        qids=qids,
        in_qrels=np.ones(len(qids), bool),
        starts=np.zeros(len(g_run), np.int64),
        ends=has_rows.astype(np.int64),
        group_run=g_run,
        group_q=g_q,
        rel=np.zeros(0, np.int32),
        row=empty_i64,
        jdx=empty_i64,
        qr_off=np.zeros(len(qids) + 1, np.int64),
        qr_rel=np.zeros(0, np.int32),
        qr_rows=empty_i64,
    )
    return Evaluation(
        measures,
        enc,
        np.concatenate([p.values for p in parts]),
        np.concatenate([p.summary for p in parts]),
        has_rows,
        text,
    )


def evaluate_ranking_stream(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    measures: MeasureSet,
    *,
    per_query: bool = True,
    compat: int = 9,
    relevance_level: int = 1,
    complete: bool = False,
    max_depth: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    zscores: Any = None,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
    batch_rows: int | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """Score ranking measures batch by batch; the table :func:`evaluate_ranking` gives.

    Parameters
    ----------
    qrels, runs, measures, per_query, compat, relevance_level, complete, max_depth, \
judged_only, num_docs, zscores, on_duplicate, lenient, run_id_from
        As :func:`fasteval.engine.ranking.evaluate_ranking`.
    batch_rows
        Rows (estimated, see the module notes) read and scored together;
        ``None``: ``$FASTEVAL_BATCH_ROWS`` or :data:`DEFAULT_BATCH_ROWS`.
        Peak memory grows with this, not with the number of runs.
    progress
        Called after each batch with (input units done, units in all); not
        called when everything fits one batch.

    Returns
    -------
    polars.DataFrame
        The long table ``run_id, query_id, measure, value`` (and ``text``).
    """
    if compat not in (9, 10):
        msg = f"compat must be 9 or 10, got {compat!r}"
        raise ParameterError(msg)
    budget = batch_rows_of(batch_rows)
    items = as_list(runs)
    options: dict[str, Any] = {
        "per_query": per_query,
        "compat": compat,
        "relevance_level": relevance_level,
        "complete": complete,
        "max_depth": max_depth,
        "judged_only": judged_only,
        "num_docs": num_docs,
        "zscores": zscores,
        "on_duplicate": on_duplicate,
        "lenient": lenient,
        "run_id_from": run_id_from,
    }
    batches = plan_batches(items, budget, run_id_from) if items else []
    if len(batches) <= 1:  # one batch: the unbatched path itself
        df, _ = evaluate_ranking(qrels, runs, measures, **options)
        return df
    with gc_paused():
        q = qrels_columns(qrels, lenient=lenient)
        parts: list[_Scored] = []
        qids: list[str] = []
        try:
            for scored, batch_qids in _batches_scored(q, batches, measures, options, progress):
                parts.append(scored)
                qids = batch_qids
        except _SplitRunError:
            del parts
            df, _ = evaluate_ranking(qrels, runs, measures, **options)
            return df
        del q
        ev = _merge(parts, qids, measures)
        del parts
        return to_frame(ev, per_query=per_query, compat=compat)
