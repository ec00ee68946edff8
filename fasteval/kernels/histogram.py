"""Kernels for histogram analysis (DO and HSA, SPEC section 4).

:func:`group_histograms` bins the labelled values of each (run, query) group's
ranked positions into the group's own rows (pooled histograms are sums of rows);
:func:`do_hsa` turns rows into DO, the HSA slope and the supported bins.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fasteval.kernels.jit import njit


class Labels(NamedTuple):
    """Label of ranked position ``i``: ``judg[jdx[i]]``, or ``unjudged`` when ``jdx[i] < 0``."""

    jdx: np.ndarray  # int64 per position
    judg: np.ndarray  # int8 per judgment: 1, 0 or -1 (left out)
    unjudged: int  # 0 (count as non-relevant) or -1 (leave out)


class Values(NamedTuple):
    """Value of ranked position ``i``: ``score[row[i]]``, or its normalised rank."""

    score: np.ndarray  # float64 per input row
    row: np.ndarray  # int64 per position
    rank_mode: bool  # value = 1 - (i - start) / depth instead of the score
    normalize: bool  # min-max normalise


class Hists(NamedTuple):
    """Outputs of :func:`group_histograms`, one row or slot per group."""

    h_r: np.ndarray  # int64 (n_groups, n_bins)
    h_nr: np.ndarray  # int64 (n_groups, n_bins)
    gmin: np.ndarray  # float64
    gmax: np.ndarray  # float64
    n_rel: np.ndarray  # int64
    n_nonrel: np.ndarray  # int64


@njit(cache=True, nogil=True)
def group_histograms(
    lo, hi, starts, ends, labels, values, bmin, bmax, stats_only, out
):  # pragma: no cover - numba
    """Label, value, min-max normalise (bounds ``bmin[g]``, ``bmax[g]``; NaN: the group's
    own) and bin positions ``starts[g]:ends[g]`` of groups ``lo..hi`` into ``out``;
    with ``stats_only``, only the bounds and label counts."""
    jdx, judg_label, unjudged_label = labels
    score, row, rank_mode, normalize = values
    h_r, h_nr, gmin, gmax, n_rel, n_nonrel = out
    n_bins = h_r.shape[1]
    for g in range(lo, hi):
        s = starts[g]
        e = ends[g]
        depth = e - s
        mn = math.inf
        mx = -math.inf
        nr = 0
        nn = 0
        for i in range(s, e):
            j = jdx[i]
            lab = judg_label[j] if j >= 0 else unjudged_label
            if lab < 0:
                continue
            if lab == 1:
                nr += 1
            else:
                nn += 1
            v = 1.0 - (i - s) / depth if rank_mode else score[row[i]]
            mn = min(mn, v)
            mx = max(mx, v)
        gmin[g] = mn
        gmax[g] = mx
        n_rel[g] = nr
        n_nonrel[g] = nn
        if stats_only:
            continue
        a = mn if math.isnan(bmin[g]) else bmin[g]
        b = mx if math.isnan(bmax[g]) else bmax[g]
        width = b - a
        for k in range(n_bins):
            h_r[g, k] = 0
            h_nr[g, k] = 0
        for i in range(s, e):
            j = jdx[i]
            lab = judg_label[j] if j >= 0 else unjudged_label
            if lab < 0:
                continue
            v = 1.0 - (i - s) / depth if rank_mode else score[row[i]]
            if normalize:
                v = (v - a) / width if width > 0.0 else 1.0
            k = math.floor(v * n_bins)
            if k >= n_bins:
                k = n_bins - 1
            elif k < 0:
                k = 0
            if lab == 1:
                h_r[g, k] += 1
            else:
                h_nr[g, k] += 1


@njit(cache=True, nogil=True)
def do_hsa(h_r, h_nr, out_do, out_hsa, out_sup):  # pragma: no cover - numba
    """Per histogram row, over bins with both counts > 0: DO = sum ln(min(h_r, h_nr)), HSA =
    the least-squares slope of ln(h_r / h_nr) on the bin centre (NaN below 2 bins), the count."""
    n_rows, n_bins = h_r.shape
    for g in range(n_rows):
        m = 0
        do = 0.0
        sb = 0.0
        so = 0.0
        for k in range(n_bins):
            r = h_r[g, k]
            nr = h_nr[g, k]
            if r > 0 and nr > 0:
                m += 1
                do += math.log(min(r, nr))
                sb += (k + 0.5) / n_bins
                so += math.log(r / nr)
        out_do[g] = do
        out_sup[g] = m
        if m < 2:
            out_hsa[g] = np.nan
            continue
        mb = sb / m
        mo = so / m
        num = 0.0
        den = 0.0
        for k in range(n_bins):
            r = h_r[g, k]
            nr = h_nr[g, k]
            if r > 0 and nr > 0:
                db = (k + 0.5) / n_bins - mb
                num += db * (math.log(r / nr) - mo)
                den += db * db
        out_hsa[g] = num / den
