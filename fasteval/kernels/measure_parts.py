"""Per-ranking pieces of the ad-hoc measures: each follows its reference tool's loop
(trec_eval, gdeval, cwl_eval, ir_measures) step by step, floating-point order included.
"""

from __future__ import annotations

import math

import numpy as np

from fasteval.kernels.families import CWL_DEPTH, ERR_GMAX, NONPOOL, code
from fasteval.kernels.jit import njit

# the C/W/L families :func:`cwl` computes (their codes: see kernels.families.code)
INST = code("inst")
INSQ = code("insq")
BPM = code("bpm")
SDCG = code("sdcg")
NERR8 = code("nerr8")
NERR9 = code("nerr9")
NERR10 = code("nerr10")
NERR11 = code("nerr11")
RBP_BIN = code("rbp_bin")
CWL = (INST, INSQ, BPM, SDCG, NERR8, NERR9, NERR10, NERR11, RBP_BIN)


@njit(cache=True, nogil=True)
def recall_cutoff(p, num_rel, round_mode):
    """Recall fraction -> relevant-doc count: v9 ``(long)(p*R+0.9)``, v10 ``lround(p*R)``."""
    x = p * num_rel
    if round_mode == 9:
        return np.int64(math.floor(x + 0.9))
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1.0
    return np.int64(r)


@njit(cache=True, nogil=True)
def iprec(c, num_rel_ret, num_ret, smax, relpos):
    if c > num_rel_ret:
        return 0.0
    if num_rel_ret == 0:
        return 0.0  # trec_eval: 0/num_ret (and 0 for an empty ranking)
    c = max(c, 1)
    return smax[relpos[c - 1]]


@njit(cache=True, nogil=True)
def gain(lut, r, lut_top):
    """trec_eval's ``get_gain``: the gain of grade ``r`` (0 for levels outside the table)."""
    if r + 2 > lut_top:
        return 0.0
    return lut[r + 2]


# slots of the fused gain walk's output (see gain_walk)
GW_NDCG = 0
GW_DCG = 1
GW_IDEAL_DCG = 2
GW_NDCG_REL = 3
GW_RNDCG = 4
GW_G = 5
GW_SIZE = 6


@njit(cache=True, nogil=True)
def gain_walk(rels, n, lut, ig, top_pos, R, out):  # pragma: no cover - numba
    """ndcg (custom gains), dcg, ideal_dcg, ndcg_rel, Rndcg and G into ``out[GW_*]`` in one walk,
    as trec_eval 10's m_ndcg.c, m_ndcg_rel.c, m_Rndcg.c and m_G.c, step by step.

    ``lut``: grade + 2 -> gain; ``ig``: the ideal's positive gains, highest first;
    ``top_pos``: trec_eval's walk over gain levels starts at a positive gain.
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
    # the ranking and the ideal together (ig holds positive gains: past it, gi is 0 and
    # trec_eval's level walk has stopped; top_pos False leaves ig empty)
    for i in range(n):
        rg = gain(lut, rels[i], top)
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
    if top_pos and n > m + 1 and idcg > 0.0:  # the ranking went on past the level walk
        acc_r += rdcg / idcg
        cnt_r += 1
    # the rest of the ideal
    idcg, acc_r, cnt_r = _ideal_rest(ig, n, top_pos and n <= m, old, idcg, rdcg, acc_r, cnt_r)
    out[GW_NDCG] = rdcg / idcg if idcg > 0.0 else 0.0
    out[GW_DCG] = rdcg
    out[GW_IDEAL_DCG] = idcg
    out[GW_RNDCG] = acc_r / cnt_r if cnt_r > 0 and R > 0 else 0.0
    # ndcg_rel: relevant documents not retrieved count at the final nDCG
    out[GW_NDCG_REL] = 0.0
    if m > 0 and idcg > 0.0:
        acc_rel += (m - cnt_rel) * rdcg / idcg
        out[GW_NDCG_REL] = acc_rel / m if acc_rel > 0.0 else 0.0
    sum_ideal = ig.sum()  # G: the discounted gain over the sum of the ideal gains
    out[GW_G] = res_g / sum_ideal if sum_ideal > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _ideal_rest(ig, i, prev_pos, old, idcg, rdcg, acc_r, cnt_r):  # pragma: no cover - numba
    """The end of :func:`gain_walk`: the ideal past the ranking while its gain is positive:
    the ideal DCG and Rndcg's running sum and count."""
    m = ig.shape[0]
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
    return idcg, acc_r, cnt_r


@njit(cache=True, nogil=True)
def err(grades, n, k):
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
def jk_dcg(rels, n, lut, ig, use_ideal):
    """DCG with Jarvelin & Kekalainen's original discount: g_1 + sum_{i>=2} g_i / log2(i)."""
    m = ig.shape[0] if use_ideal else n
    acc = 0.0
    for i in range(m):
        g = ig[i] if use_ideal else gain(lut, rels[i], lut.shape[0])
        if i == 0:
            acc += g
        else:
            acc += g / math.log2(i + 1.0)
    return acc


@njit(cache=True, nogil=True)
def exp_dcg(grades, k):  # pragma: no cover - numba
    """DCG of the first ``k`` grades with exponential gains: sum (2^g - 1) / log2(i + 2), g > 0."""
    d = 0.0
    for i in range(k):
        g = grades[i]
        if g > 0:
            d += (2.0**g - 1.0) / math.log2(i + 2.0)
    return d


@njit(cache=True, nogil=True)
def compat(rels, n, ideal, p, normalize):  # pragma: no cover - numba
    """Compatibility (Clarke et al.): RBO of the ranking with the ideal one (``ideal``: the
    positive grades, best first; ties in the ranking's order, as ir_measures breaks them)."""
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
def cwl(rels, n, fam, a, lo, hi, k):  # pragma: no cover - numba
    """Expected utility per item of a C/W/L measure (Moffat et al.; cwl_eval): ``sum_i W_i g_i``
    over 1000 positions, ``W_i = prod_{j<i} c_j / sum_m prod_{j<m} c_j`` for continuation
    ``c``, gains clipped to ``[lo, hi]`` and scaled to ``[0, 1]`` (RBP_BIN: grade >= ``lo``)."""
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
