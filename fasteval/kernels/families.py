"""Measure family codes and the relevance codes inside a ranking.

A family's code is computed from its name by :func:`code`, here and in the
measure registry alike: the kernel names the code of each family it computes
(``P = code("P")`` beside its branch in :mod:`fasteval.kernels.ranking`) and a
registry entry gets its code from its name, so no list of numbers is kept in
step between the two (``tests/unit/test_families.py`` checks that no two
families share a code). Relevance values inside a ranking follow trec_eval's
``form_res_rels``: a judged grade ``>= 0``; ``NONPOOL`` (-1) for a document
absent from the qrels; ``UNJUDGED`` (-2) for a qrels entry with a negative grade.
"""

from __future__ import annotations

from zlib import crc32

NONPOOL = -1
UNJUDGED = -2

CWL_DEPTH = 1000  # cwl_eval's max_n: rankings cut, or padded with zero gain, to 1000
ERR_GMAX = 4.0  # gdeval's maximum grade for ERR's stopping probabilities


def code(name: str) -> int:
    """The kernel code of measure family ``name``: a non-negative 31-bit number."""
    return crc32(name.encode()) & 0x7FFFFFFF
