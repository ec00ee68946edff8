"""``evaluate()``: an :class:`fasteval.Evaluator` made and used once (so a call and an
``Evaluator`` reused for many calls give the same table)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from fasteval.engine.inputs import QrelsLike, RunsLike
from fasteval.evaluator import Evaluator
from fasteval.measures.catalog import Request
from fasteval.options import EvalOptions

if TYPE_CHECKING:
    import polars as pl

_OPTIONS = [f.name for f in fields(EvalOptions)]
"""evaluate()'s keywords that are options (:class:`fasteval.options.EvalOptions`' fields)."""


def evaluate(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    measures: str | Sequence[str] | Request | None = None,
    *,
    per_query: bool = True,
    compat: int = 9,
    relevance_level: int = 1,
    complete: bool = False,
    max_depth: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
    zscores: Any = None,
    rel_format: str = "qrels",
    collection: Any = None,
    batch_rows: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pl.DataFrame:
    """Evaluate runs against qrels, as trec_eval would, for every run at once.

    Parameters
    ----------
    qrels
        A TREC qrels file (plain, .gz or .parquet), or a polars DataFrame /
        Arrow table with columns ``query_id, doc_id, relevance``.
    runs
        TREC run files, directories of them, Parquet archives (``fasteval
        ingest``), polars DataFrames / Arrow tables with ``run_id, query_id,
        doc_id, score``; or a list mixing these.
    measures
        trec_eval names (``map``, ``P_10``, ``P.5,10``, ``ndcg_cut.10``,
        ``official``, ``all_trec``) or ir_measures strings (``AP``, ``P@10``,
        ``nDCG@10``, ``P(rel=2)@5``); ``RIC``; diversity names
        (``alpha_nDCG@20``, ``ndeval``: the qrels are then diversity qrels and
        ndeval's defaults hold, see :func:`fasteval.diversity_evaluate`); or a
        :class:`fasteval.measures.catalog.Request` already parsed. Default:
        trec_eval's ``official`` set.
    per_query
        Include one row per (run, query) besides the ``all`` rows.
    compat
        9 for trec_eval 9.0.8 semantics (scores as float32; recall cutoffs
        ``(long)(p*R + 0.9)``), 10 for trec_eval 10.0 (float64; ``lround``;
        with ``complete``, missing queries get per-query rows).
    relevance_level
        trec_eval ``-l``: a grade ``>= relevance_level`` is relevant.
    complete
        trec_eval ``-c``: average over every qrels query; a query a run
        misses scores 0.
    max_depth
        trec_eval ``-M``: only the first ``max_depth`` documents of each
        ranking count.
    judged_only
        trec_eval ``-J``: drop unjudged documents from rankings before scoring.
    num_docs
        trec_eval ``-N``: documents in the collection (utility's fourth term).
    on_duplicate
        ``"error"`` or ``"first"`` (keep the first occurrence).
    lenient
        Skip malformed lines (reported in a warning) instead of raising.
    run_id_from
        For run files: ``"tag"`` (6th column) or ``"filename"``.
    zscores
        trec_eval ``-Z``: a z-score file (``qid measure mean stddev`` lines),
        a polars frame ``query_id, measure, mean, stddev`` or a
        :class:`fasteval.io.zscores.ZScores`. Per-query values become
        ``(value - mean) / stddev`` (``-1000000`` where the reference is
        missing) and the aggregates are formed from them; see
        :mod:`fasteval.engine.zscores`.
    rel_format
        trec_eval ``-R``: ``"qrels"`` (default) or ``"qrels_jg"``, qrels with
        judgment groups (``qid jg docno rel``; measures ``map_avgjg``,
        ``P_avgjg``, ``Rprec_mult_avgjg``, default set ``qrels_jg``; see
        :mod:`fasteval.engine.judgment_groups`).
    batch_rows
        Ranking measures (without RIC) are read, judged and scored in batches
        of whole runs of about this many rows (estimated from the file
        sizes), so memory does not grow with the number of runs; the result
        is the same whatever the budget. ``None``: ``$FASTEVAL_BATCH_ROWS``
        or 1,000,000. See :mod:`fasteval.engine.stream`.
    progress
        Called after each batch with (inputs done, inputs in all); only when
        the runs take more than one batch.

    Returns
    -------
    polars.DataFrame
        Long table ``run_id, query_id, measure, value``; aggregates have
        ``query_id == "all"``. Rows follow trec_eval's order: per run, each
        query's measures, then the aggregates. When a string measure
        (``relstring``) is requested, a ``text`` column holds its strings
        (``value`` is null on those rows, ``text`` null on the others); it
        has per-query rows only.

    See Also
    --------
    fasteval.Evaluator : the qrels prepared once, for many calls.

    Raises
    ------
    fasteval.errors.FastevalError
        For malformed input (naming file, line and value), unknown measures,
        and runs that share no query with the qrels.
    """
    given = locals()  # the keywords, before any other name: the options by their fields' names
    options = {k: given[k] for k in _OPTIONS}
    ev = Evaluator(qrels, measures, collection=collection, **options)
    return ev.evaluate(runs, per_query=per_query, progress=progress)
