"""trec_eval's ``relstring``: the relevance values of the top documents, as a string.

Returned in a ``text`` column (``value`` null), per query only, as trec_eval. One
character per document of the first ``N`` (after ``-M``, ``-J``), as ``m_relstring.c``:
the grade ``0``-``9``; ``>`` above 9; ``-`` not in the qrels; ``.`` a negative grade
(pooled, unjudged); ``<`` any other value (unreachable here).
"""

from __future__ import annotations

import numpy as np

from fasteval.columns import offsets
from fasteval.engine.encode import Encoded
from fasteval.kernels.families import NONPOOL, UNJUDGED


def _ragged(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``starts[g] + i`` for ``i < counts[g]``, and the CSR offsets of groups."""
    off = offsets(counts)
    gid = np.repeat(np.arange(counts.shape[0]), counts)
    return starts[gid] + (np.arange(off[-1]) - off[gid]), off


def relstrings(
    enc: Encoded,
    length: int,
    *,
    max_depth: int | None = None,
    judged_only: bool = False,
) -> list[str]:
    """Each evaluated group's relstring (``""``: empty ranking), after ``-M``
    (``max_depth``) and ``-J`` (``judged_only``: unjudged documents dropped first)."""
    starts = enc.starts.astype(np.int64)
    lim = (enc.ends - enc.starts).astype(np.int64)
    if max_depth is not None:
        lim = np.minimum(lim, int(max_depth))
    if judged_only:
        pos, off = _ragged(starts, lim)
        keep = enc.rel[pos] >= 0
        kept_before = np.concatenate([[0], np.cumsum(keep)])
        # rank of each kept document among the kept ones of its group
        gid = np.repeat(np.arange(lim.shape[0]), lim)
        rank = kept_before[:-1] - kept_before[off[gid]]
        keep &= rank < length
        pos = pos[keep]
        off = offsets(np.bincount(gid[keep], minlength=lim.shape[0]))
    else:
        pos, off = _ragged(starts, np.minimum(lim, max(int(length), 0)))
    rel = enc.rel[pos].astype(np.int64)
    chars = np.full(rel.shape, ord("<"), np.uint8)
    digit = (rel >= 0) & (rel <= 9)
    chars[digit] = (ord("0") + rel[digit]).astype(np.uint8)
    chars[rel > 9] = ord(">")
    chars[rel == NONPOOL] = ord("-")
    chars[rel == UNJUDGED] = ord(".")
    text = chars.tobytes().decode("ascii")
    return [text[off[g] : off[g + 1]] for g in range(off.shape[0] - 1)]
