"""Z-scores of per-query values against a reference (trec_eval ``-Z``).

As ``convert_zscores.c``: a value ``v`` becomes ``(v - mean) / stddev`` with the file's
figures for its query and measure (printed name). With ``stddev`` 0 it is 0 if ``v``
equals the mean, else missing, as is a pair the file lacks; missing is ``-1000000``
(``MISSING_ZSCORE_VALUE``), aggregated like any value.
"""

from __future__ import annotations

import numpy as np

from fasteval.engine.encode import Encoded
from fasteval.io.zscores import MISSING_ZSCORE, ZScores
from fasteval.measures.parser import MeasureSet


def zscore_values(values: np.ndarray, enc: Encoded, measures: MeasureSet, z: ZScores) -> np.ndarray:
    """``values[g, m]`` (groups of ``enc``) as z-scores against ``z`` (a new array)."""
    n_q = len(enc.qids)
    n_m = len(measures)
    mean = np.zeros((n_q, n_m), np.float64)
    std = np.zeros((n_q, n_m), np.float64)
    found = np.zeros((n_q, n_m), np.bool_)
    used_q = np.unique(enc.group_q)
    for j, m in enumerate(measures):
        for q in used_q:
            hit = z.table.get((enc.qids[q], m.name))
            if hit is not None:
                mean[q, j], std[q, j] = hit
                found[q, j] = True
    gm, gs, gf = mean[enc.group_q], std[enc.group_q], found[enc.group_q]
    out = np.full(values.shape, MISSING_ZSCORE, np.float64)
    scaled = gf & (gs != 0.0)
    out[scaled] = (values[scaled] - gm[scaled]) / gs[scaled]
    out[gf & (gs == 0.0) & (values == gm)] = 0.0
    return out
