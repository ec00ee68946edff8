"""Kernels over ranked lists: grouping, trec_eval ordering, and ad-hoc measures.

Inputs are contiguous arrays: ``int32`` codes and grades, ``float64`` scores,
``int64`` offsets. Groups are (run, query) pairs. The group kernels take a
range ``[lo, hi)`` of groups and write only those groups' output slots;
``fasteval.parallel`` runs ranges concurrently (the kernels release the GIL).

Relevance values inside a ranking follow trec_eval's ``form_res_rels``:
a judged grade ``>= 0``; ``NONPOOL`` (-1) for a document absent from the
qrels; ``UNJUDGED`` (-2) for a qrels entry with a negative grade.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from fasteval.kernels.text import Str, _equal2, _hash

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
GM_BPREF = 22
RPREC_MULT = 23
UTILITY = 24
BING = 25
G = 26
NDCG_REL = 27
RNDCG = 28
RELATIVE_P = 29
SET_RELATIVE_P = 30
SET_MAP = 31
RBP = 32
RBP_RESID = 33
UNJ = 34
DCG = 35
IDEAL_DCG = 36
ERR = 37
NERR = 38
NCG = 39
JUDGED = 40
JK_DCG = 41
JK_NDCG = 42
NDCG_EXP = 43
DCG_EXP = 44
HITS = 45
COMPAT = 46
ACCURACY = 47
# the C/W/L family (cwl_eval): params (T or p, min_rel, max_rel, k)
INST = 48
INSQ = 49
BPM = 50
SDCG = 51
NERR8 = 52
NERR9 = 53
NERR10 = 54
NERR11 = 55
RBP_BIN = 56
CWL_DEPTH = 1000  # cwl_eval's max_n: rankings cut, or padded with zero gain, to 1000

ERR_GMAX = 4.0  # gdeval's maximum grade for ERR's stopping probabilities


# Kernel arguments that travel together, each built once per batch with fixed dtypes
# (numba compiles one signature for each). Strings are kernels.text.Str.


class Rankings(NamedTuple):
    """Run rows grouped by (run, query): group ``g`` is rows ``perm[start[g]:end[g]]``.

    ``order`` is the order groups are visited in; ``table_q`` each group's query
    in the qrels tables (:class:`QrelsTable`).
    """

    perm: np.ndarray  # int64
    order: np.ndarray  # int64
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    table_q: np.ndarray  # int32


class QrelsTable(NamedTuple):
    """Each query's judged documents (grouped by query) and their hash table."""

    docs: Str
    rel: np.ndarray  # int32 grade of each judgment
    t_off: np.ndarray  # query q's slots: t_off[q]:t_off[q + 1]
    t_slots: np.ndarray  # int64 judgment index, -1 for an empty slot
    t_hash: np.ndarray  # uint64


class Ranked(NamedTuple):
    """Outputs of :func:`rank_groups`, one slot per ranked position (and group)."""

    rel: np.ndarray  # int32
    row: np.ndarray  # int64
    jdx: np.ndarray  # int64
    dup: np.ndarray  # bool
    sorted: np.ndarray  # bool per group


class Groups(NamedTuple):
    """Ranked (run, query) groups: positions ``start[g]:end[g]`` of ``rel``, query ``q[g]``."""

    start: np.ndarray  # int64
    end: np.ndarray  # int64
    q: np.ndarray  # int32
    rel: np.ndarray  # int32


class QueryStats(NamedTuple):
    """Per query: relevant and judged non-relevant counts, the ideal ranking's gains."""

    num_rel: np.ndarray  # int64
    num_nonrel: np.ndarray  # int64
    ideal_off: np.ndarray  # int64
    idcg: np.ndarray  # float64, cumulative
    ideal_g: np.ndarray  # float64


class Plan(NamedTuple):
    """Measure columns: column ``c`` is family ``fam[c]``, parameters ``params[p0[c]:p1[c]]``."""

    fam: np.ndarray  # int32
    p0: np.ndarray  # int64
    p1: np.ndarray  # int64
    params: np.ndarray  # float64


class Gains(NamedTuple):
    """Gain tables of the gain-based families (see :func:`evaluate_groups`)."""

    col_spec: np.ndarray
    lut: np.ndarray
    spec_off: np.ndarray
    ideal: np.ndarray
    top_pos: np.ndarray
    rbp_lut: np.ndarray


class Opts(NamedTuple):
    """Scalar options of :func:`evaluate_groups` (always these Python types)."""

    level: int
    max_depth: int  # -1: none
    judged_only: bool
    round_mode: int  # 9 or 10
    num_docs: float


@njit(cache=True, nogil=True)
def group_rows(run, qcode, q_lut, n_q, n_runs):  # pragma: no cover - numba
    """Group rows by (run, query): a stable counting sort, skipped if already grouped.

    The query of row ``i`` is ``q_lut[qcode[i]]``. Returns ``(perm, starts)``:
    rows ``perm[starts[k]:starts[k+1]]`` belong to group ``k = run * n_q + query``.
    """
    n = run.shape[0]
    n_keys = n_runs * n_q
    starts = np.zeros(n_keys + 1, np.int64)
    grouped = True
    prev = -1
    for i in range(n):
        k = run[i] * n_q + q_lut[qcode[i]]
        if k < prev:
            grouped = False
        prev = k
        starts[k + 1] += 1
    for k in range(n_keys):
        starts[k + 1] += starts[k]
    perm = np.empty(n, np.int64)
    if grouped:
        for i in range(n):
            perm[i] = i
        return perm, starts
    fill = starts[:-1].copy()
    for i in range(n):
        k = run[i] * n_q + q_lut[qcode[i]]
        perm[fill[k]] = i
        fill[k] += 1
    return perm, starts


@njit(cache=True, nogil=True)
def _next_pow2(x):
    c = 16
    while c < x:
        c *= 2
    return c


def qrels_table_offsets(qr_off: np.ndarray) -> np.ndarray:
    """Slot offsets of the per-query hash tables (a power of two >= 2m + 2 each)."""
    m = np.diff(qr_off)
    cap = np.maximum(16, 2 ** np.ceil(np.log2(2 * m + 2)).astype(np.int64))
    return np.concatenate([[0], np.cumsum(cap)]).astype(np.int64)


@njit(cache=True, nogil=True)
def build_qrels_tables(
    lo, hi, qbuf, qs, qe, qr_off, qr_rows, t_off, slots, hashes, dup
):  # pragma: no cover
    """Fill the hash tables of queries ``lo..hi`` with their judged document ids.

    Judgment ``j`` (grouped by query) has its document id at
    ``qbuf[qs[j]:qe[j]]``: the ids are copied together per query, so a
    query's table and ids stay in cache while its rankings are judged.
    Query ``q``'s table is ``slots[t_off[q]:t_off[q+1]]`` (judgment indices
    ``j``, -1 = empty) with the ids' hashes beside them; ``dup[q]`` gets the
    qrels row (``qr_rows[j]``) of a judgment that repeats an earlier
    judgment of the same document.
    """
    for q in range(lo, hi):
        base = t_off[q]
        mask = t_off[q + 1] - base - 1
        for j in range(qr_off[q], qr_off[q + 1]):
            h = _hash(qbuf, qs[j], qe[j])
            slot = np.int64(h & np.uint64(mask))
            while True:
                u = slots[base + slot]
                if u == -1:
                    slots[base + slot] = j
                    hashes[base + slot] = h
                    break
                if hashes[base + slot] == h and _equal2(qbuf, qs[u], qe[u], qbuf, qs[j], qe[j]):
                    if dup[q] < 0:
                        dup[q] = qr_rows[j]
                    break
                slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def _cmp_bytes(buf, s1, e1, s2, e2):
    n1 = e1 - s1
    n2 = e2 - s2
    m = n1 if n1 < n2 else n2
    for k in range(m):
        a = buf[s1 + k]
        b = buf[s2 + k]
        if a != b:
            return -1 if a < b else 1
    if n1 == n2:
        return 0
    return -1 if n1 < n2 else 1


@njit(cache=True, nogil=True)
def _before(a, b, score, f32, buf, d_s, d_e):
    """Row ``a`` ranks strictly above row ``b``: higher score, then larger doc id (trec_eval).

    With ``f32`` scores compare as C ``float`` (trec_eval <= 9).
    """
    sa = score[a]
    sb = score[b]
    if f32:
        sa = np.float64(np.float32(sa))
        sb = np.float64(np.float32(sb))
    if sa != sb:
        return sa > sb
    return _cmp_bytes(buf, d_s[a], d_e[a], d_s[b], d_e[b]) > 0


@njit(cache=True, nogil=True)
def _order(rows, score, f32, buf, d_s, d_e):  # pragma: no cover - numba
    """Local indices of ``rows`` in trec_eval order: score descending, then doc id descending.

    Sorting is by the numeric key alone (a stable merge sort, skipped
    when the rows are already in score order, the usual case for run files);
    only runs of equal scores then compare document ids, by insertion sort
    when short and merge sort when long.
    """
    n = rows.shape[0]
    key = np.empty(n, np.float64)
    mono = True
    for i in range(n):
        s = score[rows[i]]
        if f32:
            s = np.float64(np.float32(s))
        key[i] = -s
        if i > 0 and key[i] < key[i - 1]:
            mono = False
    idx = np.arange(n) if mono else _merge_sort(key, rows, buf, d_s, d_e, False)
    i = 0
    while i < n:
        j = i + 1
        while j < n and key[idx[j]] == key[idx[i]]:
            j += 1
        m = j - i
        if m > 16:
            sub = np.empty(m, np.int64)
            for k in range(m):
                sub[k] = rows[idx[i + k]]
            loc = _merge_sort(key, sub, buf, d_s, d_e, True)
            tie = idx[i:j].copy()
            for k in range(m):
                idx[i + k] = tie[loc[k]]
        elif m > 1:
            for k in range(i + 1, j):
                v = idx[k]
                t = k
                while (
                    t > i
                    and _cmp_bytes(
                        buf,
                        d_s[rows[v]],
                        d_e[rows[v]],
                        d_s[rows[idx[t - 1]]],
                        d_e[rows[idx[t - 1]]],
                    )
                    > 0
                ):
                    idx[t] = idx[t - 1]
                    t -= 1
                idx[t] = v
        i = j
    return idx


@njit(cache=True, nogil=True)
def _merge_sort(key, rows, buf, d_s, d_e, by_doc):  # pragma: no cover - numba
    """A stable order (local indices) of ``rows``: a bottom-up merge sort.

    ``by_doc``: doc id descending, byte-wise (``key`` unused); otherwise
    ``key[i]`` ascending. Hand-written because numba's ``np.argsort(...,
    kind="mergesort")`` adds about a second to a cold compile.
    """
    n = rows.shape[0]
    idx = np.arange(n)
    tmp = np.empty(n, np.int64)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if by_doc:
                    a = rows[idx[j]]
                    b = rows[idx[i]]
                    right_first = _cmp_bytes(buf, d_s[a], d_e[a], d_s[b], d_e[b]) > 0
                else:
                    right_first = key[idx[j]] < key[idx[i]]
                if right_first:
                    tmp[k] = idx[j]
                    j += 1
                else:
                    tmp[k] = idx[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = idx[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = idx[j]
                j += 1
                k += 1
            lo += 2 * width
        idx, tmp = tmp, idx
        width *= 2
    return idx


@njit(cache=True, nogil=True)
def rank_groups(lo, hi, docs, score, f32, rk, table, out):  # pragma: no cover - numba
    """Judge and order every (run, query) ranking, in parallel over groups.

    ``docs`` (:class:`Str`) holds the runs' document ids, ``score`` their
    scores (compared as float32 when ``f32``), ``rk`` (:class:`Rankings`)
    the groups, ``table`` (:class:`QrelsTable`) the judgments, ``out``
    (:class:`Ranked`) receives the result.

    Groups are visited in the order ``g_order[lo:hi]`` (all runs of a query
    together, so the query's judgments stay in cache). For group ``g`` (rows
    ``perm[g_start[g]:g_end[g]]`` in input order) each document id is hashed
    once and looked up in a group-local set (a repeat of an id seen earlier
    in the input is flagged in ``out_dup``) and in the query's qrels table
    (grade, ``NONPOOL`` or ``UNJUDGED`` into ``out_rel``).
    Rows are then put in trec_eval order (score descending, doc id
    descending, byte-wise); groups already in order are only checked.
    ``out_row`` receives the input row at each ranked position and
    ``out_jdx`` the judgment of that document (index into ``qr_rel`` and
    ``qbuf[qs[j]:qe[j]]``, the judgments grouped by query; -1 if none).
    ``out_sorted[g]`` is set for groups that needed sorting.
    """
    buf, d_s, d_e = docs
    perm, g_order, g_start, g_end, group_q = rk
    qdocs, qr_rel, t_off, t_slots, t_hash = table
    qbuf, qs, qe = qdocs
    out_rel, out_row, out_jdx, out_dup, out_sorted = out
    for gi in range(lo, hi):
        g = g_order[gi]
        s = g_start[g]
        n = g_end[g] - s
        if n == 0:
            continue
        q = group_q[g]
        rows = perm[s : s + n]
        hs = np.empty(n, np.uint64)
        grade = np.empty(n, np.int32)
        jud = np.empty(n, np.int64)
        dup = np.zeros(n, np.bool_)
        cap = _next_pow2(2 * n + 2)
        seen = np.full(cap, -1, np.int64)
        base = t_off[q]
        qmask = t_off[q + 1] - base - 1
        for i in range(n):
            r = rows[i]
            a = d_s[r]
            b = d_e[r]
            h = _hash(buf, a, b)
            hs[i] = h
            slot = np.int64(h & np.uint64(cap - 1))
            while True:
                u = seen[slot]
                if u == -1:
                    seen[slot] = i
                    break
                if hs[u] == h and _equal2(buf, d_s[rows[u]], d_e[rows[u]], buf, a, b):
                    dup[i] = True
                    break
                slot = (slot + 1) & (cap - 1)
            gv = NONPOOL
            jq = np.int64(-1)
            slot = np.int64(h & np.uint64(qmask))
            while True:
                u = t_slots[base + slot]
                if u == -1:
                    break
                if t_hash[base + slot] == h and _equal2(qbuf, qs[u], qe[u], buf, a, b):
                    gv = qr_rel[u] if qr_rel[u] >= 0 else UNJUDGED
                    jq = u
                    break
                slot = (slot + 1) & qmask
            grade[i] = gv
            jud[i] = jq
        ordered = True
        for i in range(1, n):
            if _before(rows[i], rows[i - 1], score, f32, buf, d_s, d_e):
                ordered = False
                break
        if ordered:
            for i in range(n):
                out_rel[s + i] = grade[i]
                out_row[s + i] = rows[i]
                out_jdx[s + i] = jud[i]
                out_dup[s + i] = dup[i]
        else:
            out_sorted[g] = True
            order = _order(rows, score, f32, buf, d_s, d_e)
            for i in range(n):
                o = order[i]
                out_rel[s + i] = grade[o]
                out_row[s + i] = rows[o]
                out_jdx[s + i] = jud[o]
                out_dup[s + i] = dup[o]


@njit(cache=True, nogil=True)
def _recall_cutoff(p, num_rel, round_mode):
    """Recall fraction -> relevant-doc count: v9 ``(long)(p*R+0.9)``, v10 ``lround(p*R)``."""
    x = p * num_rel
    if round_mode == 9:
        return np.int64(math.floor(x + 0.9))
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1.0
    return np.int64(r)


@njit(cache=True, nogil=True)
def _iprec(c, num_rel_ret, num_ret, smax, relpos):
    if c > num_rel_ret:
        return 0.0
    if num_rel_ret == 0:
        return 0.0  # trec_eval: 0/num_ret (and 0 for an empty ranking)
    c = max(c, 1)
    return smax[relpos[c - 1]]


@njit(cache=True, nogil=True)
def _gain(lut, r, lut_top):
    """trec_eval's ``get_gain``: the gain of grade ``r`` (0 for levels outside the table)."""
    if r + 2 > lut_top:
        return 0.0
    return lut[r + 2]


# slots of the fused gain walk's output (see _gain_walk)
GW_NDCG = 0
GW_DCG = 1
GW_IDEAL_DCG = 2
GW_NDCG_REL = 3
GW_RNDCG = 4
GW_G = 5
GW_SIZE = 6


@njit(cache=True, nogil=True)
def _gain_walk(rels, n, lut, ig, top_pos, R, out):  # pragma: no cover - numba
    """ndcg (custom gains), dcg, ideal_dcg, ndcg_rel, Rndcg and G in one walk, as trec_eval 10.

    ``lut`` maps grade + 2 to gain; ``ig`` is the query's ideal gain vector
    (positive gains only, in trec_eval's order: levels by gain, highest first);
    ``top_pos`` whether trec_eval's walk over gain levels starts at a positive
    gain. The loops follow m_ndcg.c, m_ndcg_rel.c, m_Rndcg.c and m_G.c step by
    step, since their quirks (where averages are taken) are the measure; the six
    share the walk over the ranking and the ideal, so one walk fills ``out[GW_*]``
    for all of them with the same floating-point operations each would do alone.
    G (m_G.c) discounts a gain by the log of the cost so far, the ideal gain at
    that rank (at least 1) summed, minus the gain so far.
    """
    m = ig.shape[0]
    top = lut.shape[0]
    rdcg = 0.0
    idcg = 0.0
    acc_rel = 0.0  # ndcg_rel
    cnt_rel = 0
    acc_r = 0.0  # Rndcg
    cnt_r = 0
    sum_res = 0.0  # G
    sum_cost = 0.0
    res_g = 0.0
    old = ig[0] if m > 0 else 0.0
    prev_pos = top_pos
    i = 0
    # walk 1: ranking and ideal together, while the ideal gain is positive
    while i < n and prev_pos:
        rg = _gain(lut, rels[i], top)
        gi = ig[i] if i < m else 0.0
        sum_res += rg
        sum_cost += gi if gi >= 1.0 else 1.0
        if rg != 0.0:
            res_g += rg / math.log2(2.0 + sum_cost - sum_res)
        if gi != old:
            if idcg > 0.0:
                acc_r += rdcg / idcg
                cnt_r += 1
            old = gi
        if rg != 0.0:
            rdcg += rg / math.log2(i + 2.0)
        if gi > 0.0:
            idcg += gi / math.log2(i + 2.0)
        if rg > 0.0:
            acc_rel += rdcg / idcg
            cnt_rel += 1
        prev_pos = gi > 0.0
        i += 1
    # walk 2: the rest of the ranking
    rest = i < n
    while i < n:
        rg = _gain(lut, rels[i], top)
        gi = ig[i] if i < m else 0.0
        sum_res += rg
        sum_cost += gi if gi >= 1.0 else 1.0
        if rg != 0.0:
            res_g += rg / math.log2(2.0 + sum_cost - sum_res)
            rdcg += rg / math.log2(i + 2.0)
        if rg > 0.0:
            acc_rel += rdcg / idcg
            cnt_rel += 1
        i += 1
    if rest and idcg > 0.0:
        acc_r += rdcg / idcg
        cnt_r += 1
    # walk 3: the rest of the ideal
    while prev_pos:
        gi = ig[i] if i < m else 0.0
        if gi != old:
            if idcg > 0.0:
                acc_r += rdcg / idcg
                cnt_r += 1
            old = gi
        if gi > 0.0:
            idcg += gi / math.log2(i + 2.0)
        prev_pos = gi > 0.0
        i += 1
    out[GW_NDCG] = rdcg / idcg if idcg > 0.0 else 0.0
    out[GW_DCG] = rdcg
    out[GW_IDEAL_DCG] = idcg
    v = 0.0
    if m > 0 and idcg > 0.0:
        acc_rel += (m - cnt_rel) * rdcg / idcg
        v = acc_rel / m if acc_rel > 0.0 else 0.0
    out[GW_NDCG_REL] = v
    out[GW_RNDCG] = acc_r / cnt_r if cnt_r > 0 and R > 0 else 0.0
    sum_ideal = 0.0
    for j in range(m):
        sum_ideal += ig[j]
    out[GW_G] = res_g / sum_ideal if sum_ideal > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _err(grades, n, k):
    """gdeval's ERR@k: sum_r 1/r R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^gmax."""
    acc = 0.0
    keep = 1.0
    for i in range(min(n, k)):
        g = grades[i]
        if g > 0:
            r = (2.0**g - 1.0) / 2.0**ERR_GMAX
            acc += keep * r / (i + 1.0)
            keep *= 1.0 - r
    return acc


@njit(cache=True, nogil=True)
def _jk_dcg(rels, n, lut, ig, use_ideal):
    """DCG with Jarvelin & Kekalainen's original discount: g_1 + sum_{i>=2} g_i / log2(i)."""
    m = ig.shape[0] if use_ideal else n
    acc = 0.0
    for i in range(m):
        g = ig[i] if use_ideal else _gain(lut, rels[i], lut.shape[0])
        if i == 0:
            acc += g
        else:
            acc += g / math.log2(i + 1.0)
    return acc


@njit(cache=True, nogil=True)
def _exp_dcg(grades, k):  # pragma: no cover - numba
    """DCG of the first ``k`` grades with exponential gains: sum (2^g - 1) / log2(i + 2), g > 0."""
    d = 0.0
    for i in range(k):
        g = grades[i]
        if g > 0:
            d += (2.0**g - 1.0) / math.log2(i + 2.0)
    return d


@njit(cache=True, nogil=True)
def _compat(rels, n, ideal, p, normalize):  # pragma: no cover - numba
    """Compatibility (Clarke et al.): RBO of the ranking with the ideal ranking, over depth.

    ``ideal`` holds the positive judged grades, best first. Within a grade the ideal
    ranking puts the retrieved documents in ranking order (ir_measures breaks the
    ideal's ties by the run's scores), so a retrieved relevant document at rank ``i``
    is at ideal rank ``#(grades above) + #(same grade ranked above it)``; it is in
    both prefixes from depth ``max(i, ideal rank) + 1`` on.
    """
    npos = ideal.shape[0]
    depth = max(n, npos)
    if depth == 0:
        return 0.0
    enters = np.zeros(depth, np.int64)
    top = np.int64(ideal[0]) if npos > 0 else 0
    seen = np.zeros(top + 1, np.int64)
    for i in range(n):
        g = rels[i]
        if g > 0:
            higher = 0
            while higher < npos and ideal[higher] > g:
                higher += 1
            at = higher + seen[g]
            seen[g] += 1
            enters[max(i, at)] += 1
    score = 0.0
    best = 0.0
    norm = 0.0
    w = 1.0
    overlap = 0
    for t in range(depth):
        overlap += enters[t]
        score += w * overlap / (t + 1.0)
        best += w * min(t + 1, npos) / (t + 1.0)
        norm += w
        w *= p
    score /= norm
    best /= norm
    if normalize and best > 0.0:
        score /= best
    return score


@njit(cache=True, nogil=True)
def _cwl(rels, n, fam, a, lo, hi, k):  # pragma: no cover - numba
    """Expected utility per item of a C/W/L measure (Moffat et al.; cwl_eval).

    Gains over cwl_eval's 1000 positions: a judged grade clipped to ``[lo, hi]`` and
    scaled to ``[0, 1]`` (RBP_BIN: 1 if the grade is >= ``lo``); 0 for a document not
    in the qrels and past the ranking's end. ``c_i`` is the measure's continuation
    probability at rank ``i``; ``W_i = prod_{j<i} c_j / sum_m prod_{j<m} c_j`` and the
    value is ``sum_i W_i g_i``.
    """
    depth = CWL_DEPTH
    gains = np.zeros(depth, np.float64)
    for i in range(min(n, depth)):
        r = rels[i]
        if r == NONPOOL:
            continue
        gr = max(r, 0)
        if fam == RBP_BIN:
            gains[i] = 1.0 if gr >= lo else 0.0
        else:
            gains[i] = (min(max(gr, lo), hi) - lo) / (hi - lo)
    log2 = math.log(2.0)
    cum = 0.0
    cont = 1.0  # prod_{j<i} c_j
    total = 0.0
    eu = 0.0
    for i in range(depth):
        g = gains[i]
        cum += g
        rank = i + 1.0
        total += cont
        eu += cont * g
        if fam == RBP_BIN:
            c = a
        elif fam == INST:
            t_i = a - cum
            c = ((rank + a + t_i - 1.0) / (rank + a + t_i)) ** 2.0
        elif fam == INSQ:
            c = ((rank + 2.0 * a - 1.0) / (rank + 2.0 * a)) ** 2.0
        elif fam == BPM:
            c = 1.0 if cum < a and rank < k else 0.0
        elif fam == SDCG:
            c = (math.log(rank + 1.0) / log2) / (math.log(rank + 2.0) / log2) if rank < k else 0.0
        elif fam == NERR8:
            c = 1.0 - g if i < k - 1 else 0.0
        elif fam == NERR9:
            c = (rank / (rank + 1.0)) * (1.0 - g) if i < k - 1 else 0.0
        elif fam == NERR10:
            c = a * (1.0 - g)
        else:  # NERR11
            c = ((rank + 2.0 * a - 1.0) / (rank + 2.0 * a)) ** 2.0 * (1.0 - g)
        cont *= c
    return eu / total


@njit(cache=True, nogil=True)
def evaluate_groups(lo, hi, groups, stats, plan, gains, opts, out):  # pragma: no cover - numba
    """Compute every planned measure column for every (run, query) group in one pass.

    ``groups`` (:class:`Groups`), ``stats`` (:class:`QueryStats`), ``plan``
    (:class:`Plan`), ``gains`` (:class:`Gains`), ``opts`` (:class:`Opts`);
    ``out[g, c]`` receives column ``c`` of group ``g``.

    ``rel`` holds, per ranked position of each group, the judged grade or
    ``NONPOOL`` / ``UNJUDGED`` (see ``rank_groups``). Column ``c`` is family ``col_fam[c]``
    with parameters ``params[col_p0[c]:col_p1[c]]``. Gain-based columns use gain
    table ``s = col_spec[c]``: ``gain_lut[s]`` (grade + 2 -> gain), the ideal
    gains of query ``q`` in ``ideal_gains[spec_off[s, q]:spec_off[s, q + 1]]``,
    ``top_pos[s, q]``; rbp's gains (normalised per query as trec_eval does)
    are ``rbp_lut[s * n_q + q]``.
    """
    starts, ends, group_q, rel = groups
    num_rel_q, num_nonrel_q, ideal_off, idcg, ideal_g = stats
    col_fam, col_p0, col_p1, params = plan
    col_spec, gain_lut, spec_off, ideal_gains, top_pos, rbp_lut = gains
    level, max_depth, judged_only, round_mode, num_docs = opts
    n_q = spec_off.shape[1] - 1
    n_cols = col_fam.shape[0]
    n_spec = spec_off.shape[0]
    gw = np.zeros((n_spec, GW_SIZE), np.float64)  # fused gain walk per gain table
    gw_done = np.zeros(n_spec, np.bool_)
    need_loop = False
    for c in range(n_cols):
        f = col_fam[c]
        if f == BPREF or f == INFAP or f == GM_BPREF:
            need_loop = True
    for g in range(lo, hi):
        s = starts[g]
        q = group_q[g]
        n = ends[g] - s
        if max_depth >= 0 and n > max_depth:
            n = max_depth
        rels = rel[s : s + n].copy()
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
        bing = 0.0
        for i in range(n):
            r = rels[i]
            if r >= level:
                relpos[nrr] = i
                nrr += 1
                ap += nrr / (i + 1.0)
                bing += 1.0 / math.log2(3.0 + i - nrr)
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
        gw_done[:] = False
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
            elif f == BPREF or f == GM_BPREF:
                v = bpref
            elif f == INFAP:
                v = infap
            elif f == RECIP_RANK:
                # optional cutoff (ir_measures RR@k)
                if nrr > 0 and (col_p1[c] == p0 or relpos[0] < params[p0]):
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
                sp = col_spec[c]
                if sp > 0:
                    if not gw_done[sp]:
                        ig = ideal_gains[spec_off[sp, q] : spec_off[sp, q + 1]]
                        _gain_walk(rels, n, gain_lut[sp], ig, top_pos[sp, q], R, gw[sp])
                        gw_done[sp] = True
                    v = gw[sp, GW_NDCG]
                elif npos > 0 and n > 0:
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
            elif f == RPREC_MULT:
                # trec_eval's cutoff (long)(x * R + 0.9) in both versions
                k = np.int64(math.floor(params[p0] * R + 0.9))
                if k > 0:
                    v = (cum_rel[min(k, n) - 1] if n > 0 else 0) / k
            elif f == UTILITY:
                v = (
                    params[p0] * nrr
                    + params[p0 + 1] * (n - nrr)
                    + params[p0 + 2] * (R - nrr)
                    + params[p0 + 3] * (num_docs + nrr - n - R)
                )
            elif f == BING:
                if nrr > 0:
                    v = bing / R
            elif f == RELATIVE_P:
                k = np.int64(params[p0])
                if R > 0 and n > 0:
                    v = cum_rel[min(k, n) - 1] / min(k, R)
            elif f == SET_RELATIVE_P:
                if n > 0 and R > 0:
                    v = nrr / min(n, R)
            elif f == SET_MAP:
                if n > 0 and R > 0:
                    v = (nrr * nrr) / (n * R)
            elif f == UNJ:
                k = np.int64(params[p0])
                cnt = 0
                for i in range(min(k, n)):
                    if rels[i] == NONPOOL or rels[i] == UNJUDGED:
                        cnt += 1
                v = cnt / k
            elif f == RBP_RESID:
                pp = params[p0]
                cur = 1.0
                acc = 0.0
                cnt = 0
                for i in range(n):
                    if rels[i] < 0:
                        cnt += 1
                        acc += cur
                    cur *= pp
                if cnt > 0:
                    v = cur + (1.0 - pp) * acc
            elif f == RBP:
                lut = rbp_lut[col_spec[c] * n_q + q]
                pp = params[p0]
                cur = 1.0
                acc = 0.0
                for i in range(n):
                    gn = _gain(lut, rels[i], lut.shape[0])
                    if gn != 0.0:
                        acc += gn * cur
                    cur *= pp
                v = (1.0 - pp) * acc
            elif f == ERR:
                v = _err(rels, n, np.int64(params[p0]))
            elif f == NERR:
                k = np.int64(params[p0])
                best = _err(ideal_g[io : io + npos], npos, k)
                if best > 0.0:
                    v = _err(rels, n, k) / best
            elif f == NCG:
                k = np.int64(params[p0])
                best = 0.0
                for i in range(min(k, npos)):
                    best += ideal_g[io + i]
                if best > 0.0:
                    got = 0.0
                    for i in range(min(k, n)):
                        if rels[i] > 0:
                            got += rels[i]
                    v = got / best
            elif f == JUDGED:
                k = min(np.int64(params[p0]), n)
                if k > 0:
                    cnt = 0
                    for i in range(k):
                        if rels[i] != NONPOOL:  # negative qrels grades are judged
                            cnt += 1
                    v = cnt / k
            elif f == HITS:
                k = np.int64(params[p0])
                if n > 0:
                    v = cum_rel[min(k, n) - 1]
            elif f == DCG_EXP or f == NDCG_EXP:
                k = np.int64(params[p0])
                v = _exp_dcg(rels, min(k, n))
                if f == NDCG_EXP:
                    best = _exp_dcg(ideal_g[io : io + npos], min(k, npos))
                    v = v / best if best > 0.0 else 0.0
            elif f == COMPAT:
                v = _compat(rels, n, ideal_g[io : io + npos], params[p0], params[p0 + 1] != 0.0)
            elif f == ACCURACY:
                kk = n if col_p1[c] == p0 else min(np.int64(params[p0]), n)
                nonrel = 0
                n_rel = 0
                above = 0
                for i in range(kk):
                    if rels[i] >= level:
                        above += nonrel
                        n_rel += 1
                    else:
                        nonrel += 1
                if n_rel > 0:
                    v = 1.0 - above / (nonrel * n_rel) if nonrel > 0 else 1.0
            elif f >= INST and f <= RBP_BIN:
                v = _cwl(rels, n, f, params[p0], params[p0 + 1], params[p0 + 2], params[p0 + 3])
            elif f == JK_DCG or f == JK_NDCG:
                sp = col_spec[c]
                lut = gain_lut[sp]
                ig = ideal_gains[spec_off[sp, q] : spec_off[sp, q + 1]]
                v = _jk_dcg(rels, n, lut, ig, False)
                if f == JK_NDCG:
                    best = _jk_dcg(rels, n, lut, ig, True)
                    v = v / best if best > 0.0 else 0.0
            elif f == G or f == NDCG_REL or f == RNDCG or f == DCG or f == IDEAL_DCG:
                sp = col_spec[c]
                if not gw_done[sp]:
                    ig = ideal_gains[spec_off[sp, q] : spec_off[sp, q + 1]]
                    _gain_walk(rels, n, gain_lut[sp], ig, top_pos[sp, q], R, gw[sp])
                    gw_done[sp] = True
                if f == NDCG_REL:
                    v = gw[sp, GW_NDCG_REL]
                elif f == RNDCG:
                    v = gw[sp, GW_RNDCG]
                elif f == DCG:
                    v = gw[sp, GW_DCG]
                elif f == G:
                    v = gw[sp, GW_G]
                else:
                    v = gw[sp, GW_IDEAL_DCG]
            out[g, c] = v
