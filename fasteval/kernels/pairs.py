"""Kernels over pairs of judged documents: the counts behind RIC, joint RIC and id.

Golbus & Aslam's framework (SPEC section 5): every quantity depends on how many pairs
of judged documents with different grades fall in each cell of a small joint table;
these kernels count the cells without enumerating pairs, over a range ``[lo, hi)`` of
items, writing only their slots.

* ``gclass[j]``: the rank of judgment ``j``'s grade among its query's distinct
  non-negative grades (-1: ignored); ``hist[hist_off[q] + k]`` counts class ``k``.
* A group's *list* (``lists[starts[g] : starts[g] + lens[g]]``): the judgments it
  ranks up to its last retrieved relevant document, in rank order.
* A pair, oriented from the higher grade, is *correct* for a run ranking that document
  higher (retrieved above unretrieved), *wrong* if lower, *0* if it retrieves neither.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fasteval.kernels.jit import njit


class Graded(NamedTuple):
    """The runs' lists of judgments, the judgments' grade classes, per-query class counts."""

    lists: np.ndarray  # int64 judgment indices, every group's list
    gclass: np.ndarray  # int64 per judgment (-1: ignored)
    hist_off: np.ndarray  # int64: query q's classes are hist[hist_off[q]:hist_off[q + 1]]
    hist: np.ndarray  # int64 judgments per class


class Side(NamedTuple):
    """One run of each (run pair, query) item: its list ``lists[s[i]:s[i] + m[i]]`` and its
    correct, wrong and both-unretrieved pair counts ``cdz[i]``."""

    s: np.ndarray  # int64
    m: np.ndarray  # int64
    cdz: np.ndarray  # int64 (n_items, 3)


@njit(cache=True, nogil=True)
def _fw_add(t, base, n, i, v):  # pragma: no cover - numba
    """Fenwick tree ``t[base + 1 : base + n + 1]``: add ``v`` at 0-based ``i``."""
    i += 1
    while i <= n:
        t[base + i] += v
        i += i & (-i)


@njit(cache=True, nogil=True)
def _fw_sum(t, base, i):  # pragma: no cover - numba
    """Sum of the first ``i`` items (0-based indices ``< i``) of the tree at ``base``."""
    s = 0
    while i > 0:
        s += t[base + i]
        i -= i & (-i)
    return s


@njit(cache=True, nogil=True)
def truncate_groups(lo, hi, starts, ends, rel, jdx, qr_rel, level, lists, lens):  # pragma: no cover
    """Each group's list (judged documents up to the last one graded ``>= max(level, 0)``)
    at ``lists[starts[g] : starts[g] + lens[g]]``, inside its own ranking's range."""
    thr = max(level, 0)
    for g in range(lo, hi):
        s = starts[g]
        last = s - 1
        for p in range(s, ends[g]):
            if rel[p] >= thr:
                last = p
        k = 0
        for p in range(s, last + 1):
            j = jdx[p]
            if j >= 0 and qr_rel[j] >= 0:
                lists[s + k] = j
                k += 1
        lens[g] = k


@njit(cache=True, nogil=True)
def _sweep(lists, s, m, gclass, skip, only_missing, fw, G):  # pragma: no cover - numba
    """``(correct, wrong)`` pairs among the listed documents (with ``only_missing``, less
    those with ``skip[j] >= 0``); O(m log G), ``fw`` left zeroed."""
    c = 0
    d = 0
    n_in = 0
    for t in range(m):
        j = lists[s + t]
        if only_missing and skip[j] >= 0:
            continue
        k = gclass[j]
        below = _fw_sum(fw, 0, k)
        upto = _fw_sum(fw, 0, k + 1)
        d += below  # a lower grade ranked above this one
        c += n_in - upto  # a higher grade ranked above this one
        _fw_add(fw, 0, G, k, 1)
        n_in += 1
    for i in range(G + 1):
        fw[i] = 0
    return c, d


@njit(cache=True, nogil=True)
def _versus(h_ret, h_unret, G):  # pragma: no cover - numba
    """Correct and wrong pairs between retrieved (class histogram) and unretrieved docs."""
    tot = 0
    for k in range(G):
        tot += h_unret[k]
    c = 0
    d = 0
    below = 0
    for k in range(G):
        c += h_ret[k] * below
        d += h_ret[k] * (tot - below - h_unret[k])
        below += h_unret[k]
    return c, d


@njit(cache=True, nogil=True)
def _within(h, G):  # pragma: no cover - numba
    """Pairs with different classes among documents with class histogram ``h``."""
    tot = 0
    sq = 0
    for k in range(G):
        tot += h[k]
        sq += h[k] * h[k]
    return (tot * tot - sq) // 2


@njit(cache=True, nogil=True)
def group_counts(
    lo, hi, starts, lens, lists, group_q, gclass, hist_off, hist, cdz
):  # pragma: no cover
    """Per group: ``cdz[g] = (correct, wrong, both unretrieved)`` pairs. O(m log G + G)."""
    gmax = 1
    for q in range(hist_off.shape[0] - 1):
        gmax = max(gmax, hist_off[q + 1] - hist_off[q])
    fw = np.zeros(gmax + 1, np.int64)
    hr = np.zeros(gmax, np.int64)
    hu = np.zeros(gmax, np.int64)
    dummy = np.zeros(1, np.int64)
    for g in range(lo, hi):
        q = group_q[g]
        h0 = hist_off[q]
        G = hist_off[q + 1] - h0
        s = starts[g]
        m = lens[g]
        c, d = _sweep(lists, s, m, gclass, dummy, False, fw, G)
        for t in range(m):
            hr[gclass[lists[s + t]]] += 1
        for k in range(G):
            hu[k] = hist[h0 + k] - hr[k]
        c2, d2 = _versus(hr, hu, G)
        cdz[g, 0] = c + c2
        cdz[g, 1] = d + d2
        cdz[g, 2] = _within(hu, G)
        for k in range(G):
            hr[k] = 0
            hu[k] = 0


@njit(cache=True, nogil=True)
def _set_positions(lists, s, m, where, on):  # pragma: no cover - numba
    """``where[j] = t`` for the judgment ``j`` at position ``t`` of ``lists[s:s + m]`` (off: -1)."""
    for t in range(m):
        where[lists[s + t]] = t if on else -1


@njit(cache=True, nogil=True)
def _retrieval_hists(
    lists, sa, ma, sb, mb, gclass, pos_b, in_a, hist, h0, G, hists
):  # pragma: no cover - numba
    """Per grade class, the judgments retrieved by both runs, A only, B only and neither
    into ``hists`` rows 0..3 (zero on entry)."""
    h_rr, h_ru, h_ur, h_uu = hists[0], hists[1], hists[2], hists[3]
    for t in range(ma):
        j = lists[sa + t]
        if pos_b[j] >= 0:
            h_rr[gclass[j]] += 1
        else:
            h_ru[gclass[j]] += 1
    for t in range(mb):
        j = lists[sb + t]
        if in_a[j] < 0:
            h_ur[gclass[j]] += 1
    for k in range(G):
        h_uu[k] = hist[h0 + k] - h_rr[k] - h_ru[k] - h_ur[k]


@njit(cache=True, nogil=True)
def _correct_in_both(
    lists, sa, ma, sb, mb, gclass, pos_b, in_a, hists, G, tree, fw
):  # pragma: no cover - numba
    """Pairs both runs order correctly, a dominance count (one Fenwick tree per grade class
    over B's positions); ``tree`` and ``fw`` are zero on entry and exit."""
    h_rr, h_uu = hists[0], hists[3]
    npp = 0
    width = mb + 1
    n_rr = 0
    for t in range(ma):
        j = lists[sa + t]
        k = gclass[j]
        p = pos_b[j]
        if p >= 0:  # b retrieved by both: 2-D query over classes > k, B-positions < p
            for kk in range(k + 1, G):
                npp += _fw_sum(tree, kk * width, p)
            _fw_add(tree, k * width, mb, p, 1)
            _fw_add(fw, 0, G, k, 1)
            n_rr += 1
        else:  # b retrieved by A only: any earlier doc retrieved by both, higher grade
            npp += n_rr - _fw_sum(fw, 0, k + 1)
    for x in range(G * width):
        tree[x] = 0
    for x in range(G + 1):
        fw[x] = 0
    n_rr = 0
    for t in range(mb):  # b retrieved by B only
        j = lists[sb + t]
        k = gclass[j]
        if in_a[j] >= 0:
            _fw_add(fw, 0, G, k, 1)
            n_rr += 1
        else:
            npp += n_rr - _fw_sum(fw, 0, k + 1)
    for x in range(G + 1):
        fw[x] = 0
    above = 0  # b unretrieved by both: every doc retrieved by both with a higher grade
    for k in range(G - 1, -1, -1):
        npp += h_uu[k] * above
        above += h_rr[k]
    return npp


@njit(cache=True, nogil=True)
def pair_tables(lo, hi, q_of, side_a, side_b, graded, n_judg, max_len, out):  # pragma: no cover
    """Joint counts of two runs' pair variables per (run pair, query ``q_of[i]``) item.

    ``out[i, 3 * x + y]`` counts the pairs run A orders ``x`` and run B ``y`` (0 correct,
    1 both unretrieved, 2 wrong): the doubly-correct cell by :func:`_correct_in_both`,
    the others from histograms and the single-run counts. O((m_a + m_b) G log m_b + G^2).
    """
    s_a, m_a, cdz_a = side_a
    s_b, m_b, cdz_b = side_b
    lists, gclass, hist_off, hist = graded
    gmax = 1
    for q in range(hist_off.shape[0] - 1):
        gmax = max(gmax, hist_off[q + 1] - hist_off[q])
    pos_b = np.full(n_judg, -1, np.int64)
    in_a = np.full(n_judg, -1, np.int64)
    tree = np.zeros(gmax * (max_len + 2), np.int64)
    fw = np.zeros(gmax + 1, np.int64)
    hists = np.zeros((4, gmax), np.int64)  # retrieved by both, A only, B only, neither
    for i in range(lo, hi):
        q = q_of[i]
        h0 = hist_off[q]
        G = hist_off[q + 1] - h0
        sa = s_a[i]
        ma = m_a[i]
        sb = s_b[i]
        mb = m_b[i]
        _set_positions(lists, sb, mb, pos_b, True)
        _set_positions(lists, sa, ma, in_a, True)
        _retrieval_hists(lists, sa, ma, sb, mb, gclass, pos_b, in_a, hist, h0, G, hists)
        n00 = _within(hists[3], G)
        # both unretrieved by A: B's order of its documents A misses, and vs UU
        c, d = _sweep(lists, sb, mb, gclass, in_a, True, fw, G)
        c2, d2 = _versus(hists[2], hists[3], G)
        n0p = c + c2
        n0m = d + d2
        # both unretrieved by B
        c, d = _sweep(lists, sa, ma, gclass, pos_b, True, fw, G)
        c2, d2 = _versus(hists[1], hists[3], G)
        np0 = c + c2
        nm0 = d + d2
        npp = _correct_in_both(lists, sa, ma, sb, mb, gclass, pos_b, in_a, hists, G, tree, fw)
        npm = cdz_a[i, 0] - npp - np0
        nmp = cdz_b[i, 0] - npp - n0p
        nmm = cdz_a[i, 1] - nmp - nm0
        out[i, 0] = npp
        out[i, 1] = np0
        out[i, 2] = npm
        out[i, 3] = n0p
        out[i, 4] = n00
        out[i, 5] = n0m
        out[i, 6] = nmp
        out[i, 7] = nm0
        out[i, 8] = nmm
        _set_positions(lists, sb, mb, pos_b, False)
        _set_positions(lists, sa, ma, in_a, False)
        for k in range(G):
            for row in range(4):
                hists[row, k] = 0


@njit(cache=True, nogil=True)
def _h2_part(a, b):  # pragma: no cover - numba
    """(a + b) * H2(a / (a + b)) in bits, 0 when either count is 0."""
    if a == 0 or b == 0:
        return 0.0
    n = a + b
    return -(a * np.log2(a / n) + b * np.log2(b / n))


_DENSE_MAX_K = 12  # 3**12 codes: two 4 MB count tables per call


@njit(cache=True, nogil=True)
def _active_docs(grp, starts, lens, lists, act):  # pragma: no cover - numba
    """Number the judgments some run of the item retrieves in ``act`` (was -1); returns
    ``(docs, n_act)``, ``docs[a]`` the judgment numbered ``a``."""
    n_act_max = 0
    for s in range(grp.shape[0]):
        g = grp[s]
        if g >= 0:
            n_act_max += lens[g]
    docs = np.empty(n_act_max, np.int64)
    n_act = 0
    for s in range(grp.shape[0]):
        g = grp[s]
        if g < 0:
            continue
        for t in range(lens[g]):
            j = lists[starts[g] + t]
            if act[j] < 0:
                act[j] = n_act
                docs[n_act] = j
                n_act += 1
    return docs, n_act


@njit(cache=True, nogil=True)
def _active_positions(grp, starts, lens, lists, act, n_act, big):  # pragma: no cover - numba
    """``pos[a, s]``: the rank of active document ``a`` in run ``s`` (``big``: not retrieved)."""
    k_sys = grp.shape[0]
    pos = np.full((n_act, k_sys), big, np.int64)
    for s in range(k_sys):
        g = grp[s]
        if g < 0:
            continue
        for t in range(lens[g]):
            pos[act[lists[starts[g] + t]], s] = t
    return pos


@njit(cache=True, nogil=True)
def _patterns(pos, n_act, k_sys, big):  # pragma: no cover - numba
    """Base-3 retrieval pattern of each active document (digit 1 = retrieved) and its negation."""
    pat = np.zeros(n_act, np.int64)
    npat = np.zeros(n_act, np.int64)
    for a in range(n_act):
        p3 = np.int64(1)
        for s in range(k_sys):
            if pos[a, s] < big:
                pat[a] += p3
                npat[a] += 2 * p3
            p3 *= 3
    return pat, npat


@njit(cache=True, nogil=True)
def _by_class(cls, n_act, G):  # pragma: no cover - numba
    """Active documents sorted by grade class, each class's first index, and sum of squares."""
    srt = np.argsort(cls, kind="mergesort")
    first = np.zeros(G + 1, np.int64)  # first sorted index of class k
    for a in range(n_act):
        first[cls[a] + 1] += 1
    for k in range(G):
        first[k + 1] += first[k]
    act_sq = 0
    for k in range(G):
        act_sq += (first[k + 1] - first[k]) ** 2
    return srt, first, act_sq


@njit(cache=True, nogil=True)
def _active_pair_records(
    pos, srt, first, cls, n_act, k_sys, keys, wa, wb
):  # pragma: no cover - numba
    """One record per active pair (higher grade first): the min of its sign vector's code and
    its negation's, ``wa``/``wb`` the side; returns the records written."""
    r = 0
    for ia in range(n_act):
        a = srt[ia]
        for ib in range(first[cls[a]]):
            b = srt[ib]
            code = np.int64(0)
            neg = np.int64(0)
            p3 = np.int64(1)
            for s in range(k_sys):
                pa = pos[a, s]
                pb = pos[b, s]
                if pa < pb:
                    code += p3
                    neg += 2 * p3
                elif pa > pb:
                    code += 2 * p3
                    neg += p3
                p3 *= 3
            if code <= neg:
                keys[r] = code
                wa[r] = 1
            else:
                keys[r] = neg
                wb[r] = 1
            r += 1
    return r


@njit(cache=True, nogil=True)
def _unretrieved_records(
    pat, npat, cls, n_act, h_uu, G, keys, wa, wb, r
):  # pragma: no cover - numba
    """Records of the pairs with a document no run retrieves, from grade histograms: two per
    active document, one for the zero vector; returns the records written in all."""
    below = np.zeros(G + 1, np.int64)  # UU docs with class < k
    for k in range(G):
        below[k + 1] = below[k] + h_uu[k]
    for a in range(n_act):
        lower = below[cls[a]]  # a is the higher-graded doc: vector = pattern
        higher = below[G] - below[cls[a] + 1]  # the UU doc is higher: vector = -pattern
        if pat[a] <= npat[a]:
            keys[r] = pat[a]
            wa[r] = lower
            keys[r + 1] = pat[a]
            wb[r + 1] = higher
        else:
            keys[r] = npat[a]
            wb[r] = lower
            keys[r + 1] = npat[a]
            wa[r + 1] = higher
        r += 2
    keys[r] = 0
    wa[r] = _within(h_uu, G)
    return r + 1


@njit(cache=True, nogil=True)
def _entropy_dense(keys, wa, wb, r, tab_a, tab_b, seen, distinct):  # pragma: no cover - numba
    """Sum over codes of (a + b) H2 in bits, in tables indexed by code (left as found); O(r)."""
    h = 0.0
    nd = 0
    for x in range(r):
        key = keys[x]
        if not seen[key]:
            seen[key] = True
            distinct[nd] = key
            nd += 1
        tab_a[key] += wa[x]
        tab_b[key] += wb[x]
    for x in range(nd):
        key = distinct[x]
        if key == 0:
            h += tab_a[key] + tab_b[key]  # the zero vector: Q is a fair coin
        else:
            h += _h2_part(tab_a[key], tab_b[key])
        tab_a[key] = 0
        tab_b[key] = 0
        seen[key] = False
    return h


@njit(cache=True, nogil=True)
def _entropy_sorted(keys, wa, wb, r):  # pragma: no cover - numba
    """As :func:`_entropy_dense`, grouping the records by sorting their codes (many systems)."""
    h = 0.0
    order = np.argsort(keys[:r])
    x = 0
    while x < r:
        key = keys[order[x]]
        sa = 0
        sb = 0
        while x < r and keys[order[x]] == key:
            sa += wa[order[x]]
            sb += wb[order[x]]
            x += 1
        if key == 0:
            h += sa + sb  # the zero vector: Q is a fair coin
        else:
            h += _h2_part(sa, sb)
    return h


@njit(cache=True, nogil=True)
def joint_ric(
    lo, hi, q_of, groups, starts, lens, lists, gclass, hist_off, hist, n_judg, out
):  # pragma: no cover
    """Joint RIC ``I(R_1, ..., R_k; Q)`` per (set of runs, query) item (NaN: no pair).

    ``groups[i]``: the item's k groups (-1: no ranking). Pairs of retrieved (*active*)
    documents are compared; the rest are counted from grade histograms. Sign vectors
    are base-3 codes (k <= 39), a vector and its negation one class of H(Q | R),
    counted in a dense table of 3^k slots for k <= 12, else sorted.
    """
    k_sys = groups.shape[1]
    act = np.full(n_judg, -1, np.int64)
    n_codes = 3**k_sys if k_sys <= _DENSE_MAX_K else 1
    dense = k_sys <= _DENSE_MAX_K
    tab_a = np.zeros(n_codes, np.int64)
    tab_b = np.zeros(n_codes, np.int64)
    seen = np.zeros(n_codes, np.bool_)
    distinct = np.empty(n_codes, np.int64)
    big = np.int64(1) << 62
    for i in range(lo, hi):
        q = q_of[i]
        h0 = hist_off[q]
        G = hist_off[q + 1] - h0
        n_pairs = _within(hist[h0 : h0 + G], G)
        if n_pairs == 0:
            out[i] = np.nan
            continue
        grp = groups[i]
        docs, n_act = _active_docs(grp, starts, lens, lists, act)
        pos = _active_positions(grp, starts, lens, lists, act, n_act, big)
        cls = np.empty(n_act, np.int64)
        h_uu = np.empty(G, np.int64)
        for k in range(G):
            h_uu[k] = hist[h0 + k]
        for a in range(n_act):
            cls[a] = gclass[docs[a]]
            h_uu[cls[a]] -= 1
        pat, npat = _patterns(pos, n_act, k_sys, big)
        # active docs by grade class: a's lower-graded partners are a prefix
        srt, first, act_sq = _by_class(cls, n_act, G)
        # records: canonical code (min of code and negated code), counts on each side
        n_rec = (n_act * n_act - act_sq) // 2 + 2 * n_act + 1
        keys = np.empty(n_rec, np.int64)
        wa = np.zeros(n_rec, np.int64)
        wb = np.zeros(n_rec, np.int64)
        r = _active_pair_records(pos, srt, first, cls, n_act, k_sys, keys, wa, wb)
        r = _unretrieved_records(pat, npat, cls, n_act, h_uu, G, keys, wa, wb, r)
        if dense:
            h = _entropy_dense(keys, wa, wb, r, tab_a, tab_b, seen, distinct)
        else:
            h = _entropy_sorted(keys, wa, wb, r)
        out[i] = 1.0 - h / n_pairs
        for a in range(n_act):
            act[docs[a]] = -1


@njit(cache=True, nogil=True)
def concordance(xr, yr, ny):  # pragma: no cover - numba
    """Concordant and discordant pairs of ``xr`` (ascending) and ``yr`` (dense ranks
    ``0..ny-1``), ties in either counting in neither; O(n log n)."""
    n = xr.shape[0]
    fw = np.zeros(ny + 1, np.int64)
    c = 0
    d = 0
    n_in = 0
    i = 0
    while i < n:
        e = i
        while e < n and xr[e] == xr[i]:
            e += 1
        for t in range(i, e):
            y = yr[t]
            c += _fw_sum(fw, 0, y)
            d += n_in - _fw_sum(fw, 0, y + 1)
        for t in range(i, e):
            _fw_add(fw, 0, ny, yr[t], 1)
            n_in += 1
        i = e
    return c, d
