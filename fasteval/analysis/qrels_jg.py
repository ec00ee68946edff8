"""Evaluation against qrels with judgment groups (trec_eval ``-R qrels_jg``).

trec_eval's ``*_avgjg`` measures (``map_avgjg``, ``P_avgjg``,
``Rprec_mult_avgjg``) score a ranking once per judgment group of the query
(each group's judgments alone, its own R) and average those scores over the
query's groups; the query values are then averaged over queries as usual.

fasteval does this with the ordinary kernels: pass ``j`` evaluates every run
against the ``j``-th judgment group of every query (a plain qrels), and a
query's value is the sum over passes divided by its number of groups. The
number of passes is the largest number of groups of any query; the runs are
read once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from fasteval.encode import encode
from fasteval.engine import Evaluation, _aggregate, _check_runs_have_queries, compute, to_frame
from fasteval.errors import DataMismatchError, MeasureError, ParameterError
from fasteval.io.qrels_jg import as_qrels_jg
from fasteval.io.tables import run_columns
from fasteval.measures.parser import MeasureSet, parse_measures

JG_FAMILIES = frozenset({"num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"})


def parse_jg_measures(measures: Any, *, compat: int = 9) -> MeasureSet:
    """Parse measures for a judgment-group evaluation (default: the ``qrels_jg`` set).

    Only the ``*_avgjg`` families (and ``runid``, ``num_q``) are defined over
    judgment groups, as in trec_eval.
    """
    mset = parse_measures(measures if measures else ["qrels_jg"], compat=compat)
    bad = [m.name for m in mset if m.family not in JG_FAMILIES]
    if bad:
        msg = (
            f"measure(s) {', '.join(bad)} cannot be computed from qrels with judgment groups"
            "\n  hint: use map_avgjg, P_avgjg, Rprec_mult_avgjg (the 'qrels_jg' set)"
        )
        raise MeasureError(msg)
    return mset


def evaluate_jg(
    qrels_jg: Any,
    runs: Any,
    measures: Any = None,
    *,
    per_query: bool = True,
    compat: int = 9,
    relevance_level: int = 1,
    complete: bool = False,
    max_depth: int | None = None,
    judged_only: bool = False,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
) -> pl.DataFrame:
    """Evaluate runs against qrels with judgment groups, as ``trec_eval -R qrels_jg``.

    Parameters
    ----------
    qrels_jg
        A ``qid jg docno rel`` file, a polars frame with ``query_id,
        judgment_group, doc_id, relevance``, or a :class:`fasteval.io.qrels_jg.QrelsJG`.
    runs, per_query, compat, relevance_level, complete, max_depth, judged_only,
    on_duplicate, lenient, run_id_from
        As for :func:`fasteval.evaluate`.
    measures
        ``map_avgjg``, ``P_avgjg[.k,...]``, ``Rprec_mult_avgjg[.x,...]``,
        ``num_q``, ``runid`` or the nickname ``qrels_jg`` (default).

    Returns
    -------
    polars.DataFrame
        The long table ``run_id, query_id, measure, value``, as :func:`fasteval.evaluate`.
    """
    items = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    mset = parse_jg_measures(measures, compat=compat)
    jg = as_qrels_jg(qrels_jg, lenient=lenient)
    r = run_columns(items, lenient=lenient, run_id_from=run_id_from)
    passes = jg.passes()
    n_groups_of = {q: len(gs) for q, gs in jg.groups_per_query().items()}
    kw: dict[str, Any] = {
        "relevance_level": relevance_level,
        "compat": compat,
        "max_depth": max_depth,
        "judged_only": judged_only,
        "complete": complete,
    }
    enc0 = encode(passes[0], r, compat=compat, complete=complete, on_duplicate=on_duplicate)
    _check_runs_have_queries(enc0)
    ev0 = compute(enc0, mset, **kw)
    total = ev0.values.copy()
    # pass 0 holds every qrels query: every later group is one of pass 0's
    n_q0 = len(enc0.qids)
    q_index = {q: i for i, q in enumerate(enc0.qids)}
    slot = np.full(len(enc0.run_names) * n_q0, -1, np.int64)
    slot[enc0.group_run.astype(np.int64) * n_q0 + enc0.group_q] = np.arange(len(enc0.group_run))
    for qc in passes[1:]:
        try:
            enc = encode(qc, r, compat=compat, complete=complete, on_duplicate=on_duplicate)
        except DataMismatchError:  # no run retrieved any query this group judged
            continue
        ev = compute(enc, mset, **kw)
        qmap = np.array([q_index[q] for q in enc.qids], np.int64)
        total[slot[enc.group_run.astype(np.int64) * n_q0 + qmap[enc.group_q]]] += ev.values
    counts = np.array([n_groups_of.get(q, 1) for q in enc0.qids], np.float64)
    values = total / counts[enc0.group_q][:, None]
    summary = _aggregate(enc0, mset, values, relevance_level, complete)
    out = Evaluation(mset, enc0, values, summary, ev0.has_rows)
    return to_frame(out, per_query=per_query, compat=compat)


REL_FORMATS = ("qrels", "qrels_jg")


def evaluate_rel_format(
    rel_format: str, qrels: Any, runs: Any, measures: Any, *, zscores: Any = None, **kw: Any
) -> pl.DataFrame:
    """:func:`fasteval.evaluate` for a relevance format other than plain qrels (``-R``)."""
    if rel_format not in REL_FORMATS:
        msg = (
            f"unknown relevance format {rel_format!r}; choose one of {', '.join(REL_FORMATS)}"
            " (trec_eval's prefs and qrels_prefs are not supported yet)"
        )
        raise ParameterError(msg)
    if zscores is not None:
        msg = "z-scores (-Z) are only supported with plain qrels"
        raise ParameterError(msg)
    return evaluate_jg(qrels, runs, measures, **kw)
