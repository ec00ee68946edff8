"""Scorers for robustness studies beyond the ad-hoc measures: diversity, RIC, DO/HSA.

A study (:mod:`fasteval.analysis.studies`) re-scores every run under many
qrels variants, each a keep-mask over the judgments of an
:class:`~fasteval.engine.encode.Encoded` turned into a new ``Encoded`` by
:func:`~fasteval.analysis.variants.apply_mask`. The scorers here take such a
variant and return one score per run and name, like
:class:`~fasteval.analysis.variants.AdhocScorer`:

- :class:`DiversityScorer`: ndeval's measures (``alpha_nDCG@20``,
  ``ERR_IA@20``, ``NRBP``, ...) over diversity qrels. Its ``enc`` is the
  diversity data's own ``Encoded``, whose judgments are the judged
  *documents* of each query (a document carries all its subtopic labels, as
  an assessor judges it against every subtopic at once; it is relevant when it
  is relevant to at least one subtopic). A variant drops whole documents:
  every subtopic row of a dropped document leaves the qrels, subtopics left
  without a relevant document are no longer counted, and a query left
  without any judgment is no longer evaluated, exactly as if the reduced
  diversity qrels file had been read.
- :class:`RICScorer`: relevance information correlation (SPEC 5), by
  :func:`fasteval.analysis.information.pair_data` on the variant.
- :class:`HSAScorer`: histogram slope (``HSA``) and distributional overlap
  (``DO``, lower is better) of SPEC 4, by
  :func:`fasteval.analysis.hsa.histogram_analysis_prepared` on the variant.
- :class:`CombinedScorer`: several scorers over the same ``Encoded`` side by
  side (``map``, ``RIC`` and ``HSA`` in one study).

:func:`scorer_for` builds the right scorer from measure names, which is what
``fasteval.studies.subsample(..., measures=[...])`` and ``fasteval study ... -m``
use. A scorer that carries its own ``enc`` (the diversity one) defines the
judgments the study masks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis import hsa
from fasteval.analysis import variants as var
from fasteval.analysis.hsa import histogram_analysis_prepared
from fasteval.analysis.information import pair_data
from fasteval.engine import Prepared, QrelsLike, RunsLike
from fasteval.engine.compact import Compact, prepare_compact
from fasteval.engine.diversity import (
    DiversityPrepared,
    check_params,
    compute_diversity,
    prepare_diversity,
)
from fasteval.engine.encode import Encoded
from fasteval.errors import MeasureError, ParameterError
from fasteval.measures import catalog
from fasteval.measures.diversity import parse_diversity_measures
from fasteval.measures.parser import DO, HISTOGRAM_NAMES, HSA, RIC

# --------------------------------------------------------------------------- diversity


def mask_diversity(prep: Any, enc_v: Encoded) -> Any:
    """The :class:`~fasteval.engine.diversity.DiversityPrepared` of a qrels variant.

    ``enc_v`` is ``apply_mask(prep.enc, keep)``: its ``qr_rows`` are the kept
    judged documents. Relevant entries of dropped documents disappear (ranked
    positions that pointed at them become non-relevant), subtopics keep only
    the kept relevant documents and vanish when none is left, and the
    per-query offsets are compacted. Entry order (docno within query) and
    subtopic order are kept, so the kernels see what reading the reduced
    qrels file would give them.
    """
    if prep.entry_u is None:
        msg = "this DiversityPrepared has no entry map; build it with prepare_diversity"
        raise ParameterError(msg)
    n_u = prep.doc_rows.shape[0]
    keep_u = np.zeros(n_u, bool)
    keep_u[enc_v.qr_rows] = True
    n_q = prep.m_q.shape[0]
    n_e = prep.entry_u.shape[0]
    e_keep = keep_u[prep.entry_u]
    new_e = np.cumsum(e_keep, dtype=np.int64) - 1
    new_e[~e_keep] = -1
    e_q = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(prep.qd_off))
    # (entry, subtopic) pairs; global subtopic index = sub_off[query] + local index
    pe = np.repeat(np.arange(n_e, dtype=np.int64), np.diff(prep.rd_off))
    gsub = prep.sub_off[e_q[pe]] + prep.rd_sub
    pk = e_keep[pe]
    n_s = prep.sub_value.shape[0]
    nrel = np.bincount(gsub[pk], minlength=n_s).astype(np.int64)
    s_keep = nrel > 0
    s_q = np.repeat(np.arange(n_q, dtype=np.int64), prep.m_q)
    m_q = np.bincount(s_q[s_keep], minlength=n_q).astype(np.int64)
    sub_off = np.concatenate([[0], np.cumsum(m_q)]).astype(np.int64)
    local = np.cumsum(s_keep, dtype=np.int64) - 1 - sub_off[s_q]
    n_e2 = int(e_keep.sum())
    rd_off = np.concatenate([[0], np.cumsum(np.bincount(new_e[pe[pk]], minlength=n_e2))]).astype(
        np.int64
    )
    qd_off = np.concatenate([[0], np.cumsum(np.bincount(e_q[e_keep], minlength=n_q))]).astype(
        np.int64
    )
    seq = prep.seq
    if n_e:
        seq_v = np.where(seq >= 0, new_e[np.maximum(seq, 0)], -1).astype(np.int64)
    else:  # no relevant entry at this level: every ranked position is non-relevant
        seq_v = np.full(seq.shape[0], -1, np.int64)
    return dataclasses.replace(
        prep,
        enc=enc_v,
        seq=seq_v,
        m_q=m_q,
        sub_off=sub_off,
        sub_value=np.ascontiguousarray(prep.sub_value[s_keep]),
        nrel=np.ascontiguousarray(nrel[s_keep]),
        qd_off=qd_off,
        rd_off=rd_off,
        rd_sub=np.ascontiguousarray(local[gsub[pk]]),
        entry_u=np.ascontiguousarray(prep.entry_u[e_keep]),
    )


class DiversityScorer:
    """System scores (means over queries, as ndeval's ``amean``) of diversity measures.

    Parameters
    ----------
    prep
        Diversity qrels and runs from
        :func:`fasteval.engine.diversity.prepare_diversity` (or use
        :meth:`from_inputs`).
    measures
        Diversity measure names (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``,
        ...; see :func:`~fasteval.measures.diversity.parse_diversity_measures`).
    alpha, beta, max_depth, complete
        As for :func:`~fasteval.engine.diversity.diversity_evaluate`.

    Notes
    -----
    A study masks ``enc``'s judgments: one per judged (query, document),
    graded 1 when the document is relevant to some subtopic. Pool-depth and
    leave-out pools take the top ``k`` of each ranking in trec_eval order
    (score, then docno), which for TREC runs is the order of their rank
    column except among tied scores.
    """

    def __init__(
        self,
        prep: Any,
        measures: str | Sequence[str],
        *,
        alpha: float = 0.5,
        beta: float = 0.5,
        max_depth: int | None = None,
        complete: bool = False,
    ) -> None:

        self.prep = prep
        self.measures = parse_diversity_measures(measures)
        own = [m.name for m in self.measures if m.has_params]
        if own:  # one prepared qrels and one alpha/beta serve every measure of a study
            msg = (
                f"{', '.join(own)}: per-measure rel=/alpha=/beta= are not supported in studies"
                "\n  hint: use the study's relevance level and alpha/beta options"
            )
            raise MeasureError(msg)
        self.names = [m.name for m in self.measures]
        self.enc: Encoded = prep.enc
        # the masked judgments are documents graded 1 (relevant to some subtopic) or 0
        self.mask_relevance_level = 1
        self.uses_jdx = False  # reads the kept judged documents (qr_rows) and its own seq
        self.alpha, self.beta, self.max_depth, self.complete = alpha, beta, max_depth, complete
        check_params(alpha, beta, max_depth)

    @classmethod
    def from_inputs(  # noqa: PLR0913 (keyword-only options)
        cls,
        qrels: Any,
        runs: Any,
        measures: str | Sequence[str],
        *,
        order: str = "rank",
        relevance_level: int = 1,
        complete: bool = False,
        alpha: float = 0.5,
        beta: float = 0.5,
        max_depth: int | None = None,
        **kw: Any,
    ) -> DiversityScorer:
        """Read diversity qrels and runs once (``order``: ``"rank"``, ndeval's default)."""

        prep = prepare_diversity(
            qrels, runs, order=order, relevance_level=relevance_level, complete=complete, **kw
        )
        return cls(prep, measures, alpha=alpha, beta=beta, max_depth=max_depth, complete=complete)

    def variant(self, enc: Encoded) -> Any:
        """The diversity data of a variant (``enc`` from ``apply_mask(self.enc, keep)``)."""
        if enc is self.enc:
            return self.prep
        return mask_diversity(self.prep, enc)

    def __call__(self, enc: Encoded) -> np.ndarray:

        res = compute_diversity(
            self.variant(enc),
            self.measures,
            alpha=self.alpha,
            beta=self.beta,
            max_depth=self.max_depth,
            complete=self.complete,
        )
        return res.summary

    def variant_qrels(self, keep: np.ndarray) -> pl.DataFrame:
        """The diversity qrels rows of a variant: ``query_id, subtopic, doc_id, relevance``.

        ``keep`` is a mask over ``self.enc``'s judged documents; every
        subtopic row of a kept document is kept.
        """
        q = self.prep.qrels
        rows = self.prep.doc_rows[self.enc.qr_rows[np.asarray(keep, bool)]]
        kept = pl.DataFrame(
            {
                "query_id": pl.Series(q.qid.take(rows)).cast(pl.String),
                "doc_id": pl.Series(q.doc.take(rows)).cast(pl.String),
            }
        )
        full = pl.DataFrame(
            {
                "query_id": pl.from_arrow(q.qid.to_arrow()).cast(pl.String),
                "subtopic": q.subtopic,
                "doc_id": pl.from_arrow(q.doc.to_arrow()).cast(pl.String),
                "relevance": q.rel,
            }
        )
        return full.join(kept, on=["query_id", "doc_id"], how="semi", maintain_order="left")


# --------------------------------------------------------------------------- RIC, HSA


@dataclasses.dataclass
class RICScorer:
    """Mean RIC per run (SPEC 5) over the queries with a differing-grade pair.

    ``prepared`` is a :class:`~fasteval.engine.inputs.Prepared` or a
    :class:`~fasteval.engine.compact.Compact` (a study's compact form).
    """

    prepared: Prepared | Compact
    relevance_level: int = 1

    def __post_init__(self) -> None:
        self.names = [RIC]

    @property
    def enc(self) -> Encoded:
        """The judgments a study masks: those of ``prepared``."""
        return self.prepared.enc

    def __call__(self, enc: Encoded) -> np.ndarray:

        data = pair_data(with_enc(self.prepared, enc), relevance_level=self.relevance_level)
        return data.ric_per_run()[:, None]


@dataclasses.dataclass
class HSAScorer:
    """HSA and/or DO per run (SPEC 4), as :func:`~fasteval.analysis.hsa.histogram_analysis`.

    ``names`` is a subset of ``("HSA", "DO")``; DO is lower-is-better, which
    ``higher_is_better`` tells the study (it flips the sign for the rank
    correlations, not in the reported scores). Pooled (default): one
    histogram per run; ``pooled=False``: the mean over queries where defined.
    ``prepared`` may be a :class:`~fasteval.engine.compact.Compact`; with
    ``values="score"`` it must keep the scores (``prepare_compact(...,
    scores=True)``).
    """

    prepared: Prepared | Compact
    names: Sequence[str] = (HSA,)
    values: str = "rank"
    bins: int = 20
    normalize: str = "query"
    pooled: bool = True
    nonrel_sample: int | None = None
    seed: int = 0
    unjudged: str = "exclude"
    relevance_level: int = 1

    def __post_init__(self) -> None:

        bad = [n for n in self.names if n not in HISTOGRAM_NAMES]
        if bad or not self.names:
            msg = f"HSAScorer names must be among {HISTOGRAM_NAMES}, got {list(self.names)}"
            raise ParameterError(msg)
        self.names = list(self.names)
        self.higher_is_better = [n == HSA for n in self.names]
        hsa.HSAOptions(self.values, self.bins, self.normalize, self.nonrel_sample, self.unjudged)
        if (
            self.values == "score"
            and isinstance(self.prepared, Compact)
            and self.prepared.scores is None
        ):
            msg = (
                "HSA/DO over scores need the scores at the ranked positions\n"
                "  hint: prepare_compact(..., scores=True), or values='rank'"
            )
            raise ParameterError(msg)

    @property
    def enc(self) -> Encoded:
        """The judgments a study masks: those of ``prepared``."""
        return self.prepared.enc

    def __call__(self, enc: Encoded) -> np.ndarray:

        df = histogram_analysis_prepared(
            with_enc(self.prepared, enc),
            values=self.values,
            bins=self.bins,
            normalize=self.normalize,
            pooled=self.pooled,
            nonrel_sample=self.nonrel_sample,
            seed=self.seed,
            unjudged=self.unjudged,
            relevance_level=self.relevance_level,
        )
        assert isinstance(df, pl.DataFrame)
        if not self.pooled:
            df = df.filter(pl.col("query_id") == "all")
        cols = {HSA: "hsa", DO: "do"}
        return np.column_stack([df[cols[n]].to_numpy().astype(np.float64) for n in self.names])


def with_enc(prepared: Prepared | Compact, enc: Encoded) -> Prepared:
    """``prepared`` over the (full-width) variant ``enc``: what RIC and HSA read."""
    if isinstance(prepared, Compact):
        return prepared.prepared(enc)
    return dataclasses.replace(prepared, enc=enc)


class CombinedScorer:
    """Several scorers over the same ``Encoded``, their columns side by side."""

    def __init__(self, scorers: Sequence[var.Scorer]) -> None:
        self.scorers = list(scorers)
        self.names = [n for s in self.scorers for n in s.names]
        if len(set(self.names)) != len(self.names):
            msg = f"repeated measure names in {self.names}"
            raise ParameterError(msg)
        self.higher_is_better = [bool(h) for s in self.scorers for h in higher_is_better(s)]
        encs = [e for s in self.scorers if (e := getattr(s, "enc", None)) is not None]
        if any(e is not encs[0] for e in encs):
            msg = "combined scorers must share their data (the same prepared inputs)"
            raise ParameterError(msg)
        if encs:
            self.enc = encs[0]
        self.uses_jdx = any(bool(getattr(s, "uses_jdx", True)) for s in self.scorers)

    def __call__(self, enc: Encoded) -> np.ndarray:
        parts = [var.check_scores(s(enc), enc, list(s.names)) for s in self.scorers]
        return np.concatenate(parts, axis=1)


def higher_is_better(scorer: var.Scorer) -> list[bool]:
    """Per name: whether a higher score is better (``scorer.higher_is_better``, default all)."""
    h = getattr(scorer, "higher_is_better", None)
    out = [True] * len(scorer.names) if h is None else [bool(x) for x in h]
    if len(out) != len(scorer.names):
        msg = f"higher_is_better has {len(out)} entries for {len(scorer.names)} names"
        raise ParameterError(msg)
    return out


# --------------------------------------------------------------------------- from names


def split_names(measures: Sequence[str]) -> tuple[list[str], list[str], bool, list[str]]:
    """Split measure names: ``(adhoc, diversity, wants_ric, histogram)`` (HSA/DO).

    The grouping is the catalogue's (:func:`fasteval.measures.catalog.split`).
    """
    groups = catalog.split(measures)
    hist = list(dict.fromkeys(n.upper() for n in groups.get("histogram", [])))
    return groups.get("ranking", []), groups.get("diversity", []), "ric" in groups, hist


def scorer_for(
    measures: Sequence[str],
    *,
    qrels: QrelsLike | None = None,
    runs: RunsLike | None = None,
    prepared: Prepared | Compact | None = None,
    relevance_level: int = 1,
    compat: int = 9,
) -> var.Scorer:
    """The scorer of a list of measure names, reading the inputs when needed.

    Ad-hoc names (``map``, ``ndcg_cut_10``, ``P@10``), ``RIC``, ``HSA`` and
    ``DO`` combine freely over ad-hoc qrels. Diversity names
    (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``, ...) read the qrels as
    diversity qrels (``query subtopic doc grade``) and cannot be mixed with
    the others. ``prepared`` (from :func:`fasteval.engine.prepare` or
    :func:`fasteval.engine.compact.prepare_compact`, or a
    ``DiversityPrepared`` for diversity names) saves re-reading the inputs.
    """
    adhoc, div, ric, hist = split_names(measures)
    if div:
        other = adhoc + ([RIC] if ric else []) + hist
        if other:
            msg = (
                f"diversity measures need diversity qrels; cannot mix them with "
                f"{', '.join(other)} in one study\n  hint: run a separate study for those"
            )
            raise MeasureError(msg)

        if isinstance(prepared, DiversityPrepared):
            return DiversityScorer(prepared, div)
        if prepared is not None:
            msg = "diversity measures need prepared=prepare_diversity(...) or qrels and runs"
            raise ParameterError(msg)
        if qrels is None or runs is None:
            msg = "give qrels and runs, or prepared=prepare_diversity(qrels, runs)"
            raise ParameterError(msg)
        return DiversityScorer.from_inputs(qrels, runs, div, relevance_level=relevance_level)
    if not (adhoc or ric or hist):
        msg = "no measure given"
        raise MeasureError(msg)
    if not (ric or hist):
        return var.AdhocScorer(adhoc, relevance_level=relevance_level, compat=compat)
    if prepared is None:
        if qrels is None or runs is None:
            msg = "give qrels and runs, or prepared=fasteval.engine.prepare(qrels, runs)"
            raise ParameterError(msg)
        prepared = prepare_compact(qrels, runs, compat=compat)
    parts: list[var.Scorer] = []
    if adhoc:
        parts.append(var.AdhocScorer(adhoc, relevance_level=relevance_level, compat=compat))
    if ric:
        parts.append(RICScorer(prepared, relevance_level=relevance_level))
    if hist:
        parts.append(HSAScorer(prepared, names=hist, relevance_level=relevance_level))
    return parts[0] if len(parts) == 1 else CombinedScorer(parts)
