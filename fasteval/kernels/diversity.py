"""Novelty and diversity kernels: ndeval 4.5's measures over (run, query) groups.

Data (built in ``fasteval.engine.diversity``): query ``q`` has ``m_q[q]`` subtopics
with a relevant document, in ascending order (ndeval's summation order), and
relevant entries ``qd_off[q]..qd_off[q+1]`` sorted by docno; entry ``e`` has the
subtopics ``rd_sub[rd_off[e]:rd_off[e+1]]``; ranked position ``p`` holds ``seq[p]``,
its entry or -1. Measure codes: 0 ERR-IA, 1 nERR-IA, 2 alpha-DCG, 3 alpha-nDCG,
4 NRBP, 5 nNRBP, 6 MAP-IA, 7 P-IA, 8 strec.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fasteval.kernels.jit import njit


class Subtopics(NamedTuple):
    """The judged side: each relevant entry's subtopics and each query's subtopics."""

    rd_off: np.ndarray  # int64: entry e's subtopics are rd_sub[rd_off[e]:rd_off[e + 1]]
    rd_sub: np.ndarray  # int64
    m_q: np.ndarray  # int64 subtopics of query q
    sub_off: np.ndarray  # int64: query q's subtopic j is nrel[sub_off[q] + j]
    nrel: np.ndarray  # int64 relevant documents per subtopic


class Params(NamedTuple):
    """ndeval's parameters and the rank discounts ``disc[i] = 1 / log2(i + 2)``."""

    alpha: float
    beta: float
    disc: np.ndarray


class Ideal(NamedTuple):
    """Per query: the ideal ranking's cumulative DCG and ERR (depth K) and its NRBP."""

    idcg: np.ndarray  # (n_q, K)
    ierr: np.ndarray  # (n_q, K)
    inrbp: np.ndarray  # (n_q,)


class Rankings(NamedTuple):
    """(run, query) groups: positions ``start[g]:end[g]`` of ``seq``, query ``q[g]``."""

    start: np.ndarray  # int64
    end: np.ndarray  # int64
    seq: np.ndarray  # int64 relevant entry at each position, -1 for none
    q: np.ndarray  # int32
    max_depth: int  # -1: none


class Plan(NamedTuple):
    """Columns: measure ``code[c]`` at cutoff ``k[c]``."""

    code: np.ndarray  # int64
    k: np.ndarray  # int64


class PerSubtopic(NamedTuple):
    """Per (group, subtopic) outputs (empty arrays: not asked for)."""

    off: np.ndarray  # int64: group g's subtopic j is slot off[g] + j
    first: np.ndarray  # int64 rank of the first relevant document (0: none)
    hits: np.ndarray  # int64 relevant documents within ``depth``
    ap: np.ndarray  # float64 average precision
    depth: int


class _Scratch(NamedTuple):
    gains: np.ndarray
    counts: np.ndarray
    totals: np.ndarray
    seen: np.ndarray
    prec: np.ndarray
    strec: np.ndarray


@njit(cache=True, nogil=True)
def _scratch(mmax, k):  # pragma: no cover - numba
    """Work arrays for :func:`_score`: ``mmax`` subtopics, depth ``k``."""
    return _Scratch(
        np.empty(mmax, np.float64),
        np.empty(mmax, np.int64),
        np.empty(mmax, np.float64),
        np.empty(mmax, np.bool_),
        np.empty(k, np.float64),
        np.empty(k, np.float64),
    )


@njit(cache=True, nogil=True)
def _score(seq, lo, n, sub, m, par, tmp, dcg, err):  # pragma: no cover - numba
    """ndeval's per-ranking quantities in one pass over ``seq[lo:lo+n]``: ``dcg``/``err``
    (cumulative, over the "ideal ideal" from rank 2 on), ``prec``, ``strec``, and per
    subtopic ``totals``; returns NRBP before the ideal's normalisation."""
    rd_off, rd_sub = sub.rd_off, sub.rd_sub
    alpha, beta, disc = par
    gains, counts, totals, seen, prec, strec = tmp
    k = dcg.shape[0]
    for j in range(m):
        gains[j] = 1.0
        counts[j] = 0
        totals[j] = 0.0
        seen[j] = False
    for i in range(k):
        dcg[i] = 0.0
        err[i] = 0.0
        prec[i] = 0.0
        strec[i] = 0.0
    if m == 0:
        return 0.0
    keep = 1.0 - alpha
    nrbp = 0.0
    decay = 1.0
    pcount = 0
    scount = 0
    for i in range(n):
        e = seq[lo + i]
        score = 0.0
        if e >= 0:
            for t in range(rd_off[e], rd_off[e + 1]):
                j = rd_sub[t]
                score += gains[j]
                gains[j] *= keep
                counts[j] += 1
                totals[j] += counts[j] / (i + 1.0)
                if i < k:
                    pcount += 1
                    if not seen[j]:
                        seen[j] = True
                        scount += 1
        nrbp += score * decay
        decay *= beta
        if i < k:
            dcg[i] = score * disc[i]
            err[i] = score / (i + 1.0)
            prec[i] = pcount / float((i + 1) * m)
            strec[i] = scount / float(m)
    for i in range(n, k):
        prec[i] = pcount / float((i + 1) * m)
        strec[i] = scount / float(m)
    for i in range(1, k):
        dcg[i] += dcg[i - 1]
        err[i] += err[i - 1]
    # "ideal ideal" normalisation (every subtopic covered at every rank), summed
    # term by term like ndeval's arrays; ndeval divides from the second rank on
    ii_gain = float(m)
    ii_dcg = ii_gain * disc[0]
    ii_err = ii_gain
    for i in range(1, k):
        ii_gain *= keep
        ii_dcg += ii_gain * disc[i]
        ii_err += ii_gain / (i + 1.0)
        dcg[i] /= ii_dcg
        err[i] /= ii_err
    return nrbp * ((1.0 - keep * beta) / m)


@njit(cache=True, nogil=True)
def ideal_queries(lo, hi, qd_off, sub, par, order, ideal):  # pragma: no cover - numba
    """ndeval's greedy ideal ranking per query (largest novelty gain first, ties to the larger
    docno; gains then times ``1 - alpha``) into ``order``, and its DCG, ERR and NRBP."""
    rd_off, rd_sub, m_q = sub.rd_off, sub.rd_sub, sub.m_q
    alpha = par.alpha
    idcg, ierr, inrbp = ideal
    k = idcg.shape[1]
    mmax = 1
    for q in range(lo, hi):
        mmax = max(mmax, m_q[q])
    tmp = _scratch(mmax, k)
    gains = tmp.gains
    keep = 1.0 - alpha
    for q in range(lo, hi):
        a = qd_off[q]
        n = qd_off[q + 1] - a
        m = m_q[q]
        ranked = np.zeros(n, np.bool_)
        for j in range(m):
            gains[j] = 1.0
        for r in range(n):
            where = -1
            best = 0.0
            for i in range(n):
                if ranked[i]:
                    continue
                e = a + i
                s = 0.0
                for t in range(rd_off[e], rd_off[e + 1]):
                    s += gains[rd_sub[t]]
                if where == -1 or s > best or s == best:
                    # entries ascend by docno: a later tie has the larger docno
                    best = s
                    where = i
            ranked[where] = True
            e = a + where
            order[a + r] = e
            for t in range(rd_off[e], rd_off[e + 1]):
                gains[rd_sub[t]] *= keep
        inrbp[q] = _score(order, a, n, sub, m, par, tmp, idcg[q], ierr[q])


@njit(cache=True, nogil=True)
def order_groups(lo, hi, starts, ends, key, mode, perm, bad):  # pragma: no cover - numba
    """Order each group's positions (in trec_eval order) for ndeval: ``mode`` 0 keeps them,
    1 reverses blocks of equal score (pyndeval), 2 sorts by rank ``key`` (ndeval's
    default), flagging ``bad[g]`` for a shared rank."""
    for g in range(lo, hi):
        a = starts[g]
        b = ends[g]
        for p in range(a, b):
            perm[p] = p
        if mode == 1:
            p = a
            while p < b:
                t = p + 1
                while t < b and key[t] == key[p]:
                    t += 1
                for u in range(t - p):
                    perm[p + u] = t - 1 - u
                p = t
        elif mode == 2:
            inc = True
            for p in range(a + 1, b):
                if not key[p] > key[p - 1]:
                    inc = False
                    break
            if not inc:
                idx = np.argsort(key[a:b], kind="mergesort")
                for u in range(b - a):
                    perm[a + u] = a + idx[u]
                for u in range(1, b - a):
                    if key[perm[a + u]] == key[perm[a + u - 1]]:
                        bad[g] = True


@njit(cache=True, nogil=True)
def score_groups(lo, hi, rk, sub, par, ideal, plan, out, per):  # pragma: no cover - numba
    """``out[g, c]``: measure ``plan.code[c]`` at cutoff ``plan.k[c]`` of groups ``lo..hi``, one
    pass per ranking; and, unless ``per`` is empty, :func:`_write_per_subtopic`."""
    starts, ends, seq, group_q, max_depth = rk
    m_q, sub_off, nrel = sub.m_q, sub.sub_off, sub.nrel
    k = ideal.idcg.shape[1]
    mmax = 1
    for g in range(lo, hi):
        mmax = max(mmax, m_q[group_q[g]])
    tmp = _scratch(mmax, k)
    dcg = np.empty(k, np.float64)
    err = np.empty(k, np.float64)
    per_sub = per.first.shape[0] > 0
    for g in range(lo, hi):
        q = group_q[g]
        m = m_q[q]
        a = starts[g]
        n = ends[g] - a
        if max_depth > 0 and n > max_depth:
            n = max_depth
        nrbp = _score(seq, a, n, sub, m, par, tmp, dcg, err)
        map_ia = 0.0
        for j in range(m):
            map_ia += tmp.totals[j] / nrel[sub_off[q] + j]
        if m > 0:
            map_ia /= m
        _write_measures(g, q, plan, ideal, tmp, dcg, err, nrbp, map_ia, out)
        if per_sub:
            _write_per_subtopic(g, q, seq, a, n, sub, tmp.totals, per)


@njit(cache=True, nogil=True, inline="always")
def _write_measures(g, q, plan, ideal, tmp, dcg, err, nrbp, map_ia, out):  # pragma: no cover
    """``out[g, c]`` of group ``g`` (query ``q``) from its ranking's and the ideal's scores."""
    mcode, mk = plan
    idcg, ierr, inrbp = ideal
    prec = tmp.prec
    strec = tmp.strec
    for c in range(mcode.shape[0]):
        code = mcode[c]
        i = mk[c] - 1
        v = 0.0
        if code == 0:
            v = err[i]
        elif code == 1:
            if dcg[i] != 0.0:
                v = err[i] / ierr[q, i]
        elif code == 2:
            v = dcg[i]
        elif code == 3:
            if dcg[i] != 0.0:
                v = dcg[i] / idcg[q, i]
        elif code == 4:
            v = nrbp
        elif code == 5:
            v = nrbp / inrbp[q] if inrbp[q] != 0.0 else np.nan
        elif code == 6:
            v = map_ia
        elif code == 7:
            v = prec[i]
        elif code == 8:
            v = strec[i]
        out[g, c] = v


@njit(cache=True, nogil=True, inline="always")
def _write_per_subtopic(g, q, seq, a, n, sub, totals, per):  # pragma: no cover - numba
    """Per subtopic of group ``g``'s query: its first relevant rank, hits within depth, AP."""
    m_q, sub_off, nrel, rd_off, rd_sub = sub.m_q, sub.sub_off, sub.nrel, sub.rd_off, sub.rd_sub
    grp_sub_off, sub_first, sub_hits, sub_ap, hit_depth = per
    m = m_q[q]
    s0 = sub_off[q]
    base = grp_sub_off[g]
    for j in range(m):
        sub_first[base + j] = 0
        sub_hits[base + j] = 0
        sub_ap[base + j] = totals[j] / nrel[s0 + j]
    for i in range(n):
        e = seq[a + i]
        if e < 0:
            continue
        for t in range(rd_off[e], rd_off[e + 1]):
            j = rd_sub[t]
            if sub_first[base + j] == 0:
                sub_first[base + j] = i + 1
            if i < hit_depth:
                sub_hits[base + j] += 1
