"""Score the same runs under several judgment sets, reading and joining the runs once.

Comparing judgment sets (:func:`fasteval.agreement`) evaluates every run under
each set. Evaluating from scratch per set would read, judge and order the
runs each time, nearly all of an evaluation's work. Instead
the runs are prepared once against the *union* of the sets' judgments
(:func:`fasteval.engine.prepare`), and each set is a variant of that encoding,
as a robustness study's qrels variants are (:mod:`fasteval.analysis.variants`):
the judgments the set lacks are dropped
(:func:`~fasteval.analysis.variants.with_judgments`), the grades of the others
replaced by the set's, and the variant is scored by
:func:`fasteval.engine.compute`. The per-query values equal those of
``fasteval.evaluate(set, runs, per_query=True)`` (checked in
``tests/unit/test_agreement.py`` and on TREC-8).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis.agreement import MISSING, GradeTable, Scores, grade_table
from fasteval.analysis.variants import judgment_query, with_judgments
from fasteval.engine import RunsLike, compute, prepare
from fasteval.engine.encode import Encoded
from fasteval.errors import MeasureError
from fasteval.kernels.families import NONPOOL, UNJUDGED
from fasteval.measures.parser import parse_measures
from fasteval.options import EvalOptions


def _union(table: GradeTable) -> pl.DataFrame:
    """Every (query, document) judged in some set, once, with a placeholder grade."""
    return table.keys.with_columns(pl.lit(0, pl.Int32).alias("relevance"))


class Variants:
    """One encoding against the union of the sets' judgments, re-graded per set.

    Parameters
    ----------
    enc
        The runs encoded against the union (``fasteval.engine.prepare(...).enc``).
    """

    def __init__(self, enc: Encoded) -> None:
        self.enc = enc
        self.query = judgment_query(enc)
        self.jdx1 = enc.jdx + 1  # 0 where a position has no judgment

    def __call__(self, grades: np.ndarray) -> Encoded:
        """The encoding under one set's grades.

        Parameters
        ----------
        grades
            int64 grade of every union qrels row in this set,
            :data:`~fasteval.analysis.agreement.MISSING` where the set does not judge it.

        Returns
        -------
        Encoded
            Its judgments are the set's, with the set's grades at every ranked
            position (a negative grade is unjudged, as the engine reads it).
        """
        enc = self.enc
        g = grades[enc.qr_rows]
        keep = g != MISSING
        at_position = np.empty(g.shape[0] + 1, np.int32)
        at_position[0] = NONPOOL
        at_position[1:] = np.where(keep, np.where(g >= 0, g, UNJUDGED), NONPOOL)
        rel = at_position[self.jdx1]  # one gather: the set's grade at every position
        per_q = np.bincount(self.query[keep], minlength=enc.qr_off.shape[0] - 1)
        # compute() reads the grades and the per-query judgments, never jdx (as
        # AdhocScorer and the studies' Masker(with_jdx=False)): jdx is left as it is
        out = with_judgments(enc, keep, per_q, rel, enc.jdx)
        qr_rel = np.ascontiguousarray(g[keep].astype(enc.qr_rel.dtype))
        return dataclasses.replace(out, qr_rel=qr_rel)


def _matrices(
    enc: Encoded, values: np.ndarray, has_rows: np.ndarray, names: list[str]
) -> dict[str, Scores]:
    """Per measure, ``(runs, queries)`` values over the queries some run was evaluated on
    (a query a run lacks: 0)."""
    gr, gq = enc.group_run[has_rows], enc.group_q[has_rows]
    queries = np.unique(gq)
    col = np.full(len(enc.qids), -1, np.int64)
    col[queries] = np.arange(queries.shape[0])
    qids = [enc.qids[i] for i in queries]
    out = {}
    for k, name in enumerate(names):
        X = np.zeros((len(enc.run_names), queries.shape[0]))
        X[gr, col[gq]] = values[has_rows, k]
        order = np.argsort(np.array(qids, dtype=object), kind="stable")
        out[name] = Scores(np.ascontiguousarray(X[:, order]), [qids[i] for i in order])
    return out


def score_sets(  # noqa: PLR0913 (keyword-only options)
    sets: Mapping[str, pl.DataFrame] | GradeTable,
    runs: RunsLike,
    measures: Sequence[str],
    *,
    relevance_level: int = 1,
    compat: int = 9,
    run_id_from: str = "tag",
    lenient: bool = False,
    on_duplicate: str = "error",
    progress: Callable[[Iterator[Any]], Iterator[Any]] | None = None,
) -> tuple[list[str], list[str], dict[str, dict[str, Scores]]]:
    """Per-query score matrices of ``runs`` under every judgment set.

    Parameters
    ----------
    sets
        Name -> qrels ``query_id, doc_id, relevance``, or their
        :class:`~fasteval.analysis.agreement.GradeTable`.
    runs
        Anything :func:`fasteval.evaluate` takes; read once.
    measures
        Ad-hoc measure names (trec_eval or ir_measures syntax, no judged-only prefix).
    relevance_level, compat, run_id_from, lenient, on_duplicate
        As in :func:`fasteval.evaluate`.
    progress
        Wraps the iteration over the sets (e.g. a tqdm bar).

    Returns
    -------
    tuple
        ``(run ids, measure names as output, {set: {measure: Scores}})``.
    """
    try:
        mset = parse_measures(list(measures), compat=compat)
    except MeasureError as e:
        msg = f"agreement takes ad-hoc ranking measures (trec_eval or ir_measures names): {e}"
        raise MeasureError(msg) from None
    text = [m.name for m in mset if m.info.text]
    if text:
        msg = f"measure(s) {text} give strings, not numbers to rank systems by"
        raise MeasureError(msg)
    names = [m.name for m in mset]
    if not names:
        msg = f"no measure to score in {list(measures)}"
        raise MeasureError(msg)
    table = sets if isinstance(sets, GradeTable) else grade_table(sets)
    union = _union(table)
    prep = prepare(
        union,
        runs,
        compat=compat,
        run_id_from=run_id_from,
        lenient=lenient,
        on_duplicate=on_duplicate,
    )
    enc = prep.enc
    variants = Variants(enc)
    out: dict[str, dict[str, Scores]] = {}
    items: Iterator[tuple[int, str]] = iter(enumerate(table.names))
    if progress is not None:
        items = progress(items)
    for k, name in items:
        var = variants(table.grades[:, k])
        ev = compute(var, mset, EvalOptions(relevance_level=relevance_level, compat=compat))
        out[name] = _matrices(var, ev.values, ev.has_rows, names)
    return list(enc.run_names), names, out
