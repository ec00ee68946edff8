"""Content layer, measures: LMJS@k, LMKL@k and LMJS_IA@k per (run, query) and per run.

:func:`content_evaluate` (the table) and :func:`evaluate_content` (the table
and a :class:`ContentReport` of what was skipped) score runs; :func:`score_groups`
scores the groups of a prepared :class:`~fasteval.analysis.content.data.ContentData`
under one qrels variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.analysis.content.data import (
    NOT_LOOKED_UP,
    ContentData,
    ensure_depth,
    prepare_content,
)
from fasteval.analysis.content.models import GroundTruth, ground_truth, group_blocks, similarity
from fasteval.engine import QrelsLike, RunsLike
from fasteval.engine.encode import Encoded
from fasteval.engine.table import long_table
from fasteval.errors import DataMismatchError, ParameterError
from fasteval.kernels import content as kc
from fasteval.measures.content import ContentMeasure, parse_content_measures
from fasteval.parallel import gc_paused

REASON_NO_RELEVANT = "no relevant judgment"
REASON_NOT_IN_COLLECTION = "no relevant document with text in the collection"


@dataclass
class ContentScores:
    """Per-group values of content measures for one qrels variant."""

    measures: list[ContentMeasure]
    values: np.ndarray  # (n_groups, n_measures)
    skipped: np.ndarray  # (n_groups, n_measures): ranked documents skipped within depth k
    empty_result: np.ndarray  # (n_groups, n_measures) bool: no document kept
    truth: GroundTruth
    truth_ia: GroundTruth | None


def _score_fused(
    data: ContentData, enc: Encoded, tr: GroundTruth, m: ContentMeasure
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values, kept and skipped counts of ``m`` per group, result models built and used at once."""
    ensure_depth(data, m.k)
    gq = enc.group_q.astype(np.int64)
    n_g = gq.shape[0]
    unit0 = np.ascontiguousarray(tr.q_off[gq], np.int64)
    units = np.ascontiguousarray(tr.q_off[gq + 1] - tr.q_off[gq], np.int64)
    order = np.argsort(unit0, kind="stable").astype(np.int64)
    starts = np.ascontiguousarray(enc.starts, np.int64)
    ends = np.ascontiguousarray(enc.ends, np.int64)
    work = (np.minimum(ends - starts, m.k) + 1).astype(np.float64)[order]
    values = np.empty(n_g, np.float64)
    kept = np.zeros(n_g, np.int64)
    skipped = np.zeros(n_g, np.int64)
    kind = kc.KL if m.family == "LMKL" else kc.JS
    mo = tr.models
    parallel.run(
        kc.score_lists,
        work,
        order,
        kc.Lists(starts, ends, data.pos_doc),
        kc.Units(unit0, units),
        kc.Scoring(int(m.k), int(kind), float(m.lam)),
        data.kernel_docs(),
        kc.LMs(mo.off, mo.n, mo.term, mo.p, mo.plogp),
        values,
        kc.Walks(kept, skipped),
    )
    return values, kept, skipped


def score_groups(
    data: ContentData,
    measures: Sequence[ContentMeasure],
    keep: np.ndarray | None = None,
    enc: Encoded | None = None,
    *,
    reuse_results: bool = False,
) -> ContentScores:
    """Values of ``measures`` for every (run, query) group of ``enc`` (default ``data.enc``).

    ``keep`` (a mask over the judgments) selects the judgments that build the
    ground truth (default all). ``reuse_results`` keeps the result models in
    ``data.cache`` for later calls (a study scores the same rankings under many
    qrels variants); otherwise, unless they are cached already, each result
    model is built and scored in one pass and never stored.
    """
    enc = enc if enc is not None else data.enc
    ms = list(measures)
    n_g = enc.starts.shape[0]
    gq = enc.group_q.astype(np.int64)
    truth = ground_truth(data, keep) if any(not m.intent_aware for m in ms) else None
    truth_ia = (
        ground_truth(data, keep, intent_aware=True) if any(m.intent_aware for m in ms) else None
    )
    values = np.full((n_g, len(ms)), np.nan)
    skipped = np.zeros((n_g, len(ms)), np.int64)
    empty = np.zeros((n_g, len(ms)), bool)
    for c, m in enumerate(ms):
        kind = kc.KL if m.family == "LMKL" else kc.JS
        tr = truth_ia if m.intent_aware else truth
        assert tr is not None
        if not reuse_results and (id(enc), m.k) not in data.cache:
            values[:, c], kept_f, skipped[:, c] = _score_fused(data, enc, tr, m)
            empty[:, c] = kept_f == 0
            if m.intent_aware:
                none = tr.q_off[gq + 1] == tr.q_off[gq]
                skipped[none, c] = 0
                empty[none, c] = False
            continue
        nu = tr.q_off[gq + 1] - tr.q_off[gq]
        if not m.intent_aware:  # one pair per group (the empty model when no ground truth)
            nu = np.ones_like(nu)
            first_unit = np.where(tr.q_off[gq + 1] > tr.q_off[gq], tr.q_off[gq], tr.empty_unit)
        else:
            first_unit = tr.q_off[gq]
        p_group = np.repeat(np.arange(n_g), nu)
        p_first = np.cumsum(nu) - nu
        p_unit = first_unit[p_group] + (np.arange(int(nu.sum())) - p_first[p_group])
        v = np.empty(p_group.shape[0], np.float64)
        kept = np.zeros(n_g, np.int64)
        for g0, g1, rm in group_blocks(data, enc, m.k):
            a_, b_ = np.searchsorted(p_group, [g0, g1])
            v[a_:b_] = similarity(
                data, tr.models, p_unit[a_:b_], rm, p_group[a_:b_] - g0, kind, m.lam
            )
            kept[g0:g1] = rm.kept
            skipped[g0:g1, c] = rm.skipped
        empty[:, c] = kept == 0
        if not m.intent_aware:
            values[:, c] = v
        else:
            sums = np.bincount(p_group, weights=v, minlength=n_g)
            with np.errstate(invalid="ignore", divide="ignore"):
                values[:, c] = np.where(nu > 0, sums / np.maximum(nu, 1), np.nan)
            skipped[nu == 0, c] = 0
            empty[nu == 0, c] = False
    return ContentScores(ms, values, skipped, empty, truth or truth_ia, truth_ia)  # type: ignore[arg-type]


def run_means(enc: Encoded, values: np.ndarray) -> np.ndarray:
    """Per run and measure: the mean over the run's groups with a value (NaN if none)."""
    n_runs = len(enc.run_names)
    out = np.full((n_runs, values.shape[1]), np.nan)
    gr = enc.group_run.astype(np.int64)
    for c in range(values.shape[1]):
        ok = ~np.isnan(values[:, c])
        s = np.bincount(gr[ok], weights=values[ok, c], minlength=n_runs)
        n = np.bincount(gr[ok], minlength=n_runs)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, c] = np.where(n > 0, s / np.maximum(n, 1), np.nan)
    return out


@dataclass
class ContentReport:
    """What content evaluation skipped or could not score, counted.

    Attributes
    ----------
    ranked_not_in_collection
        Ranked rows whose document is not in the collection, among those the
        measures read (each ranking down to its k-th document found).
    ranked_without_text
        Ranked rows (likewise) whose document is in the collection but has no token.
    skipped_within_depth
        Per measure: documents skipped while filling the top ``k`` (sum over groups).
    empty_results
        Per measure: (run, query) groups with no document left to build theta_k.
    nan_queries
        Per reason: queries of the qrels (that some run retrieved for) whose
        ground truth is empty, hence NaN and left out of the means.
    nan_groups
        Per reason: (run, query) groups that are NaN.
    relevant_not_in_collection
        Relevant judgments whose document is missing from the collection (or has no token).
    """

    ranked_not_in_collection: int
    ranked_without_text: int
    skipped_within_depth: dict[str, int]
    empty_results: dict[str, int]
    nan_queries: dict[str, int]
    nan_groups: dict[str, int]
    relevant_not_in_collection: int

    def lines(self) -> list[str]:
        """Human-readable summary lines (empty when there is nothing to report)."""
        out = []
        if self.ranked_not_in_collection:
            out.append(
                f"{self.ranked_not_in_collection} ranked document(s) are not in the collection "
                "(skipped; they do not use up the depth)"
            )
        if self.ranked_without_text:
            out.append(f"{self.ranked_without_text} ranked document(s) have no token (skipped)")
        if self.relevant_not_in_collection:
            out.append(
                f"{self.relevant_not_in_collection} relevant judgment(s) name documents missing "
                "from the collection or without tokens (left out of the ground truth)"
            )
        for reason, n in self.nan_queries.items():
            if n:
                out.append(f"{n} quer(y/ies) scored NaN: {reason} (left out of the means)")
        for m, n in self.empty_results.items():
            if n:
                out.append(
                    f"{m}: {n} ranking(s) have no document in the collection (score 0 / theta_C)"
                )
        return out


@dataclass
class ContentEvaluation:
    """Result of :func:`evaluate_content`: the long table and the counts of what was skipped."""

    table: pl.DataFrame
    report: ContentReport
    data: ContentData
    scores: ContentScores


def _report(data: ContentData, sc: ContentScores) -> ContentReport:
    enc = data.enc
    dd = data.pos_doc[data.pos_doc != NOT_LOOKED_UP]
    not_in = int((dd < 0).sum())
    no_text = int((data.doc_len[dd[dd >= 0]] == 0).sum())
    truth = sc.truth
    n_q = enc.qr_off.shape[0] - 1
    evaluated_q = np.zeros(n_q, bool)
    evaluated_q[enc.group_q] = True
    no_rel = evaluated_q & (truth.n_rel == 0)
    no_text_rel = evaluated_q & (truth.n_rel > 0) & (truth.q_off[1:] == truth.q_off[:-1])
    gq = enc.group_q
    names = [m.name for m in sc.measures]
    rel_j = np.unique(data.sub_j[data.sub_rel >= data.relevance_level])
    jd = data.jdoc[rel_j]
    missing_rel = int((jd < 0).sum() + (data.doc_len[jd[jd >= 0]] == 0).sum())
    return ContentReport(
        ranked_not_in_collection=not_in,
        ranked_without_text=no_text,
        skipped_within_depth={n: int(sc.skipped[:, c].sum()) for c, n in enumerate(names)},
        empty_results={
            n: int((sc.empty_result[:, c] & ~np.isnan(sc.values[:, c])).sum())
            for c, n in enumerate(names)
        },
        nan_queries={
            REASON_NO_RELEVANT: int(no_rel.sum()),
            REASON_NOT_IN_COLLECTION: int(no_text_rel.sum()),
        },
        nan_groups={
            REASON_NO_RELEVANT: int(no_rel[gq].sum()),
            REASON_NOT_IN_COLLECTION: int(no_text_rel[gq].sum()),
        },
        relevant_not_in_collection=missing_rel,
    )


def to_frame(
    enc: Encoded, names: Sequence[str], values: np.ndarray, *, per_query: bool = True
) -> pl.DataFrame:
    """Long table ``run_id, query_id, measure, value`` like :func:`fasteval.evaluate`'s.

    Per run: every evaluated query's measures (queries in trec_eval order),
    then the ``all`` rows (means over the queries with a value).
    """
    summary = run_means(enc, values)
    # every ranking has a row here (prepare drops none), so the engine's builder
    # gives the same rows; NaNs are made canonical for equality tests
    df = long_table(enc, names, values, summary, per_query=per_query)
    return df.with_columns(pl.col("value").fill_nan(None).fill_null(float("nan")))


def evaluate_content(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    measures: str | Sequence[str] = "LMJS@20",
    *,
    per_query: bool = True,
    relevance_level: int = 1,
    compat: int = 9,
    on_duplicate: str = "error",
    data: ContentData | None = None,
) -> ContentEvaluation:
    """Content-based measures for every run (the table and the counts of what was skipped).

    See :func:`content_evaluate` for the parameters.
    """
    ms = parse_content_measures(measures if isinstance(measures, str) else list(measures))
    if not ms:
        msg = "no content measure given\n  hint: -m LMJS@20"
        raise ParameterError(msg)
    with gc_paused():
        if data is None:
            data = prepare_content(
                qrels,
                runs,
                collection,
                diversity=any(m.intent_aware for m in ms),
                relevance_level=relevance_level,
                compat=compat,
                on_duplicate=on_duplicate,
            )
        if any(m.intent_aware for m in ms) and not data.has_subtopics:
            msg = (
                "LMJS_IA needs diversity qrels (query_id, subtopic, doc_id, relevance)\n"
                "  hint: use LMJS@k for ad-hoc qrels"
            )
            raise ParameterError(msg)
        if len(data.coll) == 0:
            msg = "the collection holds no document"
            raise DataMismatchError(msg)
        sc = score_groups(data, ms)
        table = to_frame(data.enc, [m.name for m in ms], sc.values, per_query=per_query)
    return ContentEvaluation(table, _report(data, sc), data, sc)


def content_evaluate(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    measures: str | Sequence[str] = "LMJS@20",
    *,
    per_query: bool = True,
    relevance_level: int = 1,
    compat: int = 9,
    on_duplicate: str = "error",
) -> pl.DataFrame:
    """Score runs by content-based measures (SPEC 9): ``LMJS@k``, ``LMKL@k``, ``LMJS_IA@k``.

    Parameters
    ----------
    qrels
        Qrels (path, frame, table); diversity qrels for ``LMJS_IA``.
    runs
        As for :func:`fasteval.evaluate`.
    collection
        The documents: a :class:`~fasteval.io.collection.Collection`, a path
        (an indexed ``.parquet`` from ``fasteval index``, a ``doc_id, text``
        table, TREC SGML) or ``classic:NAME``.
    measures
        Content measure names (``LMJS@20``, ``LMKL(lambda=0.2)@20``, ...).
    per_query
        Include one row per (run, query) besides the ``all`` rows.
    relevance_level
        A grade ``>= relevance_level`` is relevant (feeds the ground truth).
    compat
        Ranking order as in :func:`fasteval.evaluate` (9: scores as float32).
    on_duplicate
        ``"error"`` or ``"first"``.

    Returns
    -------
    polars.DataFrame
        ``run_id, query_id, measure, value`` as :func:`fasteval.evaluate`;
        a query whose relevant documents are all missing from the collection
        (or that has none) is NaN and left out of the ``all`` mean. Use
        :func:`evaluate_content` for the counts of what was skipped.

    References
    ----------
    Hui, K. (2014). Towards robust & reusable evaluation for novelty &
    diversity. PIKM '14.
    """
    return evaluate_content(
        qrels,
        runs,
        collection,
        measures,
        per_query=per_query,
        relevance_level=relevance_level,
        compat=compat,
        on_duplicate=on_duplicate,
    ).table
