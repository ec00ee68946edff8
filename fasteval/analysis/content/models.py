"""Content layer, models: the sparse language models of ground truths and results.

Ground-truth models theta_R (:func:`ground_truth`), result models theta_k of
ranked lists (:func:`result_models`, :func:`group_blocks`) and the similarity
of pairs of them (:func:`similarity`), all built by
:mod:`fasteval.kernels.content`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fasteval import parallel
from fasteval.analysis.content.data import ContentData, ensure_depth
from fasteval.engine.encode import Encoded
from fasteval.kernels import content as kc


@dataclass
class Models:
    """Sparse LMs: model ``u`` has terms ``term[off[u]:off[u]+n[u]]`` with probabilities ``p``."""

    off: np.ndarray
    n: np.ndarray
    term: np.ndarray
    p: np.ndarray
    plogp: np.ndarray  # p log2 p per entry


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
    parallel.run(kc.build_models, room.astype(np.float64) + 1.0, mix, data.kernel_docs(), out)
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
        data.kernel_docs(),
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
        data.kernel_docs(),
        kc.LMs(_ONE_I64, room, _ONE_I32, _ONE_F64, _ONE_F64),
        kc.Walks(kept, skipped),
    )
    return room


def similarity(
    data: ContentData,
    truth: Models,
    pair_unit: np.ndarray,
    res: ResultModels,
    pair_model: np.ndarray,
    kind: int,
    lam: float,
) -> np.ndarray:
    """Closeness of ground-truth model ``pair_unit[i]`` to result model ``pair_model[i]``.

    Parameters
    ----------
    data
        The joined data (its collection model theta_C).
    truth
        Ground-truth models (:attr:`GroundTruth.models`).
    pair_unit, pair_model
        Per pair: its ground-truth model in ``truth`` and its result model in ``res``.
    res
        Result models.
    kind
        :data:`fasteval.kernels.content.JS` (``1 - JS`` in bits) or
        :data:`~fasteval.kernels.content.KL` (``exp(-KL)`` against the result
        model smoothed by ``lam`` theta_C).
    lam
        The KL smoothing weight (unused by JS).

    Returns
    -------
    numpy.ndarray
        ``float64`` per pair, in the pairs' order (computed sorted by ground
        truth); NaN where the ground truth is empty.
    """
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


def group_blocks(data: ContentData, enc: Encoded, k: int) -> list[tuple[int, int, ResultModels]]:
    """Result models of ``enc``'s groups at depth ``k``: cached whole, or in contiguous blocks.

    Parameters
    ----------
    data
        The joined data; its ``cache`` keeps the models of rankings small
        enough (a study scores the same rankings under many qrels variants).
    enc
        The rankings (``data.enc`` or a variant sharing its positions).
    k
        The depth of the result models.

    Returns
    -------
    list of (int, int, ResultModels)
        ``(g0, g1, models)``: the models of groups ``g0..g1``, in group order;
        one block when the whole set is cached.
    """
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
