"""Kernels over ranked lists: grouping, trec_eval ordering, and ad-hoc measures.

Inputs are contiguous arrays: ``int32`` codes and grades, ``float64`` scores,
``int64`` offsets. Groups are (run, query) pairs; each ``prange`` iteration
writes only its own output row.

Relevance values inside a ranking follow trec_eval's ``form_res_rels``:
a judged grade ``>= 0``; ``NONPOOL`` (-1) for a document absent from the
qrels; ``UNJUDGED`` (-2) for a qrels entry with a negative grade.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

NONPOOL = -1
UNJUDGED = -2

# Measure families. The numbers are an internal contract between
# fasteval.measures (which plans columns) and evaluate_groups.
NUM_Q = 0
NUM_RET = 1
NUM_REL = 2
NUM_REL_RET = 3
MAP = 4
GM_MAP = 5
RPREC = 6
BPREF = 7
RECIP_RANK = 8
IPREC_AT_RECALL = 9
P = 10
RECALL = 11
INFAP = 12
ELEVEN_PT_AVG = 13
NDCG = 14
NDCG_CUT = 15
MAP_CUT = 16
SUCCESS = 17
SET_P = 18
SET_RECALL = 19
SET_F = 20
NUM_NONREL_JUDGED_RET = 21


@njit(cache=True, nogil=True)
def counting_sort(keys, n_keys):  # pragma: no cover - numba
    """Stable permutation that groups ``keys`` (ints in ``[0, n_keys)``) in key order.

    Returns ``(perm, starts)``: rows ``perm[starts[k]:starts[k+1]]`` have key ``k``.
    """
    n = keys.shape[0]
    starts = np.zeros(n_keys + 1, np.int64)
    for i in range(n):
        starts[keys[i] + 1] += 1
    for k in range(n_keys):
        starts[k + 1] += starts[k]
    fill = starts[:-1].copy()
    perm = np.empty(n, np.int64)
    for i in range(n):
        k = keys[i]
        perm[fill[k]] = i
        fill[k] += 1
    return perm, starts


@njit(cache=True, parallel=True)
def mark_duplicates(starts, ends, doc, is_dup):  # pragma: no cover - numba
    """Mark every occurrence of a document after its first one within a group.

    Rows of a group must be in input order; ``is_dup`` is written in place.
    Returns the number of groups with a duplicate.
    """
    n_groups = starts.shape[0]
    found = np.zeros(n_groups, np.int64)
    for g in prange(n_groups):
        s = starts[g]
        e = ends[g]
        if e - s < 2:
            continue
        order = np.argsort(doc[s:e], kind="mergesort")
        for i in range(1, e - s):
            a = s + order[i - 1]
            b = s + order[i]
            if doc[a] == doc[b]:
                is_dup[b] = True
                found[g] = 1
    return found.sum()


@njit(cache=True, parallel=True)
def order_groups(starts, ends, score, doc, perm):  # pragma: no cover - numba
    """Put each group in trec_eval order: score descending, then doc code descending.

    Groups already in order are left alone (one linear check); others are
    sorted. ``score``, ``doc`` and ``perm`` are permuted in place.
    Returns the number of groups that had to be sorted.
    """
    n_groups = starts.shape[0]
    sorted_count = np.zeros(n_groups, np.int64)
    for g in prange(n_groups):
        s = starts[g]
        e = ends[g]
        ok = True
        for i in range(s + 1, e):
            if score[i] > score[i - 1] or (score[i] == score[i - 1] and doc[i] > doc[i - 1]):
                ok = False
                break
        if ok:
            continue
        sorted_count[g] = 1
        # stable two-key sort: doc descending, then score descending
        o1 = np.argsort(-doc[s:e].astype(np.int64), kind="mergesort")
        sc = score[s:e][o1]
        o2 = np.argsort(-sc, kind="mergesort")
        o = o1[o2]
        new_score = score[s:e][o]
        new_doc = doc[s:e][o]
        new_perm = perm[s:e][o]
        score[s:e] = new_score
        doc[s:e] = new_doc
        perm[s:e] = new_perm
    return sorted_count.sum()


@njit(cache=True)
def query_stats(qr_off, qr_rel, level):  # pragma: no cover - numba
    """Per query: relevant count, judged non-relevant count, cumulative ideal DCG.

    ``num_rel[q]`` counts grades ``>= level``; ``num_nonrel[q]`` grades in
    ``[0, level)``; the ideal ranking orders all positive grades descending
    (trec_eval's gains = grades, independent of ``level``).
    """
    n_q = qr_off.shape[0] - 1
    num_rel = np.zeros(n_q, np.int64)
    num_nonrel = np.zeros(n_q, np.int64)
    ideal_off = np.zeros(n_q + 1, np.int64)
    for q in range(n_q):
        npos = 0
        for j in range(qr_off[q], qr_off[q + 1]):
            r = qr_rel[j]
            if r >= level:
                num_rel[q] += 1
            elif r >= 0:
                num_nonrel[q] += 1
            if r > 0:
                npos += 1
        ideal_off[q + 1] = ideal_off[q] + npos
    idcg = np.empty(ideal_off[n_q], np.float64)
    for q in range(n_q):
        o = ideal_off[q]
        k = 0
        gains = np.empty(ideal_off[q + 1] - o, np.float64)
        for j in range(qr_off[q], qr_off[q + 1]):
            if qr_rel[j] > 0:
                gains[k] = qr_rel[j]
                k += 1
        gains = -np.sort(-gains)
        acc = 0.0
        for i in range(k):
            acc += gains[i] / math.log2(i + 2.0)
            idcg[o + i] = acc
    return num_rel, num_nonrel, ideal_off, idcg


@njit(cache=True, inline="always")
def _recall_cutoff(p, num_rel, round_mode):
    """Recall fraction -> relevant-doc count: v9 ``(long)(p*R+0.9)``, v10 ``lround(p*R)``."""
    x = p * num_rel
    if round_mode == 9:
        return np.int64(math.floor(x + 0.9))
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1.0
    return np.int64(r)


@njit(cache=True, inline="always")
def _iprec(c, num_rel_ret, num_ret, smax, relpos):
    if c > num_rel_ret:
        return 0.0
    if num_rel_ret == 0:
        return 0.0  # trec_eval: 0/num_ret (and 0 for an empty ranking)
    c = max(c, 1)
    return smax[relpos[c - 1]]


@njit(cache=True, parallel=True)
def evaluate_groups(
    starts,
    ends,
    group_q,
    doc,
    qr_off,
    qr_doc,
    qr_rel,
    num_rel_q,
    num_nonrel_q,
    ideal_off,
    idcg,
    level,
    max_depth,
    judged_only,
    round_mode,
    col_fam,
    col_p0,
    col_p1,
    params,
    out,
):  # pragma: no cover - numba
    """Compute every planned measure column for every (run, query) group in one pass.

    ``doc`` holds document codes in trec_eval order per group; the qrels of
    query ``q`` are ``qr_doc/qr_rel[qr_off[q]:qr_off[q+1]]`` sorted by doc
    code (codes < 0 never match). Column ``c`` is family ``col_fam[c]``
    with parameters ``params[col_p0[c]:col_p1[c]]``.
    """
    n_groups = starts.shape[0]
    n_cols = col_fam.shape[0]
    need_loop = False
    for c in range(n_cols):
        f = col_fam[c]
        if f == BPREF or f == INFAP:
            need_loop = True
    for g in prange(n_groups):
        s = starts[g]
        q = group_q[g]
        n = ends[g] - s
        if max_depth >= 0 and n > max_depth:
            n = max_depth
        qs = qr_off[q]
        qe = qr_off[q + 1]
        rels = np.empty(n, np.int32)
        for i in range(n):
            d = doc[s + i]
            lo = qs
            hi = qe
            while lo < hi:
                mid = (lo + hi) >> 1
                if qr_doc[mid] < d:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < qe and qr_doc[lo] == d:
                r = qr_rel[lo]
                rels[i] = r if r >= 0 else UNJUDGED
            else:
                rels[i] = NONPOOL
        if judged_only:
            m = 0
            for i in range(n):
                if rels[i] >= 0:
                    rels[m] = rels[i]
                    m += 1
            n = m
        R = num_rel_q[q]
        cum_rel = np.empty(n, np.int64)
        cum_ap = np.empty(n, np.float64)
        cum_dcg = np.empty(n, np.float64)
        relpos = np.empty(n, np.int64)
        nrr = 0
        ap = 0.0
        dcg = 0.0
        nonpool = 0
        unjudged = 0
        for i in range(n):
            r = rels[i]
            if r >= level:
                relpos[nrr] = i
                nrr += 1
                ap += nrr / (i + 1.0)
            if r > 0:
                dcg += r / math.log2(i + 2.0)
            elif r == NONPOOL:
                nonpool += 1
            elif r == UNJUDGED:
                unjudged += 1
            cum_rel[i] = nrr
            cum_ap[i] = ap
            cum_dcg[i] = dcg
        # suffix maximum of precision, for interpolated precision
        smax = np.empty(n, np.float64)
        best = 0.0
        for i in range(n - 1, -1, -1):
            pr = cum_rel[i] / (i + 1.0)
            best = max(best, pr)
            smax[i] = best
        bpref = 0.0
        infap = 0.0
        if need_loop:
            nonrel_so_far = 0
            rel_so_far = 0
            pool_unj = 0
            denom = min(num_nonrel_q[q], R)
            for j in range(n):
                r = rels[j]
                if r == NONPOOL:
                    continue
                if r == UNJUDGED:
                    pool_unj += 1
                    continue
                if r < level:
                    nonrel_so_far += 1
                else:
                    rel_so_far += 1
                    if nonrel_so_far > 0:
                        bpref += 1.0 - min(nonrel_so_far, R) / denom
                    else:
                        bpref += 1.0
                    if j == 0:
                        infap += 1.0
                    else:
                        fj = float(j)
                        infap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                            (rel_so_far - 1 + nonrel_so_far + pool_unj) / fj
                        ) * (
                            (rel_so_far - 1 + 0.00001)
                            / (rel_so_far - 1 + nonrel_so_far + 2 * 0.00001)
                        )
            if R > 0:
                bpref /= R
                infap /= R
        io = ideal_off[q]
        npos = ideal_off[q + 1] - io
        for c in range(n_cols):
            f = col_fam[c]
            p0 = col_p0[c]
            v = 0.0
            if f == NUM_Q:
                v = 1.0
            elif f == NUM_RET:
                v = n
            elif f == NUM_REL:
                v = R
            elif f == NUM_REL_RET:
                v = nrr
            elif f == MAP or f == GM_MAP:
                if nrr > 0:
                    v = ap / R
            elif f == RPREC:
                k = min(n, R)
                if k > 0:
                    v = cum_rel[k - 1] / R
            elif f == BPREF:
                v = bpref
            elif f == INFAP:
                v = infap
            elif f == RECIP_RANK:
                if nrr > 0:
                    v = 1.0 / (relpos[0] + 1.0)
            elif f == IPREC_AT_RECALL:
                cut = _recall_cutoff(params[p0], R, round_mode)
                v = _iprec(cut, nrr, n, smax, relpos)
            elif f == ELEVEN_PT_AVG:
                p1 = col_p1[c]
                acc = 0.0
                for j in range(p1 - 1, p0 - 1, -1):
                    cut = _recall_cutoff(params[j], R, round_mode)
                    acc += _iprec(cut, nrr, n, smax, relpos)
                v = acc / (p1 - p0)
            elif f == P:
                k = np.int64(params[p0])
                v = (cum_rel[min(k, n) - 1] if n > 0 else 0) / k
            elif f == RECALL:
                k = np.int64(params[p0])
                if R > 0 and n > 0:
                    v = cum_rel[min(k, n) - 1] / R
            elif f == SUCCESS:
                k = np.int64(params[p0])
                if n > 0 and cum_rel[min(k, n) - 1] > 0:
                    v = 1.0
            elif f == MAP_CUT:
                k = np.int64(params[p0])
                if R > 0 and n > 0:
                    v = cum_ap[min(k, n) - 1] / R
            elif f == NDCG:
                if npos > 0 and n > 0:
                    v = cum_dcg[n - 1] / idcg[io + npos - 1]
            elif f == NDCG_CUT:
                k = np.int64(params[p0])
                if n > 0:
                    v = cum_dcg[min(k, n) - 1]
                    if npos > 0:
                        v = v / idcg[io + min(k, npos) - 1]
            elif f == SET_P:
                if n > 0:
                    v = nrr / n
            elif f == SET_RECALL:
                if R > 0:
                    v = nrr / R
            elif f == SET_F:
                if nrr > 0:
                    beta = params[p0]
                    pp = nrr / n
                    rr = nrr / R
                    v = (beta + 1.0) * pp * rr / (beta * pp + rr)
            elif f == NUM_NONREL_JUDGED_RET:
                v = n - nonpool - unjudged - nrr
            out[g, c] = v
