"""Evaluation against qrels with judgment groups (trec_eval ``-R qrels_jg``).

trec_eval's ``*_avgjg`` measures (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``)
score a ranking once per judgment group of the query (its judgments alone, its own R)
and average over the query's groups. Pass ``j`` scores every run against each query's
``j``-th group (a plain qrels) with the ordinary kernels; a query's value is the sum
over passes over its number of groups. The runs are read once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from fasteval.engine.encode import encode
from fasteval.engine.inputs import as_list, check_runs_retrieved
from fasteval.engine.ranking import aggregate, compute
from fasteval.engine.table import Evaluation, to_frame
from fasteval.errors import DataMismatchError
from fasteval.io.qrels_jg import as_qrels_jg
from fasteval.io.tables import run_columns
from fasteval.measures.catalog import parse_jg_measures
from fasteval.measures.parser import MeasureSet
from fasteval.options import DEFAULTS, EvalOptions


def evaluate_jg(
    qrels_jg: Any,
    runs: Any,
    measures: Any = None,
    opts: EvalOptions = DEFAULTS,
    *,
    per_query: bool = True,
) -> pl.DataFrame:
    """Evaluate runs against qrels with judgment groups, as ``trec_eval -R qrels_jg``.

    ``qrels_jg``: a ``qid jg docno rel`` file, a polars frame with ``query_id,
    judgment_group, doc_id, relevance`` or a :class:`fasteval.io.qrels_jg.QrelsJG`;
    ``measures``: ``map_avgjg``, ``P_avgjg[.k,...]``, ``Rprec_mult_avgjg[.x,...]``,
    ``num_q``, ``runid`` or ``qrels_jg`` (default), or a ``MeasureSet``; the rest as for
    :func:`fasteval.evaluate` (``num_docs``, ``zscores``, ``rel_format`` unused).
    """
    compat = opts.compat
    mset = (
        measures if isinstance(measures, MeasureSet) else parse_jg_measures(measures, compat=compat)
    )
    jg = as_qrels_jg(qrels_jg, lenient=opts.lenient)
    r = run_columns(as_list(runs), opts)
    passes = jg.passes()
    n_groups_of = {q: len(gs) for q, gs in jg.groups_per_query().items()}
    enc0 = encode(passes[0], r, opts)
    check_runs_retrieved(enc0.run_names, enc0.group_run, enc0.ends > enc0.starts)
    scoring = replace(opts, num_docs=0, zscores=None)  # the options jg scoring reads
    ev0 = compute(enc0, mset, scoring)
    total = ev0.values.copy()
    # pass 0 holds every qrels query: every later group is one of pass 0's
    n_q0 = len(enc0.qids)
    q_index = {q: i for i, q in enumerate(enc0.qids)}
    slot = np.full(len(enc0.run_names) * n_q0, -1, np.int64)
    slot[enc0.group_run.astype(np.int64) * n_q0 + enc0.group_q] = np.arange(len(enc0.group_run))
    for qc in passes[1:]:
        try:
            enc = encode(qc, r, opts)
        except DataMismatchError:  # no run retrieved any query this group judged
            continue
        ev = compute(enc, mset, scoring)
        qmap = np.array([q_index[q] for q in enc.qids], np.int64)
        total[slot[enc.group_run.astype(np.int64) * n_q0 + qmap[enc.group_q]]] += ev.values
    counts = np.array([n_groups_of.get(q, 1) for q in enc0.qids], np.float64)
    values = total / counts[enc0.group_q][:, None]
    summary = aggregate(ev0.index, mset, values, enc0.qr_rel if opts.complete else None)
    out = Evaluation(mset, ev0.index, values, summary, ev0.has_rows)
    return to_frame(out, per_query=per_query, compat=compat)
