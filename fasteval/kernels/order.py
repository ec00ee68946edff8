"""trec_eval's order of a ranking: score descending, then document id descending, byte-wise.

Scores compare as C ``float`` when ``f32`` (trec_eval <= 9 stores them so) and as
``double`` otherwise.
"""

from __future__ import annotations

import numpy as np

from fasteval.kernels.hashing import compare_bytes
from fasteval.kernels.jit import njit


@njit(cache=True, nogil=True)
def trec_order(rows, score, f32, buf, d_s, d_e):  # pragma: no cover - numba
    """Local indices of ``rows`` in trec_eval order: by score (a merge sort unless already in
    order), then runs of equal scores by doc id (left as they are or reversed when already
    monotone, else an insertion sort when short)."""
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
    idx = np.arange(n) if mono else merge_sort(key, rows, buf, d_s, d_e, False)
    bp = buf.ctypes.data
    i = 0
    while i < n:
        j = i + 1
        while j < n and key[idx[j]] == key[idx[i]]:
            j += 1
        m = j - i
        up = 0  # neighbours whose doc ids rise; -1: a rise, then not (to be sorted)
        for k in range(i + 1, j):
            a = rows[idx[k]]
            b = rows[idx[k - 1]]
            if compare_bytes(bp, d_s[a], d_e[a], d_s[b], d_e[b]) > 0:
                up += 1
            elif up > 0:
                up = -1
                break
        if up == 0:  # already doc id descending
            pass
        elif up == m - 1:  # strictly ascending (runs often list ties so): reversed
            for k in range(m // 2):
                idx[i + k], idx[j - 1 - k] = idx[j - 1 - k], idx[i + k]
        elif m > 16:
            sub = np.empty(m, np.int64)
            for k in range(m):
                sub[k] = rows[idx[i + k]]
            loc = merge_sort(key, sub, buf, d_s, d_e, True)
            tie = idx[i:j].copy()
            for k in range(m):
                idx[i + k] = tie[loc[k]]
        elif m > 1:
            for k in range(i + 1, j):
                v = idx[k]
                a = rows[v]
                t = k
                while t > i:
                    b = rows[idx[t - 1]]
                    if compare_bytes(bp, d_s[a], d_e[a], d_s[b], d_e[b]) <= 0:
                        break
                    idx[t] = idx[t - 1]
                    t -= 1
                idx[t] = v
        i = j
    return idx


@njit(cache=True, nogil=True)
def merge_sort(key, rows, buf, d_s, d_e, by_doc):  # pragma: no cover - numba
    """A stable bottom-up merge sort of ``rows`` (local indices): doc id descending with
    ``by_doc``, else ``key`` ascending (numba's mergesort argsort is slow to compile)."""
    n = rows.shape[0]
    bp = buf.ctypes.data
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
                    right_first = compare_bytes(bp, d_s[a], d_e[a], d_s[b], d_e[b]) > 0
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
