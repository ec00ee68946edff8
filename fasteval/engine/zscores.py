"""Z-scores of per-query values against a reference (trec_eval ``-Z``).

trec_eval (``convert_zscores.c``) replaces each per-query value ``v`` of a
measure by ``(v - mean) / stddev``, with ``mean`` and ``stddev`` those the
z-score file gives for that query and measure (typically computed over a
reference set of runs). When ``stddev`` is 0 the z-score is 0 if ``v`` equals
the mean, else the value is *missing*; a (query, measure) pair absent from
the file is missing too. Missing values are ``-1000000`` (trec_eval's
``MISSING_ZSCORE_VALUE``) and are averaged like any other value, as
trec_eval does.

The aggregates are then formed from the z-scores exactly as from raw values:
the mean for most measures, the sum for the count measures (``num_ret``,
...), the geometric mean ``exp(mean(log(max(z, 1e-5))))`` for ``gm_map`` /
``gm_bpref``; ``num_q`` stays the number of queries. The lookup uses each
measure's printed name (``P_10``, ``map``, ``iprec_at_recall_0.10``), which is
what trec_eval's z-score files contain.
"""

from __future__ import annotations

import numpy as np

from fasteval.engine.encode import Encoded
from fasteval.io.zscores import MISSING_ZSCORE, ZScores
from fasteval.measures.parser import MeasureSet


def zscore_values(values: np.ndarray, enc: Encoded, measures: MeasureSet, z: ZScores) -> np.ndarray:
    """Per-group values (``values[g, m]``, groups of ``enc``) as z-scores against ``z``'s
    means and deviations, keyed by query and measure name (a new array)."""
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
    gm = mean[enc.group_q]
    gs = std[enc.group_q]
    gf = found[enc.group_q]
    out = np.full(values.shape, MISSING_ZSCORE, np.float64)
    scaled = gf & (gs != 0.0)
    out[scaled] = (values[scaled] - gm[scaled]) / gs[scaled]
    out[gf & (gs == 0.0) & (values == gm)] = 0.0
    return out
