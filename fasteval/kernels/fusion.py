"""Kernels for metasearch: per-query document codes, ranked lists, normalisation, fusion.

Layout (``fasteval.analysis.fusion.prepare_fusion``): list ``k = q * n_runs + run`` is
at positions ``kstart[k]:kstart[k+1]``, in rank order. ``pos_doc`` holds each document's
*local code*: query ``q``'s documents numbered ``0..m_q-1`` in byte-wise doc-id order
(a larger code is a larger doc id: trec_eval's tie order). A fusion *item* is a pair
(fusion group, query); kernels take a range ``[lo, hi)`` of items, write only their
slots and release the GIL.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fasteval.kernels.jit import njit


class How(NamedTuple):
    """What a fusion computes: the combiner, the value source, the normalisation."""

    method: int
    source: int
    norm: int
    miss: float  # a missing run's value (NaN: the run does not count)
    max_m: int  # most candidates of a query
    depth: int  # documents kept per fused ranking


class Lists(NamedTuple):
    """The input runs' ranked lists: query ``q`` of run ``r`` starts at ``kstart``."""

    n_q: int
    n_runs: int
    kstart: np.ndarray
    pos_doc: np.ndarray
    nscore: np.ndarray  # normalised scores


class FusionGroups(NamedTuple):
    """Fusion groups: group ``g``'s runs are ``members[m_off[g]:m_off[g + 1]]``."""

    members: np.ndarray
    m_off: np.ndarray
    weights: np.ndarray  # float64 per member slot
    g_par: np.ndarray  # float64 parameter per group (k, phi, gamma, sigma)
    g_set: np.ndarray  # int64 row of ``pv`` per group
    pv: np.ndarray  # float64 parameter vectors


class Judged(NamedTuple):
    """Each query's documents and their grade class (for the upper bounds)."""

    qdoc_off: np.ndarray
    qdoc_gcls: np.ndarray


class Fused(NamedTuple):
    """Outputs: item ``i``'s documents and scores at ``off[i]``, ``n[i]`` of them."""

    off: np.ndarray
    doc: np.ndarray
    score: np.ndarray
    n: np.ndarray


# normalisations
NORM_NONE = 0
NORM_MINMAX = 1
NORM_ZSCORE = 2
NORM_SUM = 3
NORM_RANK = 4
NORM_MAX = 5
NORM_MINMAX_INV = 6
NORM_BORDA = 7  # computed in fuse_items: it needs the group's candidates

# combiners: how the per-run values of a candidate become its fused score or place
COMBSUM = 0  # sum_r w_r v_r
COMBMNZ = 1  # (sum_r w_r v_r) * c
COMBANZ = 2  # (sum_r w_r v_r) / c
CONDORCET = 3
NAIVE = 4
PARETO = 5
MAJORITARIAN = 6
COMBMAX = 7  # max_r v_r
COMBMIN = 8  # min_r v_r
COMBMED = 9  # median_r v_r
COMBGMNZ = 10  # (sum_r w_r v_r) * c ** par
LOGMNZ = 11  # (sum_r w_r v_r) * log(c)
LOGNMNZ = 12  # (sum_r w_r v_r) * log(c + par)
MIXED = 13  # (sum_r w_r v_r) * sqrt(c)
WMNZ = 14  # (sum_r v_r) * (sum_r w_r)

# value sources: what a run gives the document at 0-based position j of its n
SRC_SCORE = 0  # the normalised score
SRC_RRF = 1  # 1 / (par + j + 1)
SRC_ISR = 2  # 1 / (j + 1)^2
SRC_RBC = 3  # (1 - par) * par^j
SRC_BORDA = 4  # m - j (m candidates); a run missing the document gives (m - n + 1) / 2
SRC_TABLE = 5  # pv[set of the group, position] (learnt tables)

UNRET = np.int32(2147483647)  # position of a document a run did not retrieve
NONREL = -1  # grade class of every document that is not relevant

_EPS = 1e-9  # ranx's floor for normalisation denominators


@njit(cache=True, nogil=True)
def local_codes(lo, hi, qstart, perm, grank, loc, first):  # pragma: no cover - numba
    """Number the documents of queries ``lo..hi`` (rows ``perm[qstart[q]:qstart[q+1]]``) in
    ``grank`` (byte-wise) order: ``loc[row]``, and ``first[row]`` for each one's first row."""
    for q in range(lo, hi):
        a = qstart[q]
        b = qstart[q + 1]
        if b == a:
            continue
        rows = perm[a:b]
        keys = grank[rows]
        order = np.argsort(keys, kind="mergesort")
        code = -1
        prev = -1
        for t in range(b - a):
            r = rows[order[t]]
            g = keys[order[t]]
            if g != prev:
                code += 1
                prev = g
                first[r] = True
            else:
                first[r] = False
            loc[r] = code


@njit(cache=True, nogil=True)
def rank_lists(
    lo, hi, kstart, perm, loc, score, pos_doc, pos_score, pos_row, dup
):  # pragma: no cover - numba
    """Order lists ``lo..hi`` by score, then local code (doc id), descending; ``dup[k]``: a
    row repeating a document of list ``k`` (-1 if none)."""
    for k in range(lo, hi):
        a = kstart[k]
        b = kstart[k + 1]
        n = b - a
        if n == 0:
            continue
        rows = perm[a:b]
        codes = loc[rows]
        by_code = np.argsort(-codes.astype(np.int64), kind="mergesort")
        for t in range(1, n):
            if codes[by_code[t]] == codes[by_code[t - 1]] and dup[k] < 0:
                dup[k] = rows[by_code[t]]
        neg = np.empty(n, np.float64)
        for t in range(n):
            neg[t] = -score[rows[by_code[t]]]
        order = by_code[np.argsort(neg, kind="mergesort")]
        for t in range(n):
            r = rows[order[t]]
            pos_doc[a + t] = loc[r]
            pos_score[a + t] = score[r]
            pos_row[a + t] = r


@njit(cache=True, nogil=True)
def normalise(lo, hi, kstart, score, kind, out):  # pragma: no cover - numba
    """Normalise the scores of lists ``lo..hi`` as ranx does (denominators at least 1e-9;
    z-score with the population std; rank: ``1 - i / n``). Borda is :func:`fuse_items`'s."""
    for k in range(lo, hi):
        a = kstart[k]
        b = kstart[k + 1]
        n = b - a
        if n == 0:
            continue
        s = score[a:b]
        if kind == NORM_MINMAX or kind == NORM_MINMAX_INV:
            mn = s.min()
            mx = s.max()
            den = max(mx - mn, _EPS)
            for t in range(n):
                out[a + t] = (s[t] - mn) / den if kind == NORM_MINMAX else (mx - s[t]) / den
        elif kind == NORM_MAX:
            den = max(s.max(), _EPS)
            for t in range(n):
                out[a + t] = s[t] / den
        elif kind == NORM_ZSCORE:
            mu = s.mean()
            den = max(s.std(), _EPS)
            for t in range(n):
                out[a + t] = (s[t] - mu) / den
        elif kind == NORM_SUM:
            mn = s.min()
            den = max(s.sum() - mn * n, _EPS)
            for t in range(n):
                out[a + t] = (s[t] - mn) / den
        elif kind == NORM_RANK:
            for t in range(n):
                out[a + t] = 1.0 - t / n
        else:
            for t in range(n):
                out[a + t] = s[t]


@njit(cache=True, nogil=True)
def _beats(x, y, P, gcls, method, w, wtot):  # pragma: no cover - numba
    """Candidate ``x`` must go above ``y`` (strictly) under the pairwise rule of ``method``.

    ``v_xy`` = total weight ``w`` of the runs ranking ``x`` strictly above ``y``
    (retrieved above unretrieved; a run retrieving neither abstains). Condorcet:
    ``v_xy > v_yx``. Majoritarian: ``x`` if ``2 v_xy >= wtot`` and ``v_xy > v_yx``;
    ``y`` likewise; otherwise the higher grade class.
    """
    vxy = 0.0
    vyx = 0.0
    for r in range(P.shape[1]):
        if P[x, r] < P[y, r]:
            vxy += w[r]
        elif P[y, r] < P[x, r]:
            vyx += w[r]
    if method == CONDORCET:
        return vxy > vyx
    if vxy > vyx and 2 * vxy >= wtot:
        return True
    if vyx > vxy and 2 * vyx >= wtot:
        return False
    return gcls[x] > gcls[y]


@njit(cache=True, nogil=True)
def _pairwise_sort(order, P, gcls, method, w, wtot):
    """Stable bottom-up merge sort of ``order`` by :func:`_beats` (a right element goes first
    only when it beats the left one); a non-transitive majority still gives a Hamiltonian path."""
    m = order.shape[0]
    tmp = np.empty(m, np.int64)
    width = 1
    while width < m:
        lo = 0
        while lo < m:
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            if mid < hi and _beats(order[mid], order[mid - 1], P, gcls, method, w, wtot):
                i = lo
                j = mid
                k = lo
                while i < mid and j < hi:
                    if _beats(order[j], order[i], P, gcls, method, w, wtot):
                        tmp[k] = order[j]
                        j += 1
                    else:
                        tmp[k] = order[i]
                        i += 1
                    k += 1
                while i < mid:
                    tmp[k] = order[i]
                    i += 1
                    k += 1
                while j < hi:
                    tmp[k] = order[j]
                    j += 1
                    k += 1
                for t in range(lo, hi):
                    order[t] = tmp[t]
            lo += 2 * width
        width *= 2


@njit(cache=True, nogil=True)
def _top(val, codes, k):
    """Indices of the ``k`` best by ``val`` descending, then ``codes`` descending, best first."""
    m = val.shape[0]
    if k < m:
        thr = -np.partition(-val, k - 1)[k - 1]
        sel = np.flatnonzero(val >= thr)
    else:
        sel = np.arange(m)
    by_code = np.argsort(-codes[sel].astype(np.int64))
    sel = sel[by_code]
    return sel[np.argsort(-val[sel], kind="mergesort")][: min(k, m)]


class _Tally(NamedTuple):
    """One item's per-candidate accumulators (candidate ``c`` at row ``c``)."""

    sumw: np.ndarray  # sum of w v (0 slots under the pairwise orders)
    sumv: np.ndarray  # sum of v
    wsum: np.ndarray  # sum of w over the runs giving a value
    cnt: np.ndarray  # runs giving a value
    borda: np.ndarray  # Borda count: sum over runs of (len - position)
    values: np.ndarray  # (m, runs) every run's value, when the combiner needs them (else 0 rows)
    places: np.ndarray  # (m, runs) positions (UNRET if missing) for the pairwise/Pareto orders


@njit(cache=True, nogil=True)
def _candidates(q, ma, mb, runs, members, cmap, cand):  # pragma: no cover - numba
    """Number the documents member slots ``ma..mb`` retrieved for query ``q`` by first
    appearance (``cmap[doc]``, ``cand[number]``); returns their count."""
    n_runs, kstart, pos_doc = runs.n_runs, runs.kstart, runs.pos_doc
    m = 0
    for t in range(ma, mb):
        k = q * n_runs + members[t]
        for p in range(kstart[k], kstart[k + 1]):
            d = pos_doc[p]
            if cmap[d] < 0:
                cmap[d] = m
                cand[m] = d
                m += 1
    return m


@njit(cache=True, nogil=True)
def _tally(m, nm, how):  # pragma: no cover - numba
    """Empty accumulators for ``m`` candidates of ``nm`` runs, sized for what ``how`` reads."""
    method, source, norm, miss = how.method, how.source, how.norm, how.miss
    rank_based = method >= CONDORCET and method <= MAJORITARIAN
    matrix = (
        method == COMBMED
        or method == COMBMAX
        or method == COMBMIN
        or norm == NORM_BORDA
        or source == SRC_BORDA
        or not np.isnan(miss)
    )
    ms = 0 if rank_based else m  # the score arrays (not needed by the pairwise orders)
    values = np.full((m, nm), np.nan) if matrix and not rank_based else np.empty((0, nm))
    if method == CONDORCET or method == PARETO or method == MAJORITARIAN:
        places = np.full((m, nm), UNRET, np.int32)
    else:
        places = np.empty((0, nm), np.int32)
    return _Tally(
        np.zeros(ms, np.float64),
        np.zeros(ms, np.float64),
        np.zeros(ms, np.float64),
        np.zeros(ms, np.int64),
        np.zeros(m, np.float64),
        values,
        places,
    )


@njit(cache=True, nogil=True)
def _run_value(how, j, m, p, par, pset, nscore, pv):  # pragma: no cover - numba
    """The value a run gives its candidate at position ``j`` (slot ``p``) of ``m`` (``SRC_*``)."""
    source = how.source
    if how.norm == NORM_BORDA:
        return 1.0 - j / m
    if source == SRC_SCORE:
        return nscore[p]
    if source == SRC_RRF:
        return 1.0 / (par + j + 1)
    if source == SRC_ISR:
        return 1.0 / ((j + 1) * (j + 1))
    if source == SRC_RBC:
        return (1.0 - par) * par**j
    if source == SRC_BORDA:
        return float(m - j)
    return pv[pset, p]


@njit(cache=True, nogil=True)
def _missing_fill(how, n_r, m):  # pragma: no cover - numba
    """The value of a run of ``n_r`` documents for a candidate it missed (NaN: none)."""
    if how.norm == NORM_BORDA:
        return 0.5 - (n_r - 1) / (2 * m)
    if how.source == SRC_BORDA:
        return (m - n_r + 1) / 2.0
    return how.miss


@njit(cache=True, nogil=True)
def _gather(q, g, m, how, runs, groups, cmap, acc):  # pragma: no cover - numba
    """Every member run's values, positions and Borda points for item (g, q): into
    ``acc.values`` when the combiner needs them all, else straight into the sums."""
    n_runs, kstart, pos_doc, nscore = runs.n_runs, runs.kstart, runs.pos_doc, runs.nscore
    members, weights, pv = groups.members, groups.weights, groups.pv
    ma = groups.m_off[g]
    mb = groups.m_off[g + 1]
    par = groups.g_par[g]
    pset = groups.g_set[g]
    rank_based = how.method >= CONDORCET and how.method <= MAJORITARIAN
    V = acc.values
    P = acc.places
    for t in range(ma, mb):
        k = q * n_runs + members[t]
        a = kstart[k]
        b = kstart[k + 1]
        w = weights[t]
        for p in range(a, b):
            c = cmap[pos_doc[p]]
            j = p - a
            if not rank_based:
                v = _run_value(how, j, m, p, par, pset, nscore, pv)
                if V.shape[0] > 0:
                    V[c, t - ma] = v
                else:
                    acc.sumw[c] += w * v
                    acc.sumv[c] += v
                    acc.wsum[c] += w
                    acc.cnt[c] += 1
            acc.borda[c] += b - p
            if P.shape[0] > 0:
                P[c, t - ma] = j
        if V.shape[0] > 0:
            fill = _missing_fill(how, b - a, m)
            if not np.isnan(fill):
                for c in range(m):
                    if np.isnan(V[c, t - ma]):
                        V[c, t - ma] = fill


@njit(cache=True, nogil=True)
def _sum_values(acc, weights, method):  # pragma: no cover - numba
    """Sums and counts of the rows of ``acc.values``, and ``(max, min, median)`` per candidate
    (unset when it has no rows: the sums were gathered directly)."""
    V = acc.values
    ms = acc.sumw.shape[0]
    mx = np.empty(ms, np.float64)
    mn = np.empty(ms, np.float64)
    med = np.empty(ms, np.float64)
    nm = V.shape[1]
    for c in range(V.shape[0]):
        hi_v = -np.inf
        lo_v = np.inf
        for t in range(nm):
            x = V[c, t]
            if np.isnan(x):
                continue
            w = weights[t]
            acc.sumw[c] += w * x
            acc.sumv[c] += x
            acc.wsum[c] += w
            acc.cnt[c] += 1
            hi_v = max(hi_v, x)
            lo_v = min(lo_v, x)
        mx[c] = hi_v
        mn[c] = lo_v
        if method == COMBMED:
            row = V[c]
            med[c] = np.median(row[~np.isnan(row)])
    return mx, mn, med


@njit(cache=True, nogil=True)
def _grade_classes(q, cs, method, judged):  # pragma: no cover - numba
    """The candidates' grade classes (all ``NONREL`` unless an upper bound reads them)."""
    m = cs.shape[0]
    gcls = np.full(m, NONREL, np.int64)
    if method >= NAIVE and method <= MAJORITARIAN:
        base = judged.qdoc_off[q]
        for c in range(m):
            gcls[c] = judged.qdoc_gcls[base + cs[c]]
    return gcls


@njit(cache=True, nogil=True)
def _combine(method, par, acc, mx, mn, med, val):  # pragma: no cover - numba
    """Each candidate's fused score ``val`` under a score combiner (``COMBSUM``...``WMNZ``)."""
    sumw, cnt = acc.sumw, acc.cnt
    for c in range(val.shape[0]):
        s = sumw[c]
        if method == COMBSUM:
            val[c] = s
        elif method == COMBMNZ:
            val[c] = s * cnt[c]
        elif method == COMBANZ:
            val[c] = s / cnt[c]
        elif method == COMBMAX:
            val[c] = mx[c]
        elif method == COMBMIN:
            val[c] = mn[c]
        elif method == COMBMED:
            val[c] = med[c]
        elif method == COMBGMNZ:
            val[c] = s * cnt[c] ** par
        elif method == LOGMNZ:
            val[c] = s * np.log(cnt[c])
        elif method == LOGNMNZ:
            val[c] = s * np.log(cnt[c] + par)
        elif method == MIXED:
            val[c] = s * np.sqrt(cnt[c])
        else:
            val[c] = acc.sumv[c] * acc.wsum[c]


@njit(cache=True, nogil=True)
def _pareto_keys(q, g, P, gcls, runs, groups, cmap):  # pragma: no cover - numba
    """Pareto's key: a candidate's grade class raised to that of any relevant one it dominates
    (every run retrieving ``y`` ranks ``x`` strictly above it)."""
    key = gcls.copy()
    nm = P.shape[1]
    ma = groups.m_off[g]
    for y in range(gcls.shape[0]):
        if gcls[y] == NONREL:
            continue
        # a dominator of y precedes it in y's best run
        best = 0
        for r in range(1, nm):
            if P[y, r] < P[y, best]:
                best = r
        k = q * runs.n_runs + groups.members[ma + best]
        a = runs.kstart[k]
        for p in range(a, a + P[y, best]):
            x = cmap[runs.pos_doc[p]]
            if key[x] >= gcls[y]:
                continue
            dom = True
            for r in range(nm):
                if P[y, r] != UNRET and P[x, r] >= P[y, r]:
                    dom = False
                    break
            if dom:
                key[x] = gcls[y]
    return key


@njit(cache=True, nogil=True)
def _relevance_values(key, borda, val):  # pragma: no cover - numba
    """Naive/Pareto order values: (grade class key, Borda) as one exact float."""
    # Borda < span, so the key decides and Borda breaks its ties
    span = borda.max() + 1.0
    for c in range(val.shape[0]):
        val[c] = (key[c] + 1) * span + borda[c]


@njit(cache=True, nogil=True)
def _pairwise_order(cs, acc, gcls, method, w_g):  # pragma: no cover - numba
    """Condorcet/Majoritarian order: the Borda order, merge sorted by pairwise votes."""
    # the Borda order in one sort of unique integer keys (Borda counts
    # are integers; ties end with the larger doc id first)
    key = acc.borda.astype(np.int64) * (np.int64(cs.max()) + 1) + cs
    order = np.argsort(-key)
    _pairwise_sort(order, acc.places, gcls, method, w_g, w_g.sum())
    return order


@njit(cache=True, nogil=True)
def _write_head(i, order, val, cs, rank_based, depth, out):  # pragma: no cover - numba
    """Write item ``i``'s first ``depth`` candidates and fused scores (rank-based: the ``j``-th
    of ``m`` scores ``m - j``); returns how many."""
    m = cs.shape[0]
    n_out = min(depth, order.shape[0])
    o = out.off[i]
    for j in range(n_out):
        c = order[j]
        out.doc[o + j] = cs[c]
        out.score[o + j] = m - j if rank_based else val[c]
    return n_out


@njit(cache=True, nogil=True)
def _fuse_item(i, how, runs, groups, judged, out, cmap, cand):  # pragma: no cover - numba
    """Fuse item ``i`` (:func:`fuse_items`); returns the documents written. ``cmap`` is all -1
    on entry and on return."""
    method = how.method
    g = i // runs.n_q
    q = i - g * runs.n_q
    ma = groups.m_off[g]
    mb = groups.m_off[g + 1]
    # --- candidates, numbered in order of first appearance
    m = _candidates(q, ma, mb, runs, groups.members, cmap, cand)
    if m == 0:
        return 0
    cs = cand[:m]
    rank_based = method >= CONDORCET and method <= MAJORITARIAN
    acc = _tally(m, mb - ma, how)
    _gather(q, g, m, how, runs, groups, cmap, acc)
    mx, mn, med = _sum_values(acc, groups.weights[ma:mb], method)
    gcls = _grade_classes(q, cs, method, judged)
    # --- order
    val = np.empty(m, np.float64)
    if not rank_based:
        _combine(method, groups.g_par[g], acc, mx, mn, med, val)
        order = _top(val, cs, how.depth)
    elif method == NAIVE or method == PARETO:
        key = _pareto_keys(q, g, acc.places, gcls, runs, groups, cmap) if method == PARETO else gcls
        _relevance_values(key, acc.borda, val)
        order = _top(val, cs, how.depth)
    else:
        order = _pairwise_order(cs, acc, gcls, method, groups.weights[ma:mb])
    n_out = _write_head(i, order, val, cs, rank_based, how.depth, out)
    for c in range(m):
        cmap[cs[c]] = -1
    return n_out


@njit(cache=True, nogil=True)
def fuse_items(lo, hi, how, runs, groups, judged, out):  # pragma: no cover - numba
    """Fuse items ``lo..hi``: item ``i`` is fusion group ``i // n_q`` (member slots
    ``m_off[g]:m_off[g+1]``), query ``i % n_q``.

    Candidates are the documents any member retrieved; each member gives one the
    value of ``how.source`` (``SRC_*``), a missing one ``how.miss`` (NaN: no value)
    or Borda's fill. ``how.method`` combines the values in member order (as ranx adds
    them) or orders by pairwise votes or by relevance. Writes the first ``n[i] <=
    depth`` documents (local codes) and scores at ``off[i]``; ties end with the larger
    doc id first.
    """
    cmap = np.full(how.max_m, -1, np.int64)
    cand = np.empty(how.max_m, np.int64)
    for i in range(lo, hi):
        out.n[i] = _fuse_item(i, how, runs, groups, judged, out, cmap, cand)
