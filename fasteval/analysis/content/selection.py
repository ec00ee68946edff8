"""Content layer, representative judgments (Hui 5.2): which documents to judge.

:func:`select` judges the depth-k pool and then, while a known subtopic of a
query has no relevant judged document, the pooled document closest by content
to the query's judged ones; :func:`select_judgments` does it from files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis.content.data import ContentData, ensure_depth, prepare_content
from fasteval.analysis.content.models import (
    Models,
    ResultModels,
    build_models,
    result_models,
    similarity,
)
from fasteval.analysis.variants import position_ranks
from fasteval.engine import QrelsLike, RunsLike
from fasteval.errors import ParameterError
from fasteval.kernels import content as kc


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
    n_q = data.enc.qr_off.shape[0] - 1
    pq, pd, pr, pj = _candidate_pool(data, max_depth)
    rel_sub, known = _relevant_subtopics(data)
    pool20 = np.bincount(pq, minlength=n_q)
    q_off = np.searchsorted(pq, np.arange(n_q + 1))
    dist = _PoolDistances(data, pd)
    out_q: list[int] = []
    out_i: list[int] = []
    out_s: list[int] = []
    for q in range(n_q):
        a, b = int(q_off[q]), int(q_off[q + 1])
        if a == b:
            continue
        want = known.get(q, set())
        for i, step in _judge_query(dist, a, b, pr[a:b], pj[a:b], depth, rel_sub, want):
            out_q.append(q)
            out_i.append(a + i)
            out_s.append(step)
    at = np.array(out_i, np.int64)
    return Selection(
        np.array(out_q, np.int64),
        pd[at].astype(np.int32),
        pj[at].astype(np.int64),
        np.array(out_s, np.int64),
        pool20,
    )


def _candidate_pool(
    data: ContentData, max_depth: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The depth-``max_depth`` pool: per (query, document in the collection) its best rank.

    Returns the pairs sorted by query, then collection row: query, document,
    best rank and judgment index (``-1``: not in the qrels).
    """
    enc = data.enc
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
    return q_all[first], d_all[first], r_all[first], j_all[first]


def _relevant_subtopics(data: ContentData) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """Per judgment the subtopics it is relevant to; per query the subtopics known relevant."""
    rel_sub: dict[int, set[int]] = {}
    for j, s, g in zip(
        data.sub_j.tolist(), data.sub_s.tolist(), data.sub_rel.tolist(), strict=True
    ):
        if g >= data.relevance_level:
            rel_sub.setdefault(j, set()).add(s)
    known: dict[int, set[int]] = {}
    for j, subs in rel_sub.items():
        known.setdefault(int(data.jquery[j]), set()).update(subs)
    return rel_sub, known


def _judge_query(
    dist: _PoolDistances,
    a: int,
    b: int,
    ranks: np.ndarray,
    js: np.ndarray,
    depth: int,
    rel_sub: dict[int, set[int]],
    want: set[int],
) -> list[tuple[int, int]]:
    """The judgments of one query (pool documents ``a..b``) in order: ``(index in a..b, step)``.

    Step 0: the depth-``depth`` pool; then, while a subtopic of ``want`` has no
    relevant judged document and candidates remain, the candidate with the
    smallest mean JS divergence to the judged relevant documents (to every
    judged one while none is relevant), steps 1, 2, ...
    """
    judged = ranks <= depth
    picks = [(i, 0) for i in np.flatnonzero(judged).tolist()]
    found: set[int] = set()
    for i, _ in picks:
        found |= rel_sub.get(int(js[i]), set())
    step = 0
    cols: dict[int, np.ndarray] = {}  # JS of every pool document to pool document r
    while not want <= found and not judged.all():
        is_rel = np.array([bool(rel_sub.get(int(j), ())) for j in js]) & judged
        ref = np.flatnonzero(is_rel if is_rel.any() else judged)
        for r in ref.tolist():
            if r not in cols:
                cols[r] = dist.to(a, b, a + r)
        mean = np.mean([cols[r] for r in ref.tolist()], axis=0)
        mean[judged] = np.inf
        i = int(np.argmin(mean))
        judged[i] = True
        step += 1
        picks.append((i, step))
        found |= rel_sub.get(int(js[i]), set())
    return picks


class _PoolDistances:
    """JS divergences between pooled documents; their LMs are built when first needed."""

    def __init__(self, data: ContentData, docs: np.ndarray) -> None:
        self.data = data
        self.docs = docs
        self.models: tuple[Models, ResultModels] | None = None

    def to(self, a: int, b: int, r: int) -> np.ndarray:
        """JS divergence (bits) of each pool document ``a..b`` to pool document ``r``."""
        if self.models is None:
            self.models = _single_doc_models(self.data, self.docs)
        truth, res = self.models
        units = np.arange(a, b, dtype=np.int64)
        v = similarity(self.data, truth, units, res, np.full(b - a, r, np.int64), kc.JS, 0.0)
        return 1.0 - v


def _single_doc_models(data: ContentData, docs: np.ndarray) -> tuple[Models, ResultModels]:
    m_off = np.arange(docs.shape[0] + 1, dtype=np.int64)
    docs = np.ascontiguousarray(docs, np.int32)
    starts = np.arange(docs.shape[0], dtype=np.int64)
    return build_models(data, m_off, docs), result_models(data, starts, starts + 1, docs, 1)


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
