"""Reading and joining the inputs once: qrels and runs -> :class:`Prepared`."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from fasteval.columns import QrelsColumns, RunColumns
from fasteval.engine.encode import Encoded, PreparedQrels, encode
from fasteval.errors import DataMismatchError
from fasteval.io import is_polars
from fasteval.io.adapters import is_records, is_single_input
from fasteval.io.tables import qrels_columns, run_columns
from fasteval.options import EvalOptions, options_of

QrelsLike = Any  # path, polars DataFrame, Arrow table
RunsLike = Any  # path(s), directory, polars DataFrame, Arrow table, or a list of them


def as_list(x: RunsLike) -> list[Any]:
    """One input or many as a list (a path, frame, Arrow table, pandas frame, dict of
    dicts or a list of records is one input)."""
    if isinstance(x, (str, os.PathLike)) or is_polars(x) or not isinstance(x, Iterable):
        return [x]
    if isinstance(x, pa.Table) or is_single_input(x):
        return [x]
    items = list(x)  # paths, or records from a generator (ir_datasets scoreddocs_iter())
    return [items] if is_records(items) else items


@dataclass
class Prepared:
    """Qrels and runs read once and joined: the input of every analysis.

    ``enc``: the rankings in trec_eval order, judged; ``runs``, ``qrels``: their columns
    (``runs.score[enc.row]``: each position's score; ``qrels.doc.value(enc.qr_rows[j])``:
    judgment ``j``'s document).
    """

    qrels: QrelsColumns
    runs: RunColumns
    enc: Encoded


def prepare(
    qrels: QrelsLike, runs: RunsLike, opts: EvalOptions | None = None, **fields: Any
) -> Prepared:
    """Read and encode qrels (maybe prepared already) and runs once; the options are
    ``opts`` (default: :data:`~fasteval.options.DEFAULTS`) with ``fields`` replaced."""
    opts = options_of(opts, fields)
    prepared = isinstance(qrels, PreparedQrels)
    q = qrels.cols if prepared else qrels_columns(qrels, lenient=opts.lenient)
    r = run_columns(as_list(runs), opts)
    enc = encode(qrels if prepared else q, r, opts)
    check_runs_retrieved(enc.run_names, enc.group_run, enc.ends > enc.starts)
    return Prepared(q, r, enc)


def number_runs(parts: Iterable[tuple[list[str], np.ndarray]]) -> tuple[list[str], list[Any]]:
    """Runs numbered by first appearance over batches ``(run_names, group_run)``: the
    names, and each batch's ``group_run`` in those numbers."""
    number: dict[str, int] = {}
    out = []
    for names, group_run in parts:
        runs = np.array([number.setdefault(n, len(number)) for n in names], np.int32)
        out.append(runs[group_run])
    return list(number), out


def check_runs_retrieved(names: list[str], group_run: np.ndarray, has_rows: np.ndarray) -> None:
    """Raise when a run has no group with rows (``group_run[has_rows]``): it shares no
    query with the qrels, so nothing could be evaluated for it."""
    has = np.zeros(len(names), bool)
    has[group_run[has_rows]] = True
    if not has.all():
        bad = [names[i] for i in np.flatnonzero(~has)]
        shown = ", ".join(repr(b) for b in bad[:5]) + (" ..." if len(bad) > 5 else "")
        msg = f"run(s) {shown} share no query with the qrels; nothing to evaluate for them"
        raise DataMismatchError(msg)
