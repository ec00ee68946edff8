"""Kernels for qrels variants: re-grade ranked positions after dropping judgments; subsample.

Works on blocks ``[lo, hi)`` of ``block`` positions each and writes only
those slots; ``fasteval.parallel`` runs block ranges concurrently.
"""

from __future__ import annotations

import numpy as np

from fasteval.kernels.jit import njit


@njit(cache=True, nogil=True)
def regrade(lo, hi, block, rel, jdx, new_index, nonpool, rel_out, jdx_out):  # pragma: no cover
    """``jdx_out = new_index[jdx]`` (-1 stays -1); ``rel_out`` is ``nonpool`` where it became -1."""
    end = min(hi * block, rel.shape[0])
    for i in range(lo * block, end):
        j = jdx[i]
        if j < 0:
            jdx_out[i] = -1
            rel_out[i] = rel[i]
        else:
            nj = new_index[j]
            jdx_out[i] = nj
            rel_out[i] = rel[i] if nj >= 0 else nonpool


@njit(cache=True, nogil=True)
def remask(lo, hi, block, rel, jdx, kept1, nonpool, rel_out):  # pragma: no cover
    """``rel_out = rel``, but ``nonpool`` where the position's judgment is dropped (``kept1 =
    [1, keep...]`` as int32, indexed by ``jdx + 1``: no branch)."""
    end = min(hi * block, rel.shape[0])
    for i in range(lo * block, end):
        k = kept1[jdx[i] + 1]
        rel_out[i] = k * rel[i] + (1 - k) * nonpool


@njit(cache=True, nogil=True)
def keep_smallest(off, members, key, quota, keep):  # pragma: no cover
    """Set ``keep`` for the ``quota[g]`` members ``members[off[g]:off[g+1]]`` with the smallest
    keys of each group ``g`` (ties to the one listed first)."""
    for g in range(off.shape[0] - 1):
        a = off[g]
        b = off[g + 1]
        idx = members[a:b]
        s = np.argsort(key[idx], kind="mergesort")
        for t in range(min(quota[g], b - a)):
            keep[idx[s[t]]] = True
