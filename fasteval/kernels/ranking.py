"""Kernels over ranked lists: grouping, judging and ordering rankings, and the ad-hoc measures.

Groups are (run, query) pairs; a group kernel takes a range ``[lo, hi)`` of groups and
writes only their slots. Relevance values follow trec_eval's ``form_res_rels``
(:mod:`~fasteval.kernels.families`); hashing and the qrels tables live in
:mod:`~fasteval.kernels.hashing`, trec_eval's order in :mod:`~fasteval.kernels.order`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fasteval.kernels import families as fm
from fasteval.kernels import measure_parts as mp
from fasteval.kernels.hashing import (
    compare_bytes,
    hash_ranking,
    judge_ranking,
    load_word,
    seen_slots,
)
from fasteval.kernels.jit import njit
from fasteval.kernels.order import trec_order
from fasteval.kernels.strings import view_data_start
from fasteval.kernels.text import Str


class Rankings(NamedTuple):
    """Run rows grouped by (run, query): group ``g`` is rows ``perm[start[g]:end[g]]`` (an empty
    ``perm``: the identity), visited in ``order``; ``table_q``: its query in the tables."""

    perm: np.ndarray  # int64 (empty: the identity)
    order: np.ndarray  # int64
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    table_q: np.ndarray  # int32


class QrelsTable(NamedTuple):
    """Query ``q``'s hash table ``slots[t_off[q]:t_off[q + 1]]`` of judged documents: a slot is
    0 or ``fingerprint << 32 | (k + 1)`` for entry ``k`` (``ids[k]``, ``rel[k]``, ``jud[k]``;
    in slot order, see :mod:`~fasteval.kernels.hashing`)."""

    t_off: np.ndarray  # int64
    slots: np.ndarray  # uint64
    ids: Str
    rel: np.ndarray  # int32 grade (UNJUDGED for a negative one)
    jud: np.ndarray  # int64 judgment index (into the prepared qrels' judgments)


class Ranked(NamedTuple):
    """Outputs of :func:`rank_groups`, one slot per ranked position (and group)."""

    rel: np.ndarray  # int32
    row: np.ndarray  # int64
    jdx: np.ndarray  # int64
    dup: np.ndarray  # bool


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
    """``(perm, starts)``: rows ``perm[starts[k]:starts[k+1]]`` form group ``k = run * n_q +
    q_lut[qcode[i]]`` (a stable counting sort)."""
    n = run.shape[0]
    n_keys = n_runs * n_q
    starts = np.zeros(n_keys + 1, np.int64)
    for i in range(n):
        starts[run[i] * n_q + q_lut[qcode[i]] + 1] += 1
    for k in range(n_keys):
        starts[k + 1] += starts[k]
    perm = np.empty(n, np.int64)
    fill = starts[:-1].copy()
    for i in range(n):
        k = run[i] * n_q + q_lut[qcode[i]]
        perm[fill[k]] = i
        fill[k] += 1
    return perm, starts


class Scratch(NamedTuple):
    """Per-ranking buffers of :func:`_rank_one`, made once per call for its longest ranking."""

    hs: np.ndarray  # uint64
    grade: np.ndarray  # int32
    jud: np.ndarray  # int64
    dup: np.ndarray  # bool
    seen: np.ndarray  # int64


@njit(cache=True, nogil=True)
def _scratch(lo, hi, rk):  # pragma: no cover - numba
    """:class:`Scratch` for the rankings ``rk.order[lo:hi]``."""
    most = 0
    for gi in range(lo, hi):
        g = rk.order[gi]
        most = max(most, rk.end[g] - rk.start[g])
    return Scratch(
        np.empty(most, np.uint64),
        np.empty(most, np.int32),
        np.empty(most, np.int64),
        np.empty(most, np.bool_),
        np.empty(seen_slots(most), np.int64),
    )


@njit(cache=True, nogil=True)
def rank_groups(lo, hi, docs, score, f32, rk, table, out):  # pragma: no cover - numba
    """Judge and order the rankings ``rk.order[lo:hi]`` (a query's runs together).

    Each id is hashed once and looked up in its query's ``table``
    (:func:`~fasteval.kernels.hashing.judge_ranking`; repeats flagged in ``out.dup``);
    rows are put in trec_eval order (``score`` as float32 when ``f32``), groups already
    in order only checked. ``out.row`` and ``out.jdx`` get
    each position's input row and judgment (-1: none), unless both are empty.
    """
    perm, g_order, g_start, g_end, group_q = rk
    tmp = _scratch(lo, hi, rk)
    for gi in range(lo, hi):
        g = g_order[gi]
        s = g_start[g]
        n = g_end[g] - s
        if n == 0:
            continue
        rows = perm[s : s + n] if perm.shape[0] else np.arange(s, s + n)
        _rank_one(docs, rows, rows, score, f32, group_q[g], table, out, g, s, tmp)


@njit(cache=True, nogil=True)
def rank_view_groups(lo, hi, docs, score, f32, rk, table, out):  # pragma: no cover - numba
    """:func:`rank_groups` for document ids read in place from an Arrow ``string_view``
    array (``docs``, :class:`fasteval.kernels.text.ViewStr`): each ranking's ids and
    scores are copied into small arrays of its own (read from the core's cache), so no
    buffer of every id, nor its offsets, is built beforehand on the calling thread.
    """
    perm, g_order, g_start, g_end, group_q = rk
    tmp = _scratch(lo, hi, rk)
    for gi in range(lo, hi):
        g = g_order[gi]
        s = g_start[g]
        n = g_end[g] - s
        if n == 0:
            continue
        rows = perm[s : s + n] if perm.shape[0] else np.arange(s, s + n)
        own, own_score = _gather_views(docs, rows, score)
        local = np.arange(n)
        _rank_one(own, local, rows, own_score, f32, group_q[g], table, out, g, s, tmp)


@njit(cache=True, nogil=True)
def _gather_views(docs, rows, score):  # pragma: no cover - numba
    """The ids of ``rows`` in a word buffer of their own (:class:`Str`), and their scores:
    a short id's whole 16-byte view is copied, a longer id eight bytes at a time."""
    views, data, bases = docs
    dp = data.ctypes.data
    n = rows.shape[0]
    low = np.uint64(0xFFFFFFFF)
    # the buffer's size first (growing it in the loop is much slower)
    words = 0
    for j in range(n):
        length = np.int64(views[rows[j], 0] & low)
        words += 2 if length <= 12 else (length + 7) // 8
    w = np.empty(max(words, 1), np.uint64)
    d_s = np.empty(n, np.int64)
    d_e = np.empty(n, np.int64)
    own_score = np.empty(n, np.float64)
    p = 0
    for j in range(n):
        r = rows[j]
        own_score[j] = score[r]
        w0 = views[r, 0]
        w1 = views[r, 1]
        length = np.int64(w0 & low)
        if length <= 12:
            w[p] = w0
            w[p + 1] = w1
            d_s[j] = 8 * p + 4
            p += 2
        else:
            src = view_data_start(w1, bases)
            d_s[j] = 8 * p
            k = 0
            while k + 8 <= length:
                w[p] = load_word(dp, src + k)
                p += 1
                k += 8
            t = length - k
            if t > 0:  # the last eight bytes, those already copied shifted out
                w[p] = load_word(dp, src + length - 8) >> np.uint64(8 * (8 - t))
                p += 1
        d_e[j] = d_s[j] + length
    return Str(w.view(np.uint8), d_s, d_e), own_score


@njit(cache=True, nogil=True)
def _rank_one(
    docs, rows, in_rows, score, f32, q, table, out, g, s, tmp
):  # pragma: no cover - numba
    """Judge and order group ``g`` (:func:`rank_groups`): ``rows`` index ``docs`` and ``score``,
    ``in_rows`` are their input rows; its slots in ``out`` start at ``s``; ``tmp``: scratch."""
    buf, d_s, d_e = docs
    n = rows.shape[0]
    hs = tmp.hs[:n]
    grade = tmp.grade[:n]
    jud = tmp.jud[:n]
    dup = tmp.dup[:n]
    hash_ranking(buf, d_s, d_e, rows, hs)
    judge_ranking(buf, d_s, d_e, rows, hs, q, table, grade, jud, dup, tmp.seen)
    ordered = True
    bp = buf.ctypes.data
    for i in range(1, n):
        a = rows[i]
        b = rows[i - 1]
        sa = score[a]
        sb = score[b]
        if f32:
            sa = np.float64(np.float32(sa))
            sb = np.float64(np.float32(sb))
        if sa > sb or (sa == sb and compare_bytes(bp, d_s[a], d_e[a], d_s[b], d_e[b]) > 0):
            ordered = False
            break
    order = np.arange(n) if ordered else trec_order(rows, score, f32, buf, d_s, d_e)
    for i in range(n):
        o = order[i]
        out.rel[s + i] = grade[o]
        out.dup[s + i] = dup[o]
    if out.row.shape[0] > 0:  # (empty: the caller needs the grades alone)
        for i in range(n):
            o = order[i]
            out.row[s + i] = in_rows[o]
            out.jdx[s + i] = jud[o]


# the families evaluate_groups computes (codes as the registry's: kernels.families.code)
NUM_Q = fm.code("num_q")
NUM_RET = fm.code("num_ret")
NUM_REL = fm.code("num_rel")
NUM_REL_RET = fm.code("num_rel_ret")
MAP = fm.code("map")
RPREC = fm.code("Rprec")
BPREF = fm.code("bpref")
RECIP_RANK = fm.code("recip_rank")
IPREC_AT_RECALL = fm.code("iprec_at_recall")
P = fm.code("P")
RECALL = fm.code("recall")
INFAP = fm.code("infAP")
ELEVEN_PT_AVG = fm.code("11pt_avg")
NDCG = fm.code("ndcg")
NDCG_CUT = fm.code("ndcg_cut")
MAP_CUT = fm.code("map_cut")
SUCCESS = fm.code("success")
SET_P = fm.code("set_P")
SET_RECALL = fm.code("set_recall")
SET_F = fm.code("set_F")
NUM_NONREL_JUDGED_RET = fm.code("num_nonrel_judged_ret")
RPREC_MULT = fm.code("Rprec_mult")
UTILITY = fm.code("utility")
BING = fm.code("binG")
G = fm.code("G")
NDCG_REL = fm.code("ndcg_rel")
RNDCG = fm.code("Rndcg")
RELATIVE_P = fm.code("relative_P")
SET_RELATIVE_P = fm.code("set_relative_P")
SET_MAP = fm.code("set_map")
RBP = fm.code("rbp")
RBP_RESID = fm.code("rbp_resid")
UNJ = fm.code("unj")
DCG = fm.code("dcg")
IDEAL_DCG = fm.code("ideal_dcg")
ERR = fm.code("err")
NERR = fm.code("nerr")
NCG = fm.code("ncg")
JUDGED = fm.code("judged")
JK_DCG = fm.code("jk_dcg")
JK_NDCG = fm.code("jk_ndcg")
NDCG_EXP = fm.code("ndcg_exp")
DCG_EXP = fm.code("dcg_exp")
HITS = fm.code("hits")
COMPAT = fm.code("compat")
ACCURACY = fm.code("accuracy")
F1 = fm.code("f1")


@njit(cache=True, nogil=True, inline="always")
def _ranking_of(rel, s, n, opts):  # pragma: no cover - numba
    """A group's relevance values, cut at ``max_depth`` and, with ``judged_only``, judged only."""
    if opts.max_depth >= 0 and n > opts.max_depth:
        n = opts.max_depth
    rels = rel[s : s + n].copy()
    if opts.judged_only:
        m = 0
        for i in range(n):
            if rels[i] >= 0:
                rels[m] = rels[i]
                m += 1
        n = m
    return rels, n


@njit(cache=True, nogil=True, inline="always")
def _walk(rels, n, level, interpolated):  # pragma: no cover - numba
    """One ranking's running counts down to rank ``i``: relevant documents ``cum_rel``,
    precision sums, DCG; ``relpos`` the ranks of the ``nrr`` relevant ones; ``smax[i]`` the
    best precision at ``i`` or below (when ``interpolated``, else empty); the non-pool and
    unjudged counts, binG's sum."""
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
        elif r == fm.NONPOOL:
            nonpool += 1
        elif r == fm.UNJUDGED:
            unjudged += 1
        cum_rel[i] = nrr
        cum_ap[i] = ap
        cum_dcg[i] = dcg
    # suffix maximum of precision, for interpolated precision
    smax = np.empty(n if interpolated else 0, np.float64)
    best = 0.0
    if interpolated:
        for i in range(n - 1, -1, -1):
            best = max(best, cum_rel[i] / (i + 1.0))
            smax[i] = best
    return cum_rel, cum_ap, cum_dcg, relpos, smax, nrr, nonpool, unjudged, bing


@njit(cache=True, nogil=True, inline="always")
def _bpref_infap(rels, n, R, level, num_nonrel):  # pragma: no cover - numba
    """trec_eval's bpref and infAP of one ranking."""
    bpref = 0.0
    infap = 0.0
    nonrel_so_far = 0
    rel_so_far = 0
    pool_unj = 0
    denom = min(num_nonrel, R)
    for j in range(n):
        r = rels[j]
        if r == fm.NONPOOL:
            continue
        if r == fm.UNJUDGED:
            pool_unj += 1
            continue
        if r < level:
            nonrel_so_far += 1
            continue
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
            ) * ((rel_so_far - 1 + 0.00001) / (rel_so_far - 1 + nonrel_so_far + 2 * 0.00001))
    if R > 0:
        bpref /= R
        infap /= R
    return bpref, infap


@njit(cache=True, nogil=True)
def evaluate_groups(lo, hi, groups, stats, plan, gains, opts, out):  # pragma: no cover - numba
    """``out[g, c]``: column ``c`` (family ``plan.fam[c]``, parameters ``params[p0[c]:p1[c]]``)
    of groups ``lo..hi``, every column in one pass over each ranking.

    Gain-based columns use gain table ``s = col_spec[c]``: ``gain_lut[s]`` (grade + 2 ->
    gain), query ``q``'s ideal gains ``ideal_gains[spec_off[s, q]:spec_off[s, q + 1]]``,
    rbp's ``rbp_lut[s * n_q + q]``. One function on purpose: split per family, numba
    passed the per-ranking state between the parts instead of keeping it in registers.
    """
    starts, ends, group_q, rel = groups
    num_rel_q, num_nonrel_q, ideal_off, idcg, ideal_g = stats
    col_fam, col_p0, col_p1, params = plan
    col_spec, gain_lut, spec_off, ideal_gains, top_pos, rbp_lut = gains
    level = opts.level
    round_mode = opts.round_mode
    num_docs = opts.num_docs
    n_q = spec_off.shape[1] - 1
    n_cols = col_fam.shape[0]
    n_spec = spec_off.shape[0]
    gw = np.zeros((n_spec, mp.GW_SIZE), np.float64)  # fused gain walk per gain table
    gw_done = np.zeros(n_spec, np.bool_)
    need_loop = False
    interpolated = False
    for c in range(n_cols):
        f = col_fam[c]
        if f == BPREF or f == INFAP:
            need_loop = True
        if f == IPREC_AT_RECALL or f == ELEVEN_PT_AVG:
            interpolated = True
    for g in range(lo, hi):
        q = group_q[g]
        s = starts[g]
        rels, n = _ranking_of(rel, s, ends[g] - s, opts)
        R = num_rel_q[q]
        cum_rel, cum_ap, cum_dcg, relpos, smax, nrr, nonpool, unjudged, bing = _walk(
            rels, n, level, interpolated
        )
        ap = cum_ap[n - 1] if n > 0 else 0.0
        bpref = 0.0
        infap = 0.0
        if need_loop:
            bpref, infap = _bpref_infap(rels, n, R, level, num_nonrel_q[q])
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
            elif f == MAP:
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
                # optional cutoff (ir_measures RR@k)
                if nrr > 0 and (col_p1[c] == p0 or relpos[0] < params[p0]):
                    v = 1.0 / (relpos[0] + 1.0)
            elif f == IPREC_AT_RECALL:
                cut = mp.recall_cutoff(params[p0], R, round_mode)
                v = mp.iprec(cut, nrr, n, smax, relpos)
            elif f == ELEVEN_PT_AVG:
                p1 = col_p1[c]
                acc = 0.0
                for j in range(p1 - 1, p0 - 1, -1):
                    cut = mp.recall_cutoff(params[j], R, round_mode)
                    acc += mp.iprec(cut, nrr, n, smax, relpos)
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
            elif f == NDCG and col_spec[c] == 0:  # default gains (custom ones: the gain walk)
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
                    if rels[i] == fm.NONPOOL or rels[i] == fm.UNJUDGED:
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
                    gn = mp.gain(lut, rels[i], lut.shape[0])
                    if gn != 0.0:
                        acc += gn * cur
                    cur *= pp
                v = (1.0 - pp) * acc
            elif f == ERR:
                v = mp.err(rels, n, np.int64(params[p0]))
            elif f == NERR:
                k = np.int64(params[p0])
                best = mp.err(ideal_g[io : io + npos], npos, k)
                if best > 0.0:
                    v = mp.err(rels, n, k) / best
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
                        if rels[i] != fm.NONPOOL:  # negative qrels grades are judged
                            cnt += 1
                    v = cnt / k
            elif f == HITS:
                k = np.int64(params[p0])
                if n > 0:
                    v = cum_rel[min(k, n) - 1]
            elif f == F1:
                k = np.int64(params[p0])
                hits = cum_rel[min(k, n) - 1] if n > 0 else 0
                if hits > 0:  # ranx's f1@k, its floating-point order
                    prec = hits / k
                    rec = hits / R
                    v = 2.0 * (prec * rec / (prec + rec))
            elif f == DCG_EXP or f == NDCG_EXP:
                k = np.int64(params[p0])
                v = mp.exp_dcg(rels, min(k, n))
                if f == NDCG_EXP:
                    best = mp.exp_dcg(ideal_g[io : io + npos], min(k, npos))
                    v = v / best if best > 0.0 else 0.0
            elif f == COMPAT:
                v = mp.compat(rels, n, ideal_g[io : io + npos], params[p0], params[p0 + 1] != 0.0)
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
                v = np.nan  # undefined: left out of the table and the mean (ir_measures)
                if n_rel > 0:
                    v = 1.0 - above / (nonrel * n_rel) if nonrel > 0 else 1.0
            elif f in mp.CWL:
                v = mp.cwl(rels, n, f, params[p0], params[p0 + 1], params[p0 + 2], params[p0 + 3])
            elif f == JK_DCG or f == JK_NDCG:
                sp = col_spec[c]
                lut = gain_lut[sp]
                ig = ideal_gains[spec_off[sp, q] : spec_off[sp, q + 1]]
                v = mp.jk_dcg(rels, n, lut, ig, False)
                if f == JK_NDCG:
                    best = mp.jk_dcg(rels, n, lut, ig, True)
                    v = v / best if best > 0.0 else 0.0
            elif f == NDCG or f == G or f == NDCG_REL or f == RNDCG or f == DCG or f == IDEAL_DCG:
                sp = col_spec[c]
                if not gw_done[sp]:
                    ig = ideal_gains[spec_off[sp, q] : spec_off[sp, q + 1]]
                    mp.gain_walk(rels, n, gain_lut[sp], ig, top_pos[sp, q], R, gw[sp])
                    gw_done[sp] = True
                if f == NDCG:
                    v = gw[sp, mp.GW_NDCG]
                elif f == NDCG_REL:
                    v = gw[sp, mp.GW_NDCG_REL]
                elif f == RNDCG:
                    v = gw[sp, mp.GW_RNDCG]
                elif f == DCG:
                    v = gw[sp, mp.GW_DCG]
                elif f == G:
                    v = gw[sp, mp.GW_G]
                else:
                    v = gw[sp, mp.GW_IDEAL_DCG]
            out[g, c] = v
