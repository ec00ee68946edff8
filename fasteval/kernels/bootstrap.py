"""Kernels for paired significance tests over many pairs of systems.

Pair ``k`` compares rows ``pa[k]`` and ``pb[k]`` of the per-query scores ``X``; every
pair uses the same resamples and sign flips, drawn in Python from a seed. Sums run in
query order, as ``tests/reference/significance.py`` does, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from fasteval.kernels.jit import njit


@njit(cache=True, nogil=True)
def t_value(total, sq, n):  # pragma: no cover - numba
    """t = mean / (sd / sqrt(n)) from the sum and the squared deviations (sd = 0: 0 or +-inf)."""
    mean = total / n
    if sq <= 0.0:
        if mean == 0.0:
            return 0.0
        return math.copysign(math.inf, mean)
    sd = math.sqrt(sq / (n - 1))
    return mean / (sd / math.sqrt(n))


@njit(cache=True, nogil=True)
def paired_tests(lo, hi, X, pa, pb, idx, signs, tol, t_obs, asl_boot, p_rand):  # pragma: no cover
    """Per pair: the t statistic, the bootstrap ASL (Sakai 2006: the share of resamples
    ``idx`` of the centred differences with ``|t*| >= |t|``) and the randomisation
    p-value (Fisher: the share of sign flips ``signs`` with ``|sum(z * s)| >= |sum z| -
    tol * sum |z|``); an empty ``idx`` or ``signs`` skips its test."""
    n = X.shape[1]
    n_boot = idx.shape[0]
    n_rand = signs.shape[0]
    z = np.empty(n, np.float64)
    w = np.empty(n, np.float64)
    for k in range(lo, hi):
        a = pa[k]
        b = pb[k]
        total = 0.0
        absum = 0.0
        for i in range(n):
            z[i] = X[a, i] - X[b, i]
            total += z[i]
            absum += abs(z[i])
        mean = total / n
        sq = 0.0
        for i in range(n):
            w[i] = z[i] - mean
            sq += w[i] * w[i]
        t = t_value(total, sq, n)
        t_obs[k] = t
        at = abs(t)
        hits = 0
        for r in range(n_boot):
            s = 0.0
            for i in range(n):
                s += w[idx[r, i]]
            m = s / n
            q = 0.0
            for i in range(n):
                d = w[idx[r, i]] - m
                q += d * d
            if abs(t_value(s, q, n)) >= at:
                hits += 1
        asl_boot[k] = hits / n_boot if n_boot > 0 else math.nan
        limit = abs(total) - tol * absum
        hits = 0
        for r in range(n_rand):
            s = 0.0
            for i in range(n):
                s += z[i] * signs[r, i]
            if abs(s) >= limit:
                hits += 1
        p_rand[k] = hits / n_rand if n_rand > 0 else math.nan
