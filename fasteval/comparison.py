"""``fasteval.compare``: evaluate runs, then compare them (means, paired tests, corrections).

The comparison itself, from a per-query table, is
:func:`fasteval.analysis.comparison.compare_table` (also importable from here,
with :class:`~fasteval.analysis.comparison.Comparison`); this module adds the
evaluation in front of it, which the analysis layer cannot call (it sits above
the engine, below the API).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fasteval.analysis.comparison import FORMATS, SCHEMA, Comparison, compare_table
from fasteval.api import evaluate
from fasteval.measures.ir_measures_names import canonical, split_judged_only
from fasteval.measures.parser import parse_measure

__all__ = ["FORMATS", "SCHEMA", "Comparison", "compare", "compare_table", "measure_names"]


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
    test, correction, alpha, B, seed, complete
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
    )
