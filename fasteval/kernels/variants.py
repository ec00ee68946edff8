"""Kernel for qrels variants: re-grade ranked positions after dropping judgments.

Works on blocks ``[lo, hi)`` of ``block`` positions each and writes only
those slots; ``fasteval.parallel`` runs block ranges concurrently.
"""

from __future__ import annotations

from numba import njit


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
