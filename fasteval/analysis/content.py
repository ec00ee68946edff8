"""Content-based evaluation (SPEC 9; Hui, PIKM'14): measures, label completion, judgment selection.

The layer between labels and measures: the documents judged relevant are
turned into a language model (LM), and a run is scored by how close the LM of
its top documents is to it (:mod:`fasteval.measures.content`). The same LMs
predict labels for unjudged documents (:func:`complete_qrels`) and choose
which documents to judge (:func:`select_judgments`).

Everything here works on :class:`ContentData`: qrels and runs prepared once
(:func:`fasteval.engine.prepare`: rankings in trec_eval order) and joined to
the collection's rows. A qrels variant (a keep-mask over the judgments, as in
the robustness studies) only changes which documents feed the ground-truth
models; the rankings are never re-read.

Queries whose ground truth is empty are NaN, left out of the means and
counted by reason in :class:`ContentReport`; ranked documents missing from the
collection are skipped (they do not use up the depth) and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from fasteval import parallel
from fasteval.analysis.variants import position_ranks
from fasteval.engine import Prepared, QrelsLike, RunsLike, prepare
from fasteval.engine.encode import Encoded
from fasteval.engine.table import long_table
from fasteval.errors import DataMismatchError, ParameterError
from fasteval.io.collection import Collection, read_collection
from fasteval.io.diversity import load_diversity_qrels
from fasteval.io.tables import load_qrels
from fasteval.kernels import content as kc
from fasteval.measures.content import ContentMeasure, parse_content_measures
from fasteval.parallel import gc_paused

REASON_NO_RELEVANT = "no relevant judgment"
REASON_NOT_IN_COLLECTION = "no relevant document with text in the collection"
NOT_LOOKED_UP = -2


# --------------------------------------------------------------------------- joined data


@dataclass
class ContentData:
    """Qrels, runs and collection joined once: the input of every content computation.

    Attributes
    ----------
    prep
        Prepared qrels and runs (ad-hoc view: a document's grade is its
        highest grade over the subtopics).
    coll
        The collection.
    pos_doc
        ``int32`` collection row of the document at every ranked position
        (``prep.enc.rel`` order), ``-1`` when it is not in the collection,
        ``-2`` where not looked up yet (see :func:`ensure_depth`).
    jdoc
        ``int32`` collection row of every judgment (``prep.enc.qr_rel`` order).
    sub_j, sub_s, sub_rel
        Subtopic judgments: judgment index, subtopic code and grade (ad-hoc
        qrels: one subtopic 0 with the judgment's grade).
    subtopic_names
        Label of every subtopic code.
    relevance_level
        A grade ``>= relevance_level`` is relevant.
    """

    prep: Prepared
    coll: Collection
    pos_doc: np.ndarray
    jdoc: np.ndarray
    sub_j: np.ndarray
    sub_s: np.ndarray
    sub_rel: np.ndarray
    subtopic_names: list[str]
    relevance_level: int = 1
    doc_len: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    coll_p: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    jquery: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    has_subtopics: bool = False
    # result models of rankings and pools, reused across qrels variants
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)
    # per evaluated group: how many leading positions have been looked up in the collection
    looked: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    depth_ready: int = 0

    @property
    def enc(self) -> Encoded:
        """The encoded rankings and judgments."""
        return self.prep.enc


def _read_qrels_frame(qrels: QrelsLike, diversity: bool) -> tuple[pl.DataFrame, bool]:
    """Qrels as ``query_id, doc_id, relevance[, subtopic]``."""
    if isinstance(qrels, pl.DataFrame):
        df = qrels
    elif diversity:
        df = load_diversity_qrels(qrels)
    else:
        df = load_qrels(qrels)
    has_sub = "subtopic" in df.columns
    return df, has_sub


def prepare_content(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    *,
    diversity: bool = False,
    relevance_level: int = 1,
    compat: int = 9,
    on_duplicate: str = "error",
    prepared: Prepared | None = None,
) -> ContentData:
    """Read qrels, runs and the collection once and join them (see :class:`ContentData`).

    Parameters
    ----------
    qrels
        Ad-hoc qrels, or diversity qrels (``query_id, subtopic, doc_id,
        relevance``) when ``diversity`` is true or the frame has ``subtopic``.
    runs
        As for :func:`fasteval.evaluate`.
    collection
        Anything :func:`fasteval.io.collection.read_collection` reads.
    prepared
        Reuse qrels and runs already prepared from the ad-hoc qrels.
    """
    coll = read_collection(collection)
    if prepared is None:
        qdf, has_sub = _read_qrels_frame(qrels, diversity)
        if has_sub:
            adhoc = qdf.group_by(["query_id", "doc_id"], maintain_order=True).agg(
                pl.col("relevance").max()
            )
        else:
            adhoc = qdf.select("query_id", "doc_id", "relevance")
        prep = prepare(adhoc, runs, compat=compat, on_duplicate=on_duplicate)
    else:
        prep, has_sub = prepared, False
        qdf = pl.DataFrame()
    enc = prep.enc
    # ranked documents are looked up in the collection lazily, as deep as a measure reads
    pos_doc = np.full(enc.rel.shape[0], NOT_LOOKED_UP, np.int32)
    jdoc = np.ascontiguousarray(coll.index_of(prep.qrels.doc.take(enc.qr_rows)), np.int32)
    n_j = enc.qr_rel.shape[0]
    if has_sub:
        # subtopic rows -> judgment index by (query, doc)
        jq = pl.Series(prep.qrels.qid.take(enc.qr_rows)).cast(pl.String)
        jd = pl.Series(prep.qrels.doc.take(enc.qr_rows)).cast(pl.String)
        jt = pl.DataFrame({"query_id": jq, "doc_id": jd, "j": np.arange(n_j, dtype=np.int64)})
        sub_lab = qdf["subtopic"].cast(pl.String)
        names = sub_lab.unique(maintain_order=True).to_list()
        code = {s: i for i, s in enumerate(names)}
        rows = qdf.with_columns(
            sub_lab.replace_strict(code, return_dtype=pl.Int32).alias("_s")
        ).join(jt, on=["query_id", "doc_id"], how="inner")
        sub_j = rows["j"].to_numpy().astype(np.int64)
        sub_s = rows["_s"].to_numpy().astype(np.int32)
        sub_rel = rows["relevance"].to_numpy().astype(np.int32)
    else:
        names = ["0"]
        sub_j = np.arange(n_j, dtype=np.int64)
        sub_s = np.zeros(n_j, np.int32)
        sub_rel = enc.qr_rel.astype(np.int32)
    return ContentData(
        prep=prep,
        coll=coll,
        pos_doc=pos_doc,
        jdoc=jdoc,
        sub_j=sub_j,
        sub_s=sub_s,
        sub_rel=sub_rel,
        subtopic_names=[str(x) for x in names],
        relevance_level=relevance_level,
        doc_len=coll.doc_len,
        coll_p=coll.collection_lm,
        jquery=np.repeat(np.arange(enc.qr_off.shape[0] - 1), np.diff(enc.qr_off)),
        has_subtopics=has_sub,
        looked=np.zeros(enc.starts.shape[0], np.int64),
    )


def _lookup(data: ContentData, positions: np.ndarray) -> None:
    if positions.shape[0]:
        docs = data.prep.runs.doc.take(data.enc.row[positions])
        data.pos_doc[positions] = data.coll.index_of(docs)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    lens = ends - starts
    total = int(lens.sum())
    out: np.ndarray = np.repeat(starts, lens) + (
        np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    )
    return out


def ensure_depth(data: ContentData, depth: int) -> None:
    """Look up ranked documents in the collection as deep as a depth-``depth`` reader needs.

    Every evaluated ranking gets at least its first ``depth`` positions; one
    whose looked-up prefix holds fewer than ``depth`` documents present in
    the collection with a token (skipped ones do not use up the depth) is
    extended until it does or the ranking ends.
    """
    if depth <= data.depth_ready:
        return
    enc = data.enc
    lens = (enc.ends - enc.starts).astype(np.int64)
    target = np.minimum(lens, depth)
    grow = target > data.looked
    _lookup(data, _ranges(enc.starts[grow] + data.looked[grow], enc.starts[grow] + target[grow]))
    data.looked = np.maximum(data.looked, target)
    while True:
        d = data.pos_doc
        usable = (d >= 0) & (data.doc_len[np.maximum(d, 0)] > 0)
        cs = np.concatenate([[0], np.cumsum(usable, dtype=np.int64)])
        have = cs[enc.starts + data.looked] - cs[enc.starts]
        short = (have < depth) & (data.looked < lens)
        if not short.any():
            break
        new = np.minimum(lens, 2 * data.looked + depth)
        _lookup(
            data, _ranges(enc.starts[short] + data.looked[short], enc.starts[short] + new[short])
        )
        data.looked = np.where(short, new, data.looked)
    data.depth_ready = depth


# --------------------------------------------------------------------------- models


@dataclass
class Models:
    """Sparse LMs: model ``u`` has terms ``term[off[u]:off[u]+n[u]]`` with probabilities ``p``."""

    off: np.ndarray
    n: np.ndarray
    term: np.ndarray
    p: np.ndarray
    plogp: np.ndarray  # p log2 p per entry


def _docs(data: ContentData) -> kc.Docs:
    """The collection as the kernels take it (its CSR arrays read-only, see Collection)."""
    coll = data.coll
    return kc.Docs(coll.doc_off, coll.terms, coll.counts, data.doc_len, data.coll_p)


def build_models(data: ContentData, m_off: np.ndarray, m_docs: np.ndarray) -> Models:
    """LMs of document concatenations: model ``u`` is documents ``m_docs[m_off[u]:m_off[u+1]]``.

    One empty model is appended (index ``len(m_off) - 1``) for "no ground truth".
    """
    coll = data.coll
    n_models = m_off.shape[0] - 1
    m_off = np.concatenate([m_off, m_off[-1:]]).astype(np.int64)  # + the empty model
    nnz = (coll.doc_off[m_docs + 1] - coll.doc_off[m_docs]).astype(np.int64)
    cum = np.concatenate([[0], np.cumsum(nnz)])
    room = cum[m_off[1:]] - cum[m_off[:-1]]
    off = np.concatenate([[0], np.cumsum(room)]).astype(np.int64)
    # only the first n[u] entries of a model's room are written (and ever read)
    term = np.empty(max(int(off[-1]), 1), np.int32)
    p = np.empty(max(int(off[-1]), 1), np.float64)
    plogp = np.empty(max(int(off[-1]), 1), np.float64)
    n = np.zeros(n_models + 1, np.int64)
    mix = kc.Mixtures(
        m_off, np.ascontiguousarray(m_docs, np.int32), np.ones(m_docs.shape[0], np.float64)
    )
    out = kc.LMs(off, n, term, p, plogp)
    parallel.run(kc.build_models, room.astype(np.float64) + 1.0, mix, _docs(data), out)
    return Models(off[:-1].copy(), n, term, p, plogp)


@dataclass
class GroundTruth:
    """Ground-truth models of one qrels variant: per query, its units (subtopics) ``q_off``."""

    models: Models
    unit_query: np.ndarray  # query index per unit
    unit_sub: np.ndarray  # subtopic code per unit
    q_off: np.ndarray  # units of query q: q_off[q]:q_off[q+1]
    n_rel: np.ndarray  # per query: relevant judgments (any subtopic) kept
    n_rel_in: np.ndarray  # per query: of which in the collection with text

    @property
    def empty_unit(self) -> int:
        """Index of the appended empty model."""
        return int(self.unit_query.shape[0])


def ground_truth(
    data: ContentData, keep: np.ndarray | None = None, *, intent_aware: bool = False
) -> GroundTruth:
    """theta_R per query (or per (query, subtopic) when ``intent_aware``) from the kept judgments.

    R is the relevant judged documents (grade ``>= relevance_level``) present
    in the collection with at least one token.
    """
    enc = data.enc
    n_q = enc.qr_off.shape[0] - 1
    j = data.sub_j
    ok = data.sub_rel >= data.relevance_level
    if keep is not None:
        ok &= keep[j]
    if not intent_aware:
        # a document relevant to any subtopic, once
        jj = np.unique(j[ok])
        sub = np.zeros(jj.shape[0], np.int32)
    else:
        jj = j[ok]
        sub = data.sub_s[ok]
    q = data.jquery[jj]
    n_rel = (
        np.bincount(q, minlength=n_q)
        if not intent_aware
        else np.bincount(data.jquery[np.unique(jj)], minlength=n_q)
    )
    d = data.jdoc[jj]
    usable = d >= 0
    usable[usable] = data.doc_len[d[usable]] > 0
    jj, sub, q, d = jj[usable], sub[usable], q[usable], d[usable]
    n_rel_in = (
        np.bincount(q, minlength=n_q)
        if not intent_aware
        else np.bincount(data.jquery[np.unique(jj)], minlength=n_q)
    )
    order = np.lexsort((d, sub, q))
    q, sub, d = q[order], sub[order], d[order]
    key = q.astype(np.int64) * (int(sub.max(initial=0)) + 1) + sub
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if key.size else key
    m_off = np.concatenate([starts, [key.shape[0]]]).astype(np.int64)
    unit_query = q[starts].astype(np.int64)
    unit_sub = sub[starts].astype(np.int32)
    q_off = np.searchsorted(unit_query, np.arange(n_q + 1), side="left").astype(np.int64)
    models = build_models(data, m_off, d.astype(np.int32))
    return GroundTruth(models, unit_query, unit_sub, q_off, n_rel, n_rel_in)


@dataclass
class ResultModels:
    """Result LMs theta_k of ranked lists (sparse, as :class:`Models`) and their walks."""

    off: np.ndarray
    n: np.ndarray
    term: np.ndarray
    q: np.ndarray
    qlogq: np.ndarray
    kept: np.ndarray  # documents kept (<= k)
    skipped: np.ndarray  # documents skipped before the k-th kept one


_ONE_I64 = np.zeros(1, np.int64)
_ONE_I32 = np.zeros(1, np.int32)
_ONE_F64 = np.zeros(1, np.float64)


def result_models(
    data: ContentData,
    starts: np.ndarray,
    ends: np.ndarray,
    lst: np.ndarray,
    k: int,
    room: np.ndarray | None = None,
) -> ResultModels:
    """theta_k of every list ``lst[starts[g]:ends[g]]`` (collection rows, ``-1`` = missing).

    ``room`` (from :func:`_room`) saves the counting pass.
    """
    n = starts.shape[0]
    starts = np.ascontiguousarray(starts, np.int64)
    ends = np.ascontiguousarray(ends, np.int64)
    lst = np.ascontiguousarray(lst, np.int32)
    if room is None:
        room = _room(data, starts, ends, lst, k)
    kept = np.zeros(n, np.int64)
    skipped = np.zeros(n, np.int64)
    off = np.concatenate([[0], np.cumsum(room)[:-1]]).astype(np.int64)
    total = max(int(room.sum()), 1)
    term = np.zeros(total, np.int32)
    q = np.zeros(total, np.float64)
    qlogq = np.zeros(total, np.float64)
    nn = np.zeros(n, np.int64)
    parallel.run(
        kc.result_models,
        room.astype(np.float64) + 1.0,
        kc.Lists(starts, ends, lst),
        int(k),
        False,
        _docs(data),
        kc.LMs(off, nn, term, q, qlogq),
        kc.Walks(kept, skipped),
    )
    return ResultModels(off, nn, term, q, qlogq, kept, skipped)


def _room(
    data: ContentData, starts: np.ndarray, ends: np.ndarray, lst: np.ndarray, k: int
) -> np.ndarray:
    """Upper bound of each result model's size: distinct terms summed over its kept documents."""
    n = starts.shape[0]
    starts = np.ascontiguousarray(starts, np.int64)
    ends = np.ascontiguousarray(ends, np.int64)
    lst = np.ascontiguousarray(lst, np.int32)
    room = np.zeros(n, np.int64)
    kept = np.zeros(n, np.int64)
    skipped = np.zeros(n, np.int64)
    work = np.minimum(ends - starts, k).astype(np.float64) + 1.0
    parallel.run(
        kc.result_models,
        work,
        kc.Lists(starts, ends, lst),
        int(k),
        True,
        _docs(data),
        kc.LMs(_ONE_I64, room, _ONE_I32, _ONE_F64, _ONE_F64),
        kc.Walks(kept, skipped),
    )
    return room


def _similarity(
    data: ContentData,
    truth: Models,
    pair_unit: np.ndarray,
    res: ResultModels,
    pair_model: np.ndarray,
    kind: int,
    lam: float,
) -> np.ndarray:
    """Similarity kernel over pairs (sorted by ground truth internally)."""
    n = pair_unit.shape[0]
    order = np.argsort(pair_unit, kind="stable")
    pu = np.ascontiguousarray(pair_unit[order], np.int64)
    pm = np.ascontiguousarray(pair_model[order], np.int64)
    val = np.empty(n, np.float64)
    work = res.n[pm].astype(np.float64) + 1.0
    parallel.run(
        kc.similarity,
        work,
        pu,
        pm,
        int(kind),
        float(lam),
        kc.LMs(truth.off, truth.n, truth.term, truth.p, truth.plogp),
        kc.LMs(res.off, res.n, res.term, res.q, res.qlogq),
        data.coll_p,
        val,
    )
    out = np.empty(n, np.float64)
    out[order] = val
    return out


_CACHE_ENTRIES = 20_000_000  # result-model entries kept between calls (a study's rankings)
_BLOCK_ENTRIES = 4_000_000  # otherwise, groups are modelled and scored in blocks of this size


def _group_blocks(data: ContentData, enc: Encoded, k: int) -> list[tuple[int, int, ResultModels]]:
    """Result models of ``enc``'s groups at depth ``k``: cached whole, or in contiguous blocks."""
    ensure_depth(data, k)
    key = (id(enc), k)
    hit = data.cache.get(key)
    if hit is not None and hit[0] is enc:
        return [(0, enc.starts.shape[0], hit[1])]
    n_g = enc.starts.shape[0]
    room = _room(data, enc.starts, enc.ends, data.pos_doc, k)  # sizes first (cheap)
    if int(room.sum()) <= _CACHE_ENTRIES:
        rm = result_models(data, enc.starts, enc.ends, data.pos_doc, k, room)
        data.cache[key] = (enc, rm)
        return [(0, n_g, rm)]
    out = []
    cum = np.cumsum(room)
    g0 = 0
    while g0 < n_g:
        base = cum[g0 - 1] if g0 else 0
        g1 = max(int(np.searchsorted(cum, base + _BLOCK_ENTRIES, side="right")), g0 + 1)
        rm = result_models(data, enc.starts[g0:g1], enc.ends[g0:g1], data.pos_doc, k, room[g0:g1])
        out.append((g0, g1, rm))
        g0 = g1
    return out


# --------------------------------------------------------------------------- measures


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
        _docs(data),
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
        for g0, g1, rm in _group_blocks(data, enc, m.k):
            a_, b_ = np.searchsorted(p_group, [g0, g1])
            v[a_:b_] = _similarity(
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


# --------------------------------------------------------------------------- label completion


@dataclass
class Pool:
    """The depth-``depth`` pool of every query: distinct documents in the collection."""

    query: np.ndarray  # int64 query index
    doc: np.ndarray  # int32 collection row
    jdx: np.ndarray  # int64 judgment index (-1: not in the qrels)


def pool(data: ContentData, depth: int, enc: Encoded | None = None) -> Pool:
    """Distinct (query, document) pairs some run ranks in its top ``depth`` (in the collection)."""
    enc = enc if enc is not None else data.enc
    ensure_depth(data, depth)
    pos, rank, _ = position_ranks(enc)
    sel = pos[rank <= depth]
    d = data.pos_doc[sel].astype(np.int64)
    q = np.repeat(enc.group_q.astype(np.int64), enc.ends - enc.starts)[rank <= depth]
    j = data.enc.jdx[sel]
    ok = d >= 0
    q, d, j = q[ok], d[ok], j[ok]
    key = q * (len(data.coll) + 1) + d
    _, first = np.unique(key, return_index=True)
    return Pool(q[first], d[first].astype(np.int32), j[first])


@dataclass
class Completion:
    """Predicted labels: per (query, subtopic) unit its threshold, per prediction its document."""

    unit_query: np.ndarray
    unit_sub: np.ndarray
    threshold: np.ndarray  # t_qs (inf: no prediction)
    pred_query: np.ndarray  # int64 query index
    pred_sub: np.ndarray  # int32 subtopic code
    pred_doc: np.ndarray  # int32 collection row
    pred_score: np.ndarray  # 1 - JS of the document to theta_R
    n_candidates: int


def f1_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The t maximising F1 of ``score >= t`` on judged documents (ties: the larger t).

    Candidates are the judged scores and ``inf`` (predict nothing, F1 0), so a
    pool without a relevant judged document predicts nothing.
    """
    n = scores.shape[0]
    return float(_thresholds(np.zeros(n, np.int64), scores, labels, 1)[0])


def _thresholds(unit: np.ndarray, score: np.ndarray, label: np.ndarray, n_units: int) -> np.ndarray:
    """:func:`f1_threshold` of every unit at once (``unit`` gives each judged pair's unit)."""
    out = np.full(n_units, math.inf)
    if unit.shape[0] == 0:
        return out
    o = np.lexsort((-score, unit))
    u, s, y = unit[o], score[o], label[o].astype(np.int64)
    start = np.flatnonzero(np.concatenate([[True], u[1:] != u[:-1]]))
    seg = np.repeat(np.arange(start.shape[0]), np.diff(np.append(start, u.shape[0])))
    cy = np.cumsum(y)
    tp = cy - (cy[start] - y[start])[seg]
    n = np.arange(u.shape[0]) - start[seg] + 1
    pos = np.bincount(u, weights=y, minlength=n_units)[u]
    # F1 of "score >= t" at each distinct t: the last row of each run of equal scores
    last = np.append((u[1:] != u[:-1]) | (s[1:] != s[:-1]), True)
    u2, s2, tp2, n2, pos2 = u[last], s[last], tp[last], n[last], pos[last]
    f1 = np.where(pos2 > 0, 2.0 * tp2 / (n2 + np.maximum(pos2, 1)), 0.0)
    o2 = np.lexsort((-s2, -f1, u2))  # per unit: best F1 first, then the larger t
    first = np.concatenate([[True], u2[o2][1:] != u2[o2][:-1]])
    best = o2[first]
    ok = f1[best] > 0
    out[u2[best][ok]] = s2[best][ok]
    return out


def _pool_models(
    data: ContentData, depth: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, ResultModels]:
    """The depth-``depth`` pool sorted by query, its offsets and its documents' LMs (cached)."""
    key = ("pool", depth)
    hit = data.cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    p = pool(data, depth)
    order = np.argsort(p.query, kind="stable")
    pq, pd, pj = p.query[order], p.doc[order], p.jdx[order]
    n_q = data.enc.qr_off.shape[0] - 1
    p_off = np.searchsorted(pq, np.arange(n_q + 1), side="left").astype(np.int64)
    starts = np.arange(pd.shape[0], dtype=np.int64)
    models = result_models(data, starts, starts + 1, pd, 1)
    out = (pq, pd, pj, p_off, models)
    data.cache[key] = out
    return out


def complete(
    data: ContentData,
    keep: np.ndarray | None = None,
    *,
    depth: int = 20,
    intent_aware: bool | None = None,
    truth: GroundTruth | None = None,
) -> Completion:
    """Label completion (SPEC 9): predict relevance of unjudged pooled documents per (q, s).

    A document some run ranks in its top ``depth`` that the (kept) qrels do
    not judge is predicted relevant to (q, s) when ``1 - JS(theta_d,
    theta_{R_qs}) >= t_qs``; ``t_qs`` maximises F1 of the same rule on the
    judged documents of that pool (ties: the larger t). ``truth`` reuses
    ground-truth models already built from the same ``keep``.
    """
    ia = data.has_subtopics if intent_aware is None else intent_aware
    if truth is None:
        truth = ground_truth(data, keep, intent_aware=ia)
    pq, pd, pj, p_off, models = _pool_models(data, depth)
    pjud = pj >= 0
    if keep is not None:
        pjud[pjud] = keep[pj[pjud]]
    # pairs: every unit x every pool doc of its query
    n_units = truth.unit_query.shape[0]
    cnt = p_off[truth.unit_query + 1] - p_off[truth.unit_query]
    u_of = np.repeat(np.arange(n_units), cnt)
    idx = np.repeat(p_off[truth.unit_query], cnt) + (
        np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    )
    v = _similarity(data, truth.models, u_of, models, idx, kc.JS, 0.0)
    kept = models.kept[idx]
    # labels of judged pool docs for the unit's subtopic
    lab = np.zeros(idx.shape[0], bool)
    jd = pj[idx]
    isj = pjud[idx]
    if isj.any():
        # grade of judgment j for subtopic s
        key_j = data.sub_j.astype(np.int64) * (int(data.sub_s.max(initial=0)) + 1) + data.sub_s
        sk = np.argsort(key_j)
        want = jd[isj] * (int(data.sub_s.max(initial=0)) + 1) + truth.unit_sub[u_of[isj]]
        at = np.searchsorted(key_j[sk], want)
        at = np.minimum(at, key_j.shape[0] - 1)
        hit = key_j[sk][at] == want
        g = np.where(hit, data.sub_rel[sk][at], 0)
        lab[np.flatnonzero(isj)] = g >= data.relevance_level
    valid = kept > 0
    m = isj & valid
    thresholds = _thresholds(u_of[m], v[m], lab[m], n_units)
    pred = ~isj & valid & (v >= thresholds[u_of])
    return Completion(
        unit_query=truth.unit_query,
        unit_sub=truth.unit_sub,
        threshold=thresholds,
        pred_query=pq[idx][pred],
        pred_sub=truth.unit_sub[u_of[pred]],
        pred_doc=pd[idx][pred],
        pred_score=v[pred],
        n_candidates=int((~isj).sum()),
    )


def completed_qrels(
    data: ContentData, comp: Completion, keep: np.ndarray | None = None
) -> pl.DataFrame:
    """The completed qrels: every kept real judgment plus the predictions (grade = relevance level).

    Ad-hoc data gives ``query_id, doc_id, relevance``; diversity data adds ``subtopic``.
    A document predicted relevant to several subtopics gets one row per subtopic.
    """
    enc = data.enc
    prep = data.prep
    rows = np.flatnonzero(keep) if keep is not None else np.arange(enc.qr_rel.shape[0])
    pred_q = pl.Series([enc.qids[i] for i in comp.pred_query.tolist()], dtype=pl.String)
    pred_d = pl.Series(data.coll.doc_ids.take(pa.array(comp.pred_doc))).cast(pl.String)
    level = max(1, data.relevance_level)
    if not data.has_subtopics:
        real = pl.DataFrame(
            {
                "query_id": pl.Series(prep.qrels.qid.take(enc.qr_rows[rows])).cast(pl.String),
                "doc_id": pl.Series(prep.qrels.doc.take(enc.qr_rows[rows])).cast(pl.String),
                "relevance": enc.qr_rel[rows].astype(np.int32),
            }
        )
        new = pl.DataFrame(
            {
                "query_id": pred_q,
                "doc_id": pred_d,
                "relevance": np.full(len(pred_q), level, np.int32),
            }
        ).unique(["query_id", "doc_id"], maintain_order=True)
        return pl.concat([real, new])
    kept_sub = np.isin(data.sub_j, rows) if keep is not None else np.ones(data.sub_j.shape[0], bool)
    sj = data.sub_j[kept_sub]
    real = pl.DataFrame(
        {
            "query_id": pl.Series(prep.qrels.qid.take(enc.qr_rows[sj])).cast(pl.String),
            "subtopic": pl.Series(
                [data.subtopic_names[s] for s in data.sub_s[kept_sub].tolist()], dtype=pl.String
            ),
            "doc_id": pl.Series(prep.qrels.doc.take(enc.qr_rows[sj])).cast(pl.String),
            "relevance": data.sub_rel[kept_sub].astype(np.int32),
        }
    )
    new = pl.DataFrame(
        {
            "query_id": pred_q,
            "subtopic": pl.Series(
                [data.subtopic_names[s] for s in comp.pred_sub.tolist()], dtype=pl.String
            ),
            "doc_id": pred_d,
            "relevance": np.full(len(pred_q), level, np.int32),
        }
    )
    return pl.concat([real, new])


def complete_qrels(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    *,
    depth: int = 20,
    diversity: bool = False,
    relevance_level: int = 1,
    compat: int = 9,
) -> pl.DataFrame:
    """Qrels completed by content (SPEC 9 "label completion"), as an ordinary qrels table.

    Parameters
    ----------
    qrels, runs, collection
        As for :func:`content_evaluate` (diversity qrels when ``diversity``).
    depth
        Pool depth K: candidates are the documents some run ranks in its top K.
    """
    data = prepare_content(
        qrels, runs, collection, diversity=diversity, relevance_level=relevance_level, compat=compat
    )
    return completed_qrels(data, complete(data, depth=depth))


# ------------------------------------------------------------------ representative judgments


@dataclass
class Selection:
    """Judgments chosen per query by :func:`select`, in the order they were made."""

    query: np.ndarray  # query index per chosen judgment
    doc: np.ndarray  # collection row
    jdx: np.ndarray  # judgment index in the qrels (-1: not in the qrels, taken as non-relevant)
    step: np.ndarray  # 0: from the depth-k pool; 1, 2...: chosen by content, in order
    pool20: np.ndarray  # per query: size of the depth-20 pool (documents in the collection)


def select(data: ContentData, *, depth: int = 3, max_depth: int = 20) -> Selection:
    """Representative judgments (Hui 5.2, SPEC 9).

    Judge the depth-``depth`` pool; then, while a known subtopic of a query has
    no relevant judged document and candidates of the depth-``max_depth`` pool
    remain, judge next the candidate with the smallest mean JS divergence to
    the query's judged relevant documents (to all judged documents while none
    is relevant). Ties: the smaller collection row. The qrels are the oracle;
    a pooled document the qrels do not judge counts as judged non-relevant.
    """
    if not 1 <= depth <= max_depth:
        msg = f"need 1 <= depth <= max_depth, got depth={depth}, max_depth={max_depth}"
        raise ParameterError(msg)
    enc = data.enc
    n_q = enc.qr_off.shape[0] - 1
    ensure_depth(data, max_depth)
    pos, rank, _ = position_ranks(enc)
    gq = np.repeat(enc.group_q.astype(np.int64), enc.ends - enc.starts)
    ok = (data.pos_doc[pos] >= 0) & (rank <= max_depth)
    q_all, d_all, r_all, j_all = gq[ok], data.pos_doc[pos][ok], rank[ok], enc.jdx[pos][ok]
    inpool = r_all <= max_depth
    q_all, d_all, r_all, j_all = q_all[inpool], d_all[inpool], r_all[inpool], j_all[inpool]
    # per (query, doc): best rank and judgment
    key = q_all * (len(data.coll) + 1) + d_all
    order = np.lexsort((r_all, key))
    key, q_all, d_all, r_all, j_all = (
        key[order],
        q_all[order],
        d_all[order],
        r_all[order],
        j_all[order],
    )
    first = np.concatenate([[True], key[1:] != key[:-1]]) if key.size else np.zeros(0, bool)
    pq, pd, pr, pj = q_all[first], d_all[first], r_all[first], j_all[first]
    # subtopic relevance of each judgment
    rel_sub: dict[int, set[int]] = {}
    for j, s, g in zip(
        data.sub_j.tolist(), data.sub_s.tolist(), data.sub_rel.tolist(), strict=True
    ):
        if g >= data.relevance_level:
            rel_sub.setdefault(j, set()).add(s)
    known: dict[int, set[int]] = {}
    for j, subs in rel_sub.items():
        known.setdefault(int(data.jquery[j]), set()).update(subs)
    out_q: list[int] = []
    out_d: list[int] = []
    out_j: list[int] = []
    out_s: list[int] = []
    pool20 = np.bincount(pq, minlength=n_q)
    q_off = np.searchsorted(pq, np.arange(n_q + 1))
    doc_models: tuple[Models, ResultModels] | None = None  # built when first needed
    for q in range(n_q):
        a, b = int(q_off[q]), int(q_off[q + 1])
        if a == b:
            continue
        docs, ranks, js = pd[a:b], pr[a:b], pj[a:b]
        judged = ranks <= depth
        found: set[int] = set()
        for i in np.flatnonzero(judged).tolist():
            out_q.append(q)
            out_d.append(int(docs[i]))
            out_j.append(int(js[i]))
            out_s.append(0)
            found |= rel_sub.get(int(js[i]), set())
        want = known.get(q, set())
        step = 0
        cols: dict[int, np.ndarray] = {}  # JS of every pool document to pool document r
        while not want <= found and not judged.all():
            is_rel = np.array([bool(rel_sub.get(int(j), ())) for j in js]) & judged
            ref = np.flatnonzero(is_rel if is_rel.any() else judged)
            for r in ref.tolist():
                if r not in cols:
                    if doc_models is None:
                        doc_models = _single_doc_models(data, pd)
                    cols[r] = _js_to(data, doc_models, a, b, a + r)
            mean = np.mean([cols[r] for r in ref.tolist()], axis=0)
            mean[judged] = np.inf
            i = int(np.argmin(mean))
            judged[i] = True
            step += 1
            out_q.append(q)
            out_d.append(int(docs[i]))
            out_j.append(int(js[i]))
            out_s.append(step)
            found |= rel_sub.get(int(js[i]), set())
    return Selection(
        np.array(out_q, np.int64),
        np.array(out_d, np.int32),
        np.array(out_j, np.int64),
        np.array(out_s, np.int64),
        pool20,
    )


def _single_doc_models(data: ContentData, docs: np.ndarray) -> tuple[Models, ResultModels]:
    m_off = np.arange(docs.shape[0] + 1, dtype=np.int64)
    docs = np.ascontiguousarray(docs, np.int32)
    starts = np.arange(docs.shape[0], dtype=np.int64)
    return build_models(data, m_off, docs), result_models(data, starts, starts + 1, docs, 1)


def _js_to(
    data: ContentData, models: tuple[Models, ResultModels], a: int, b: int, r: int
) -> np.ndarray:
    """JS divergence (bits) of each pool document ``a..b`` to pool document ``r``."""
    units = np.arange(a, b, dtype=np.int64)
    v = _similarity(data, models[0], units, models[1], np.full(b - a, r, np.int64), kc.JS, 0.0)
    return 1.0 - v


def select_judgments(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    *,
    depth: int = 3,
    max_depth: int = 20,
    diversity: bool = False,
    relevance_level: int = 1,
    compat: int = 9,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Representative judgments (SPEC 9): the qrels rows used, and per query the counts.

    Returns
    -------
    (qrels, summary)
        ``qrels``: the judgments made (only those the qrels hold; rows keep
        their grades, and their subtopics for diversity qrels);
        ``summary``: per query ``judged`` (documents judged), ``by_content``
        (of which chosen by content), ``pool20`` (depth-``max_depth`` pool size).
    """
    data = prepare_content(
        qrels, runs, collection, diversity=diversity, relevance_level=relevance_level, compat=compat
    )
    sel = select(data, depth=depth, max_depth=max_depth)
    enc = data.enc
    prep = data.prep
    has = sel.jdx >= 0
    sj = sel.jdx[has]
    if data.has_subtopics:
        m = np.isin(data.sub_j, sj)
        jj = data.sub_j[m]
        out = pl.DataFrame(
            {
                "query_id": pl.Series(prep.qrels.qid.take(enc.qr_rows[jj])).cast(pl.String),
                "subtopic": pl.Series(
                    [data.subtopic_names[s] for s in data.sub_s[m].tolist()], dtype=pl.String
                ),
                "doc_id": pl.Series(prep.qrels.doc.take(enc.qr_rows[jj])).cast(pl.String),
                "relevance": data.sub_rel[m].astype(np.int32),
            }
        )
    else:
        out = pl.DataFrame(
            {
                "query_id": pl.Series(prep.qrels.qid.take(enc.qr_rows[sj])).cast(pl.String),
                "doc_id": pl.Series(prep.qrels.doc.take(enc.qr_rows[sj])).cast(pl.String),
                "relevance": enc.qr_rel[sj].astype(np.int32),
            }
        )
    n_q = enc.qr_off.shape[0] - 1
    judged = np.bincount(sel.query, minlength=n_q)
    by_content = np.bincount(sel.query[sel.step > 0], minlength=n_q)
    qs = np.flatnonzero(sel.pool20 > 0)
    summary = pl.DataFrame(
        {
            "query_id": [enc.qids[i] for i in qs.tolist()],
            "judged": judged[qs].astype(np.int64),
            "by_content": by_content[qs].astype(np.int64),
            "pool20": sel.pool20[qs].astype(np.int64),
        }
    )
    return out, summary
