"""Whole-archive evaluation on a Dask cluster, in blocks of runs.

Each run's rows depend on that run and the qrels only; a task reads only the
files of its own runs (the qrels once per worker).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from fasteval import parallel
from fasteval.distributed.cluster import (
    DEFAULT_RETRIES,
    Source,
    block_size,
    cached,
    connect,
    fetch_one,
    is_url,
    plan_on_worker,
    progress_bar,
    run_blocks,
    spec_token,
)
from fasteval.errors import InputFormatError, ParameterError


@dataclass(frozen=True)
class EvalSpec:
    """What a worker needs to read the qrels and its own runs."""

    source: Source


def _eval_qrels(token: str, spec: EvalSpec) -> Any:
    """The qrels as a table, read once per worker (the runs are read per block)."""

    def build() -> Any:
        from fasteval.io.tables import qrels_columns, qrels_to_table

        q = fetch_one(spec.source.qrels)
        if len(q) != 1:
            msg = f"qrels must be one file, got a folder: {spec.source.qrels}"
            raise InputFormatError(msg)
        return qrels_to_table(qrels_columns(q[0], lenient=spec.source.lenient))

    return cached(token, build)


def _eval_plan(spec: EvalSpec) -> list[list[str]]:
    """The run inputs, one list per run in the readers' order (text files, then tables).

    Local paths are expanded to their files (a folder's files), and the text
    files naming the same run (by their first line) are listed together, so a
    block of these lists holds whole runs. A URL stays one input (a remote
    folder or Parquet archive is read by the one task that holds it).
    """
    from fasteval.io.batches import plan_batches
    from fasteval.io.tables import expand_paths
    from fasteval.options import EvalOptions

    items: list[str] = []
    for r in spec.source.runs:
        items.extend([r] if is_url(r) else [os.fspath(p) for p in expand_paths([r])])
    # a budget of one row: every run (or table) its own batch, in the readers' order
    batches = plan_batches(items, 1, EvalOptions(run_id_from=spec.source.run_id_from), split=False)
    return [[os.fspath(u.item) for u in b.units] for b in batches]


def _eval_block(
    token: str,
    spec: EvalSpec,
    items: list[str],
    measures: Any,
    kwargs: dict[str, Any],
    kernel_threads: int | None,
) -> pl.DataFrame:
    """Evaluate the runs of one block, reading only their files."""
    from fasteval.api import evaluate as local_evaluate

    q = _eval_qrels(token, spec)
    runs = [x for item in items for x in fetch_one(item)]
    with parallel.kernel_threads(kernel_threads):
        return local_evaluate(
            q,
            runs,
            measures,
            lenient=spec.source.lenient,
            run_id_from=spec.source.run_id_from,
            **kwargs,
        )


def refuse_diversity(measures: Sequence[str], fmt: str) -> None:
    """``fasteval eval --cluster`` evaluates ad-hoc measures (and RIC) only."""
    from fasteval.measures.catalog import split

    if fmt == "ndeval" or "diversity" in split(measures):
        msg = "--cluster evaluates ad-hoc measures only; run diversity measures without --cluster"
        raise ParameterError(msg)


def evaluate(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    measures: str | Sequence[str] | None = None,
    *,
    client: Any,
    block: int | None = None,
    retries: int = DEFAULT_RETRIES,
    progress: bool | None = None,
    kernel_threads: int | None = None,
    lenient: bool = False,
    run_id_from: str = "tag",
    **kwargs: Any,
) -> pl.DataFrame:
    """:func:`fasteval.evaluate` on a Dask cluster, in blocks of runs.

    A task evaluates a block of whole runs and reads only their files (each
    worker reads the qrels once). The table equals :func:`fasteval.evaluate`'s
    with the same arguments (same rows, same order, same bits). ``block`` is
    the number of runs per task (a Parquet archive or a URL folder counts as
    one: it is read whole by one task). ``**kwargs`` are ``evaluate``'s
    (``per_query``, ``compat``, ``relevance_level``, ``complete``...).
    """
    refuse_diversity([measures] if isinstance(measures, str) else list(measures or []), "")
    spec = EvalSpec(Source.of(qrels, runs, run_id_from, lenient))
    token = spec_token(spec)
    with connect(client) as c:
        groups = plan_on_worker(c, _eval_plan, spec, retries=retries)
        size = block_size(len(groups), c, block)
        bounds = [(lo, min(lo + size, len(groups))) for lo in range(0, len(groups), size)]
        parts: list[pl.DataFrame | None] = [None] * len(bounds)

        def on_done(i: int, df: pl.DataFrame) -> None:
            parts[i] = df

        with progress_bar(len(groups), 0, "run", "evaluating (cluster)", progress) as bar:
            run_blocks(
                c,
                _eval_block,
                [
                    (
                        token,
                        spec,
                        [item for g in groups[lo:hi] for item in g],
                        measures,
                        kwargs,
                        kernel_threads,
                    )
                    for lo, hi in bounds
                ],
                [hi - lo for lo, hi in bounds],
                retries=retries,
                name="eval",
                bar=bar,
                on_done=on_done,
            )
    return pl.concat([p for p in parts if p is not None])
