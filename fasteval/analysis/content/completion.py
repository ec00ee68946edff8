"""Content layer, label completion: unjudged pooled documents labelled by their LMs.

:func:`complete` predicts, per (query, subtopic), which unjudged documents of
the depth-K pool are relevant; :func:`completed_qrels` turns the predictions
into ordinary qrels; :func:`complete_qrels` does both from files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from fasteval.analysis.content.data import ContentData, ensure_depth, prepare_content
from fasteval.analysis.content.models import (
    GroundTruth,
    ResultModels,
    ground_truth,
    result_models,
    similarity,
)
from fasteval.analysis.variants import position_ranks
from fasteval.engine import QrelsLike, RunsLike
from fasteval.engine.encode import Encoded
from fasteval.kernels import content as kc


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


class PoolModels(NamedTuple):
    """The depth-K pool sorted by query, with one LM per pooled document."""

    query: np.ndarray  # int64 query index
    doc: np.ndarray  # int32 collection row
    jdx: np.ndarray  # int64 judgment index (-1: not in the qrels)
    off: np.ndarray  # int64: the pool of query q is off[q]:off[q+1]
    models: ResultModels  # model i: the LM of pooled document i


def pool_models(data: ContentData, depth: int) -> PoolModels:
    """The depth-``depth`` pool sorted by query, its offsets and its documents' LMs.

    Parameters
    ----------
    data
        The joined data; the result is kept in its ``cache`` (a study completes
        many qrels variants over the same pool).
    depth
        The pool depth K.

    Returns
    -------
    PoolModels
        The pooled (query, document) pairs, their judgment indices, the
        per-query offsets and the documents' LMs.
    """
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
    out = PoolModels(pq, pd, pj, p_off, models)
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
    pq, pd, pj, p_off, models = pool_models(data, depth)
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
    v = similarity(data, truth.models, u_of, models, idx, kc.JS, 0.0)
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
