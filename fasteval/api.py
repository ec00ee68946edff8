"""``evaluate()``: parse the measures once, call each evaluator with its measures, join.

The catalogue (:mod:`fasteval.measures.catalog`) says which evaluator computes
each measure; this module calls them:

* ranking measures (and RIC, whose rows are merged in): :mod:`fasteval.engine.ranking`,
  :mod:`fasteval.analysis.information`;
* diversity measures: :mod:`fasteval.engine.diversity`;
* judgment-group measures (``-R qrels_jg``): :mod:`fasteval.engine.judgment_groups`;
* content measures (``LMJS@20``, with a ``collection``): :mod:`fasteval.analysis.content`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from fasteval.analysis.information import append_ric
from fasteval.engine.diversity import diversity_evaluate
from fasteval.engine.inputs import QrelsLike, RunsLike
from fasteval.engine.judgment_groups import evaluate_jg
from fasteval.engine.prefs import evaluate_prefs
from fasteval.engine.ranking import evaluate_ranking
from fasteval.engine.stream import evaluate_ranking_stream
from fasteval.errors import FastevalWarning, MeasureError, ParameterError
from fasteval.io.zscores import as_zscores
from fasteval.measures.catalog import Request, check_rel_format, parse_request, split
from fasteval.measures.ir_measures_names import normalise_measures

if TYPE_CHECKING:
    from fasteval.analysis.content import ContentReport


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

    Raises
    ------
    fasteval.errors.FastevalError
        For malformed input (naming file, line and value), unknown measures,
        and runs that share no query with the qrels.
    """
    if max_depth is not None and max_depth <= 0:
        msg = f"max_depth must be positive, got {max_depth}"
        raise ParameterError(msg)
    check_rel_format(rel_format)
    if measures is None and collection is not None:
        measures = "LMJS@20"
    if measures is not None and not isinstance(measures, Request):
        # ir_measures objects and aliases (MAP, MRR@10, ...); judged_only=True on all of them
        measures, all_judged_only = normalise_measures(measures)
        judged_only = judged_only or all_judged_only
        groups = split(measures, rel_format=rel_format)
        if "content" in groups or collection is not None:
            df, report = evaluate_with_collection(
                qrels,
                runs,
                collection,
                groups.pop("content", []),
                [n for ns in groups.values() for n in ns],
                per_query=per_query,
                relevance_level=relevance_level,
                compat=compat,
                on_duplicate=on_duplicate,
                label_options={
                    "complete": complete,
                    "max_depth": max_depth,
                    "judged_only": judged_only,
                    "num_docs": num_docs,
                    "lenient": lenient,
                    "run_id_from": run_id_from,
                    "zscores": zscores,
                    "rel_format": rel_format,
                },
            )
            if report.lines():  # never silently: what the collection lacked
                warnings.warn("; ".join(report.lines()), FastevalWarning, stacklevel=2)
            return df
    elif collection is not None:
        msg = "a collection is for content measures\n  hint: measures=['LMJS@20']"
        raise ParameterError(msg)
    req = (
        measures
        if isinstance(measures, Request)
        else parse_request(measures, compat=compat, rel_format=rel_format)
    )
    check_options(req, judged_only=judged_only, zscores=zscores)
    common: dict[str, Any] = {
        "per_query": per_query,
        "relevance_level": relevance_level,
        "complete": complete,
        "max_depth": max_depth,
        "on_duplicate": on_duplicate,
        "lenient": lenient,
        "run_id_from": run_id_from,
    }
    if req.judgment_groups:
        return evaluate_jg(
            qrels, runs, req.ranking, compat=compat, judged_only=judged_only, **common
        )
    if req.preferences:  # trec_eval -R prefs / qrels_prefs
        return evaluate_prefs(
            qrels, runs, req.ranking, rel_format=req.preferences, compat=compat, **common
        )
    if req.diversity:
        # ndeval's defaults (alpha = beta = 0.5, the rank column's order); scores
        # are float64 whatever compat says, and utility's num_docs has no analogue
        return diversity_evaluate(qrels, runs, list(req.diversity), **common)
    zs = as_zscores(zscores) if zscores is not None else None
    if not req.ric:  # batches of whole runs, bounded memory
        return evaluate_ranking_stream(
            qrels,
            runs,
            req.ranking,
            compat=compat,
            judged_only=judged_only,
            num_docs=num_docs,
            zscores=zs,
            batch_rows=batch_rows,
            progress=progress,
            **common,
        )
    df, prep = evaluate_ranking(
        qrels,
        runs,
        req.ranking,
        compat=compat,
        judged_only=judged_only,
        num_docs=num_docs,
        zscores=zs,
        **common,
    )
    return append_ric(df, prep, relevance_level, per_query) if req.ric else df


def evaluate_with_collection(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    content: list[str],
    label: list[str],
    *,
    per_query: bool,
    relevance_level: int,
    compat: int,
    on_duplicate: str,
    label_options: dict[str, Any],
) -> tuple[pl.DataFrame, ContentReport]:
    """Content measures (SPEC 9) and any label measures in one table, with the counts of
    what the collection lacked (documents missing or without tokens, NaN queries).

    Rows are grouped per run (input order), the ``all`` rows of a run last.
    ``label_options`` are :func:`evaluate`'s options for the label measures.
    """
    # the content layer (and its kernels) loads only when a collection is given:
    # a plain evaluation does not pay its import (0.2 s)
    from fasteval.analysis.content import evaluate_content  # noqa: PLC0415 (start-up time)

    if collection is None:
        msg = (
            f"{', '.join(content)} read the documents: give the collection "
            "(CLI: --collection FILE; API: collection=...)"
        )
        raise ParameterError(msg)
    if not content:
        msg = "a collection is for content measures\n  hint: LMJS@20, LMKL@20 or LMJS_IA@20"
        raise ParameterError(msg)
    ev = evaluate_content(
        qrels,
        runs,
        collection,
        content,
        per_query=per_query,
        relevance_level=relevance_level,
        compat=compat,
        on_duplicate=on_duplicate,
    )
    if not label:
        return ev.table, ev.report
    lab = evaluate(
        qrels,
        runs,
        label,
        per_query=per_query,
        compat=compat,
        relevance_level=relevance_level,
        on_duplicate=on_duplicate,
        **label_options,
    )
    order = {r: i for i, r in enumerate(ev.data.enc.run_names)}
    df = (
        pl.concat([lab.select(ev.table.columns), ev.table])
        .with_columns(
            pl.col("run_id").replace_strict(order, return_dtype=pl.Int64).alias("_r"),
            (pl.col("query_id") == "all").alias("_a"),
        )
        .sort(["_r", "_a"], maintain_order=True)
        .drop("_r", "_a")
    )
    return df, ev.report


def check_options(req: Request, *, judged_only: bool = False, zscores: Any = None) -> None:
    """Raise for an option the request's evaluator lacks, or a measure evaluate() cannot compute.

    ``-Z`` needs plain qrels and ranking measures; ``-J`` does not apply to
    diversity measures; HSA and DO are per-run statistics.
    """
    if zscores is not None and req.judgment_groups:
        msg = "z-scores (-Z) are only supported with plain qrels"
        raise ParameterError(msg)
    if req.histogram:
        msg = (
            f"{', '.join(req.histogram)} are not per-query measures of evaluate()"
            "\n  hint: fasteval.histogram_analysis (CLI: fasteval hsa) computes them"
        )
        raise MeasureError(msg)
    if req.diversity:
        if zscores is not None:
            msg = "z-scores (-Z) are not supported for diversity measures"
            raise ParameterError(msg)
        if judged_only:
            msg = (
                "judged_only (-J) does not apply to diversity measures (ndeval has no such option)"
            )
            raise ParameterError(msg)
