"""Measure family codes and the relevance codes inside a ranking.

A family's code is :func:`code` of its name, in the kernels (``P = code("P")``) and
the measure registry alike, so no list of numbers is kept in step. Relevance values
follow trec_eval's ``form_res_rels``: a judged grade ``>= 0``; ``NONPOOL`` (-1) not in
the qrels; ``UNJUDGED`` (-2) a negative grade.
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
