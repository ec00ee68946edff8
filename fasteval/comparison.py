"""``fasteval.compare``, ``rank_intervals``, ``agreement``: evaluate, then analyse.

The comparison itself, from a per-query table, is
:func:`fasteval.analysis.comparison.compare_table` (also importable from here,
with :class:`~fasteval.analysis.comparison.Comparison`); the rank intervals
:func:`fasteval.analysis.rank_uncertainty.rank_intervals_matrix`; the
agreement of judgment sets :mod:`fasteval.analysis.agreement`. This module
adds the evaluation in front of them, which the analysis layer cannot call (it
sits above the engine, below the API).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl
from tqdm import tqdm

from fasteval.analysis import agreement as agr
from fasteval.analysis.comparison import FORMATS, SCHEMA, Comparison, compare_table
from fasteval.analysis.judgment_sets import score_sets
from fasteval.analysis.rank_uncertainty import rank_intervals_matrix
from fasteval.api import evaluate
from fasteval.errors import MeasureError, ParameterError
from fasteval.io.tables import as_qrels
from fasteval.measures.ir_measures_names import canonical, split_judged_only
from fasteval.measures.parser import parse_measure

__all__ = [
    "FORMATS",
    "SCHEMA",
    "Agreement",
    "Comparison",
    "agreement",
    "compare",
    "compare_table",
    "measure_names",
    "rank_intervals",
]

Agreement = agr.Agreement


def measure_names(measures: Any) -> list[str]:
    """Measure arguments as strings: names, or ir_measures measure objects (their ``str``).

    Parameters
    ----------
    measures
        A name, an ir_measures measure, or a sequence of them; ``None`` gives
        ``map, ndcg_cut_10, P_10``.

    Returns
    -------
    list of str
        The names.
    """
    if measures is None:
        return ["map", "ndcg_cut_10", "P_10"]
    if isinstance(measures, str) or not isinstance(measures, (list, tuple, set, frozenset)):
        measures = [measures]

    return [m.strip() if isinstance(m, str) else canonical(m) for m in measures]


def compare(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    measures: Any = None,
    *,
    baseline: str | Sequence[str] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    B: int = 9999,
    seed: int = 0,
    complete: bool = False,
    ci_level: float = 0.95,
    relevance_level: int = 1,
    compat: int = 9,
    run_id_from: str = "tag",
    on_duplicate: str = "error",
    lenient: bool = False,
) -> Comparison:
    """Evaluate runs and compare them with a baseline (or every pair) per measure.

    Parameters
    ----------
    qrels, runs
        Anything :func:`fasteval.evaluate` takes (files, Parquet, polars or
        pandas frames, Arrow tables, dict-of-dicts, ir_datasets / ir_measures
        records).
    measures
        Measure names (trec_eval or ir_measures syntax) or ir_measures
        measure objects; default ``map, ndcg_cut_10, P_10``.
    baseline
        One run id or several (each is its own correction family); ``None``
        compares every pair of runs.
    test, correction, alpha, B, seed, complete, ci_level
        See :func:`fasteval.analysis.comparison.compare_table`.
    relevance_level, compat, run_id_from, on_duplicate, lenient
        As in :func:`fasteval.evaluate`.

    Returns
    -------
    Comparison
        ``.table`` (polars), ``.to_text()``, ``.to_markdown()``,
        ``.to_latex()``, ``.to_html()``; displays itself in Jupyter.

    Examples
    --------
    >>> cmp = fasteval.compare("qrels.txt", ["bm25.run", "dense.run"],
    ...                        ["AP", "nDCG@10"], baseline="bm25")  # doctest: +SKIP
    >>> print(cmp.to_markdown())  # doctest: +SKIP
    """

    names, judged_only = split_judged_only(measure_names(measures))
    out_names: list[str] = []
    for n in names:
        for m in parse_measure(n):
            if m.name not in out_names:
                out_names.append(m.name)
    table = evaluate(
        qrels,
        runs,
        names,
        per_query=True,
        compat=compat,
        relevance_level=relevance_level,
        complete=complete,
        judged_only=judged_only,
        on_duplicate=on_duplicate,
        lenient=lenient,
        run_id_from=run_id_from,
    )
    return compare_table(
        table,
        baseline=baseline,
        measures=out_names,
        test=test,
        correction=correction,
        alpha=alpha,
        B=B,
        seed=seed,
        complete=complete,
        ci_level=ci_level,
    )


def _output_names(measures: Any) -> tuple[list[str], list[str], bool]:
    """(names to evaluate, names in the result table, judged-only) of measure arguments."""
    names, judged_only = split_judged_only(measure_names(measures))
    out: list[str] = []
    for n in names:
        for m in parse_measure(n):
            if m.name not in out:
                out.append(m.name)
    return names, out, judged_only


def _score_matrices(
    table: pl.DataFrame, measures: list[str], runs: list[str]
) -> dict[str, agr.Scores]:
    """Per measure, the ``(runs, queries)`` values of a per-query table; a missing query is 0."""
    out: dict[str, agr.Scores] = {}
    pq = table.filter(pl.col("query_id") != "all")
    for m in measures:
        df = pq.filter(pl.col("measure") == m)
        if df.height == 0:
            msg = f"the runs give no per-query values of measure {m!r}"
            raise MeasureError(msg)
        wide = df.pivot(on="query_id", index="run_id", values="value", aggregate_function="first")
        wide = pl.DataFrame({"run_id": runs}).join(wide, on="run_id", how="left")
        queries = sorted(c for c in wide.columns if c != "run_id")
        X = np.nan_to_num(wide.select(queries).to_numpy().astype(np.float64))
        out[m] = agr.Scores(np.ascontiguousarray(X), queries)
    return out


def rank_intervals(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    measure: Any,
    B: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    *,
    relevance_level: int = 1,
    compat: int = 9,
    run_id_from: str = "tag",
    on_duplicate: str = "error",
    lenient: bool = False,
) -> pl.DataFrame:
    """Each run's mean, rank and percentile bootstrap interval of its rank over queries.

    Every resample draws the queries with replacement, takes each run's
    mean of ``measure`` over it and ranks the runs (1 best, ties broken by run
    id); a run's interval is the ``(1 - level) / 2`` and ``(1 + level) / 2``
    quantiles of its ``B`` ranks (:mod:`fasteval.analysis.rank_uncertainty`).
    A query a run lacks scores 0 for it.

    Parameters
    ----------
    qrels, runs
        Anything :func:`fasteval.evaluate` takes.
    measure
        One measure name (trec_eval or ir_measures) or ir_measures object.
    B
        Bootstrap resamples (>= 1).
    level
        Level of the interval.
    seed
        Seed of the resamples.
    relevance_level, compat, run_id_from, on_duplicate, lenient
        As in :func:`fasteval.evaluate`.

    Returns
    -------
    polars.DataFrame
        ``run_id, mean, rank, rank_low, rank_high``, sorted by rank.

    References
    ----------
    Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap, ch. 13.
    Hall, P., & Miller, H. (2009). Using the bootstrap to quantify the
    authority of an empirical ranking. Annals of Statistics 37(6).
    """
    agr.check_options(B, 0.05, level)
    names, out, judged_only = _output_names(measure)
    if len(out) != 1:
        msg = f"rank_intervals takes one measure, got {out}"
        raise ParameterError(msg)
    table = evaluate(
        qrels,
        runs,
        names,
        per_query=True,
        relevance_level=relevance_level,
        compat=compat,
        judged_only=judged_only,
        run_id_from=run_id_from,
        on_duplicate=on_duplicate,
        lenient=lenient,
    )
    run_ids = table["run_id"].unique(maintain_order=True).to_list()
    sc = _score_matrices(table, out, run_ids)[out[0]]
    return rank_intervals_matrix(sc.X, run_ids, B=B, level=level, seed=seed)


def agreement(  # noqa: PLR0913 (keyword-only options)
    reference: Any,
    others: Any,
    runs: Any = None,
    measures: Any = None,
    B: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    *,
    level: float = 0.95,
    relevance_level: int = 1,
    compat: int = 9,
    run_id_from: str = "tag",
    on_duplicate: str = "error",
    lenient: bool = False,
    progress: bool = False,
) -> agr.Agreement:
    """Agreement of judgment sets with a reference: labels, system rankings, significance.

    The formulas and their references: :mod:`fasteval.analysis.agreement`.
    The runs are read and judged once, against the union of the judgment
    sets, and scored under each set (:mod:`fasteval.analysis.judgment_sets`);
    everything else is computed from the per-query score matrices.

    Parameters
    ----------
    reference
        Qrels in any form :func:`fasteval.evaluate` takes.
    others
        One such qrels (named ``other``), or a mapping name -> qrels.
    runs
        Runs (any form :func:`fasteval.evaluate` takes); without them only
        :attr:`Agreement.labels` is filled.
    measures
        Measure names or ir_measures objects (default ``map, ndcg_cut_10, P_10``).
    B
        Bootstrap resamples of the interval of tau_b (>= 1).
    seed
        Seed of the resamples.
    alpha
        Level of the paired t-tests of :attr:`Agreement.significance`.
    level
        Level of the interval of tau_b.
    relevance_level
        Grade from which a judgment is relevant (binary kappa; the evaluation).
    compat, run_id_from, on_duplicate, lenient
        As in :func:`fasteval.evaluate`.
    progress
        Show a progress bar (tqdm) over the evaluations and the comparisons.

    Returns
    -------
    Agreement
        ``.labels``, ``.rankings``, ``.significance`` and ``.means`` (polars).

    Examples
    --------
    >>> res = fasteval.agreement("qrels.txt", {"judge2": "qrels2.txt"},
    ...                          runs="runs/")  # doctest: +SKIP
    >>> res.rankings.select("other", "measure", "tau_b", "tau_ap")  # doctest: +SKIP
    """
    agr.check_options(B, alpha, level)
    sets = _judgment_sets(others)
    if runs is not None:  # unusable measures fail before anything is read
        try:
            names, out_names, judged_only = _output_names(measures)
        except MeasureError as e:
            msg = f"agreement takes ad-hoc ranking measures (trec_eval or ir_measures names): {e}"
            raise MeasureError(msg) from None
        if judged_only:
            msg = "agreement takes measures without a judged-only prefix"
            raise MeasureError(msg)
    table = agr.grade_table(
        {_REFERENCE: as_qrels(reference)} | {k: as_qrels(v) for k, v in sets.items()}
    )
    labels = agr.labels_of_table(table, relevance_level=relevance_level)
    res = agr.Agreement(labels=labels, B=B, seed=seed, alpha=alpha, relevance_level=relevance_level)
    if runs is None:
        return res
    with tqdm(
        total=len(table.names) + len(sets) * len(out_names),
        desc="agreement",
        unit="step",
        disable=not progress,
    ) as bar:

        def ticking(it: Iterator[Any]) -> Iterator[Any]:
            for x in it:
                yield x
                bar.update(1)

        run_ids, _, scores = score_sets(
            table,
            runs,
            names,
            relevance_level=relevance_level,
            compat=compat,
            run_id_from=run_id_from,
            lenient=lenient,
            on_duplicate=on_duplicate,
            progress=ticking,
        )
        res.rankings, res.significance, res.means = agr.ranking_agreement(
            scores.pop(_REFERENCE),
            scores,
            run_ids,
            B=B,
            seed=seed,
            alpha=alpha,
            level=level,
            progress=ticking,
        )
    return res


_REFERENCE = "\0reference"  # the reference's key among the judgment sets (no user name)


def _judgment_sets(others: Any) -> dict[str, Any]:
    """Name -> qrels: a mapping as given, one qrels as ``other``."""
    if isinstance(others, Mapping) and not _is_qrels_dict(others):
        sets = {str(k): v for k, v in others.items()}
    else:
        sets = {"other": others}
    if not sets:
        msg = "others is empty: give one qrels or a mapping name -> qrels"
        raise ParameterError(msg)
    return sets


def _is_qrels_dict(x: Mapping[Any, Any]) -> bool:
    """A dict of dicts of grades (pytrec_eval's qrels) rather than name -> qrels."""
    for v in x.values():
        if isinstance(v, Mapping):
            return all(isinstance(g, (int, np.integer)) for g in v.values())
        return False
    return False
