"""Kernels of content-based evaluation (SPEC 9): language models over CSR term counts.

Ground-truth models (:func:`build_models`), result models theta_k of ranked lists
(:func:`result_models`) and their closeness (:func:`similarity`, or
:func:`score_lists` in one pass), each over a range ``[lo, hi)`` of items. Dense
``float64`` buffers of vocabulary size are reset only where touched.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fasteval.kernels.jit import njit

JS = 0
KL = 1


class Docs(NamedTuple):
    """The collection: document ``d`` has terms ``terms[off[d]:off[d+1]]`` with ``counts``,
    ``length[d]`` tokens; ``coll_p`` is theta_C over the vocabulary."""

    off: np.ndarray  # int64, read-only
    terms: np.ndarray  # int32, read-only
    counts: np.ndarray  # int32, read-only
    length: np.ndarray  # int64
    coll_p: np.ndarray  # float64


class Mixtures(NamedTuple):
    """Model ``u`` mixes documents ``docs[off[u]:off[u+1]]`` with weights ``wts``."""

    off: np.ndarray  # int64
    docs: np.ndarray  # int32
    wts: np.ndarray  # float64


class LMs(NamedTuple):
    """Sparse LMs: model ``u`` has terms ``term[off[u]:off[u]+n[u]]``, probabilities ``p``."""

    off: np.ndarray  # int64
    n: np.ndarray  # int64
    term: np.ndarray  # int32
    p: np.ndarray  # float64
    plogp: np.ndarray  # float64, p log2 p


class Lists(NamedTuple):
    """Ranked lists ``docs[starts[g]:ends[g]]`` of collection rows (``-1``: missing)."""

    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    docs: np.ndarray  # int32


class Walks(NamedTuple):
    """Per list: documents kept (at most ``k``) and skipped before the ``k``-th kept one."""

    kept: np.ndarray  # int64
    skipped: np.ndarray  # int64


class Units(NamedTuple):
    """Per list: its ground-truth units ``first[g] .. first[g] + n[g]``."""

    first: np.ndarray  # int64
    n: np.ndarray  # int64


class Scoring(NamedTuple):
    """Scalar options of :func:`score_lists` (always these Python types)."""

    k: int
    kind: int  # JS or KL
    lam: float


@njit(cache=True, nogil=True)
def build_models(lo, hi, mix, docs, out):  # pragma: no cover - numba
    """Models ``lo..hi``, each a weighted mixture of documents, ``theta(w) = sum_i a_i c(w, d_i)
    / sum_i a_i |d_i|``: terms, ``p`` and ``p log2 p`` at ``out.off[u]``, their number in
    ``out.n[u]``."""
    m_off, m_docs, m_wts = mix
    doc_off, terms, counts, _, coll_p = docs
    out_off, out_n, out_term, out_p, out_plogp = out
    n_terms = coll_p.shape[0]
    acc = np.zeros(n_terms, np.float64)
    for u in range(lo, hi):
        n = 0
        base = out_off[u]
        total = 0.0
        for i in range(m_off[u], m_off[u + 1]):
            d = m_docs[i]
            a = m_wts[i]
            for e in range(doc_off[d], doc_off[d + 1]):
                t = terms[e]
                if acc[t] == 0.0:
                    out_term[base + n] = t
                    n += 1
                acc[t] += a * counts[e]
                total += a * counts[e]
        for e in range(base, base + n):
            t = out_term[e]
            p = acc[t] / total
            out_p[e] = p
            out_plogp[e] = p * math.log2(p)
            acc[t] = 0.0
        out_n[u] = n


@njit(cache=True, nogil=True)
def result_models(lo, hi, lists, k, count_only, docs, out, walks):  # pragma: no cover - numba
    """Result LMs theta_k of lists ``lo..hi`` (:func:`_walk_list`): terms, ``q`` and ``q log2 q``
    at ``out.off[g]``, their number in ``out.n[g]``; with ``count_only``, only ``out.n[g]``:
    the kept documents' summed distinct terms (room to allocate)."""
    out_off, out_n, out_term, out_q, out_qlogq = out
    out_kept, out_skipped = walks
    acc = np.zeros(1 if count_only else docs.coll_p.shape[0], np.float64)
    for g in range(lo, hi):
        base = 0 if count_only else out_off[g]
        kept, skipped, wsum, nt = _walk_list(g, lists, k, docs, acc, out_term[base:], count_only)
        out_kept[g] = kept
        out_skipped[g] = skipped
        out_n[g] = nt
        if count_only:
            continue
        for e in range(base, base + nt):
            t = out_term[e]
            q = acc[t] / wsum
            out_q[e] = q
            out_qlogq[e] = q * math.log2(q)
            acc[t] = 0.0


@njit(cache=True, nogil=True)
def _load_unit(cur, u, u_off, u_n, u_term, u_p, u_plogp, p_dense, pl_dense):  # pragma: no cover
    """Spread ground-truth model ``u`` into the dense arrays (clearing ``cur``'s); returns ``u``."""
    if cur >= 0:
        for e in range(u_off[cur], u_off[cur] + u_n[cur]):
            p_dense[u_term[e]] = 0.0
            pl_dense[u_term[e]] = 0.0
    for e in range(u_off[u], u_off[u] + u_n[u]):
        p_dense[u_term[e]] = u_p[e]
        pl_dense[u_term[e]] = u_plogp[e]
    return u


@njit(cache=True, nogil=True)
def similarity(
    lo, hi, pair_unit, pair_model, kind, lam, truth, res, coll_p, out_value
):  # pragma: no cover
    """Closeness of ground-truth model ``pair_unit[i]`` to result model ``pair_model[i]``.

    ``JS``: ``1 - JS`` in bits (``p log2 p + q log2 q - 2 m log2 m`` on shared terms);
    ``KL``: ``exp(-KL(theta_u || (1 - lam) theta_r + lam theta_C))`` in nats. NaN for an
    empty ground truth; an empty result scores 0 (JS) or is theta_C alone (KL).
    """
    u_off, u_n, u_term, u_p, u_plogp = truth
    r_off, r_n, r_term, r_q, _ = res
    n_terms = coll_p.shape[0]
    p_dense = np.zeros(n_terms, np.float64)
    pl_dense = np.zeros(n_terms, np.float64)
    q_dense = np.zeros(n_terms, np.float64)
    cur = -1
    for i in range(lo, hi):
        u = pair_unit[i]
        r = pair_model[i]
        if u != cur:
            cur = _load_unit(cur, u, u_off, u_n, u_term, u_p, u_plogp, p_dense, pl_dense)
        a = r_off[r]
        b = a + r_n[r]
        if u_n[u] == 0:
            out_value[i] = np.nan
            continue
        for e in range(a, b):
            q_dense[r_term[e]] = r_q[e]
        if kind == JS:
            out_value[i] = _js_scattered(r_term[a:b], b - a, q_dense, 1.0, p_dense, pl_dense)
        else:
            out_value[i] = _exp_neg_kl(u, lam, truth, q_dense, 1.0, coll_p)
        for e in range(a, b):
            q_dense[r_term[e]] = 0.0


@njit(cache=True, nogil=True)
def score_lists(
    lo, hi, order, lists, units, opts, docs, truth, out_value, walks
):  # pragma: no cover
    """Result model and score of lists ``order[lo:hi]`` in one pass, nothing stored.

    List ``g`` gets the mean over its units ``units.first[g] ..`` (none: NaN) of the
    same values as :func:`similarity`; ``order`` sorts lists by first unit, so a
    single-unit JS score scatters each ground truth once per run of equal units.
    """
    group_unit0, group_units = units
    k, kind, lam = opts
    coll_p = docs.coll_p
    u_off, u_n, u_term, u_p, u_plogp = truth
    out_kept, out_skipped = walks
    n_terms = coll_p.shape[0]
    acc = np.zeros(n_terms, np.float64)
    touched = np.zeros(n_terms, np.int32)
    p_dense = np.zeros(n_terms, np.float64)
    pl_dense = np.zeros(n_terms, np.float64)
    cur = -1
    for i in range(lo, hi):
        g = order[i]
        kept, skipped, wsum, nt = _walk_list(g, lists, k, docs, acc, touched, False)
        out_kept[g] = kept
        out_skipped[g] = skipped
        nu = group_units[g]
        u0 = group_unit0[g]
        if nu == 0:
            out_value[g] = np.nan
        elif kind == JS and nu == 1:
            if u0 != cur:
                cur = _load_unit(cur, u0, u_off, u_n, u_term, u_p, u_plogp, p_dense, pl_dense)
            if u_n[u0] == 0:
                out_value[g] = np.nan
            else:
                out_value[g] = _js_scattered(touched, nt, acc, wsum, p_dense, pl_dense)
        else:
            out_value[g] = _mean_over_units(u0, nu, kind, lam, truth, acc, wsum, nt, coll_p)
        for e in range(nt):
            acc[touched[e]] = 0.0


@njit(cache=True, nogil=True)
def _walk_list(g, lists, k, docs, acc, touched, count_only):  # pragma: no cover - numba
    """theta_k of list ``g``, unnormalised, into ``acc`` (its terms listed in ``touched``).

    Skips documents missing (``-1``) or without tokens, keeps the first ``k`` others
    with weights ``1/log2(i+1)``. Returns ``(kept, skipped, wsum, nt)``: theta_k is
    ``acc / wsum`` over ``nt`` terms (with ``count_only``, ``acc`` is untouched and
    ``nt`` the kept documents' summed distinct terms).
    """
    starts, ends, lst = lists
    doc_off, terms, counts, doc_len, _ = docs
    kept = 0
    skipped = 0
    wsum = 0.0
    nt = 0
    for j in range(starts[g], ends[g]):
        if kept == k:
            break
        d = lst[j]
        if d < 0 or doc_len[d] == 0:
            skipped += 1
            continue
        kept += 1
        if count_only:
            nt += doc_off[d + 1] - doc_off[d]
            continue
        w = 1.0 / math.log2(kept + 1.0)
        a = w / doc_len[d]
        for e in range(doc_off[d], doc_off[d + 1]):
            t = terms[e]
            if acc[t] == 0.0:
                touched[nt] = t
                nt += 1
            acc[t] += a * counts[e]
        wsum += w
    return kept, skipped, wsum, nt


@njit(cache=True, nogil=True)
def _js_scattered(touched, nt, acc, wsum, p_dense, pl_dense):  # pragma: no cover - numba
    """``1 - JS`` (bits) of the result model ``acc / wsum`` (terms ``touched[:nt]``; none: 0)
    to the scattered ground truth."""
    if nt == 0:
        return 0.0
    s = 0.0
    p_in = 0.0
    for e in range(nt):
        t = touched[e]
        p = p_dense[t]
        q = acc[t] / wsum
        if p > 0.0:
            m = 0.5 * (p + q)
            s += pl_dense[t] + q * math.log2(q) - 2.0 * m * math.log2(m)
            p_in += p
        else:
            s += q  # q log2(q / (q/2)), exactly
    return 1.0 - 0.5 * (s + (1.0 - p_in))


@njit(cache=True, nogil=True)
def _exp_neg_kl(u, lam, truth, acc, wsum, coll_p):  # pragma: no cover - numba
    """``exp(-KL(theta_u || (1 - lam) theta_r + lam theta_C))`` in nats, theta_r the result
    model ``acc / wsum`` (0 when ``wsum`` is)."""
    u_off, u_n, u_term, u_p, _ = truth
    kl = 0.0
    for e in range(u_off[u], u_off[u] + u_n[u]):
        t = u_term[e]
        q = acc[t] / wsum if wsum > 0.0 else 0.0
        mix = (1.0 - lam) * q + lam * coll_p[t]
        if mix <= 0.0:
            return 0.0  # exp(-inf)
        kl += u_p[e] * math.log(u_p[e] / mix)
    return math.exp(-kl)


@njit(cache=True, nogil=True)
def _mean_over_units(u0, nu, kind, lam, truth, acc, wsum, nt, coll_p):  # pragma: no cover
    """Mean over units ``u0 .. u0 + nu`` of the result model in ``acc`` scored against each
    (walking each unit's terms; an empty unit makes it NaN)."""
    u_off, u_n, u_term, u_p, u_plogp = truth
    total = 0.0
    for u in range(u0, u0 + nu):
        a_ = u_off[u]
        b_ = a_ + u_n[u]
        if b_ == a_:
            total += np.nan
        elif kind == JS:
            if nt == 0:
                continue  # 0
            # walk the ground truth's terms against the dense result model
            s = 0.0
            q_in = 0.0
            for e in range(a_, b_):
                t = u_term[e]
                p = u_p[e]
                if acc[t] > 0.0:
                    q = acc[t] / wsum
                    m = 0.5 * (p + q)
                    s += u_plogp[e] + q * math.log2(q) - 2.0 * m * math.log2(m)
                    q_in += q
                else:
                    s += p
            total += 1.0 - 0.5 * (s + (1.0 - q_in))
        else:
            total += _exp_neg_kl(u, lam, truth, acc, wsum, coll_p)
    return total / nu
