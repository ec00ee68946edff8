"""Kernels of content-based evaluation (SPEC 9): language models over CSR term counts.

Two functions, both over an index range ``[lo, hi)`` of independent items
(run by :func:`fasteval.parallel.run`; they release the GIL):

- :func:`build_models`: sparse language models, each a weighted mixture of
  documents, ``theta(w) = sum_i a_i c(w, d_i) / sum_i a_i |d_i|``. With
  ``a_i = 1`` that is the LM of the documents' concatenation (the ground
  truth theta_R of SPEC 9).
- :func:`divergences`: for each *pair* (model ``u``, ranked list), the result
  model of the list at depth ``k`` (documents missing from the collection,
  ``-1``, or without tokens skipped and counted; weights ``1/log2(i+1)`` by
  position among those kept) and its similarity to model ``u``:
  ``1 - JS`` in bits (``kind == 0``) or ``exp(-KL(theta_u || (1-lam) theta_k
  + lam theta_C))`` in nats (``kind == 1``).

Each call keeps two dense ``float64`` buffers of vocabulary size and resets
only the entries it touched. Pairs sorted by model reuse the scattered model.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

JS = 0
KL = 1


@njit(cache=True, nogil=True)
def build_models(
    lo, hi, m_off, m_docs, m_wts, doc_off, terms, counts, n_terms, out_off, out_term, out_p, out_n
):  # pragma: no cover - numba
    """Models ``lo..hi``: model ``u`` mixes documents ``m_docs[m_off[u]:m_off[u+1]]``.

    Writes the model's terms and probabilities at ``out_off[u]`` (room for the
    sum of its documents' distinct terms) and their number to ``out_n[u]``
    (0 when the documents hold no token).
    """
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
            out_p[e] = acc[t] / total
            acc[t] = 0.0
        out_n[u] = n


@njit(cache=True, nogil=True)
def divergences(
    lo,
    hi,
    pair_unit,
    pair_start,
    pair_end,
    lst,
    k,
    kind,
    lam,
    u_off,
    u_n,
    u_term,
    u_p,
    doc_off,
    terms,
    counts,
    doc_len,
    coll_p,
    out_value,
    out_kept,
    out_skipped,
):  # pragma: no cover - numba
    """Closeness of model ``pair_unit[i]`` to the result LM of its list ``lst[start:end]``.

    NaN when the model is empty. An empty result model (no document kept)
    scores 0 under JS; under KL it is the collection model alone.
    """
    n_terms = coll_p.shape[0]
    p_dense = np.zeros(n_terms, np.float64)
    q_dense = np.zeros(n_terms, np.float64)
    touched = np.empty(n_terms, np.int32)
    cur = -1
    for i in range(lo, hi):
        u = pair_unit[i]
        if u != cur:
            if cur >= 0:
                for e in range(u_off[cur], u_off[cur] + u_n[cur]):
                    p_dense[u_term[e]] = 0.0
            for e in range(u_off[u], u_off[u] + u_n[u]):
                p_dense[u_term[e]] = u_p[e]
            cur = u
        # result model: first k documents in the collection with tokens
        kept = 0
        skipped = 0
        nt = 0
        wsum = 0.0
        for j in range(pair_start[i], pair_end[i]):
            if kept == k:
                break
            d = lst[j]
            if d < 0 or doc_len[d] == 0:
                skipped += 1
                continue
            kept += 1
            w = 1.0 / math.log2(kept + 1.0)
            a = w / doc_len[d]
            for e in range(doc_off[d], doc_off[d + 1]):
                t = terms[e]
                if q_dense[t] == 0.0:
                    touched[nt] = t
                    nt += 1
                q_dense[t] += a * counts[e]
            wsum += w
        out_kept[i] = kept
        out_skipped[i] = skipped
        if u_n[u] == 0:
            out_value[i] = np.nan
        elif kind == JS:
            if nt == 0:
                out_value[i] = 0.0
            else:
                s = 0.0
                p_in = 0.0
                for e in range(nt):
                    t = touched[e]
                    q = q_dense[t] / wsum
                    p = p_dense[t]
                    if p > 0.0:
                        m = 0.5 * (p + q)
                        s += p * math.log2(p / m) + q * math.log2(q / m)
                        p_in += p
                    else:
                        s += q  # q log2(q / (q/2)), exactly
                # terms of the model outside the result's support: p log2(p / (p/2)) = p
                out_value[i] = 1.0 - 0.5 * (s + (1.0 - p_in))
        else:
            kl = 0.0
            for e in range(u_off[u], u_off[u] + u_n[u]):
                t = u_term[e]
                p = u_p[e]
                q = q_dense[t] / wsum if nt > 0 else 0.0
                mix = (1.0 - lam) * q + lam * coll_p[t]
                if mix <= 0.0:
                    kl = np.inf
                    break
                kl += p * math.log(p / mix)
            out_value[i] = math.exp(-kl)
        for e in range(nt):
            q_dense[touched[e]] = 0.0
