"""Kernels for histogram analysis (DO and HSA, SPEC section 4).

Two kernels:

* ``group_histograms`` walks the ranked positions of (run, query) groups
  ``[lo, hi)``, labels each position (relevant / non-relevant / left out),
  takes its value (the score, or the normalised rank ``1 - (rank-1)/depth``),
  min-max normalises it and counts it into the group's own histogram row.
  Each group writes only its own rows, so ranges run concurrently
  (``fasteval.parallel``); pooled per-run histograms are sums of rows.
* ``do_hsa`` turns histogram rows into DO, the HSA slope and the number of
  supported bins.

Labels come from ``judg_label[jdx[i]]`` for a judged position (1 relevant,
0 non-relevant, -1 left out, e.g. not in the non-relevant sample) and
``unjudged_label`` for a position without a judgment (``jdx[i] < 0``).
The value of position ``i`` is ``score[row[i]]``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fasteval.kernels.jit import njit

# Arguments of group_histograms that travel together, built with fixed dtypes
# (numba compiles one signature).


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
    """Label, value, normalise and bin the positions of groups ``lo..hi``.

    Parameters (arrays are per group unless said otherwise)
    ----------
    starts, ends : int64, the group's positions ``starts[g]:ends[g]``.
    labels : :class:`Labels` (``jdx``, ``judg_label``, ``unjudged_label``).
    values : :class:`Values` (``score``, ``row``, ``rank_mode``, ``normalize``);
        normalising uses bounds ``bmin[g], bmax[g]``, a NaN bound meaning
        "the group's own min / max".
    stats_only : bool, only write ``gmin, gmax, n_rel, n_nonrel``.
    out : :class:`Hists` (``h_r, h_nr`` int64 (n_groups, n_bins) and the stats).
    """
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
    """DO, HSA slope and supported-bin count of every histogram row.

    Supported bins: both counts > 0; bin centre ``(k + 0.5) / n_bins``.
    DO = sum ln(min(h_r, h_nr)); HSA = least-squares slope of
    ln(h_r / h_nr) on the centre (NaN with fewer than 2 supported bins).
    """
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
