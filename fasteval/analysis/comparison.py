"""Compare runs the way IR papers do: means, differences, paired tests, corrections.

:func:`compare_table` tests runs against one or more baselines (or every pair
of runs, without a baseline) per measure, from a per-query evaluation table;
:func:`fasteval.compare` evaluates the runs first. The result, a
:class:`Comparison`, holds the numbers (a polars table); the renderers of
:mod:`fasteval.analysis.comparison_render` lay it out as text, Markdown,
LaTeX, HTML and CSV.

Rules
-----
* **Means** are trec_eval's: each run's mean over the queries it has (with
  ``complete=True``, trec_eval ``-c``: over every qrels query, a missing one
  scoring 0).
* **Paired tests** pair the queries both runs have (a query one run lacks is
  left out of that pair's test); with ``complete=True`` a query that one of
  the two runs lacks counts as 0 for it (``-c``), over the queries either has.
  ``n_queries`` says how many queries each test used.
* **Intervals**: ``ci_low``/``ci_high`` are the Student t interval (level
  ``ci_level``) of the run's mean over the per-query values the means use (with
  ``complete=True``, every qrels query, a missing one as 0: a query no run has,
  and so no row of the table has, is counted from the mean, ``sum / mean``);
  ``diff_ci_low``/``diff_ci_high`` the paired t interval of the mean difference
  over the paired queries, and ``effect_size`` Cohen's ``d_z = mean(d) / sd(d)``
  (``ddof = 1``) of those differences
  (:func:`fasteval.analysis.statistics.t_interval`,
  :func:`~fasteval.analysis.statistics.cohens_dz`). NaN with fewer than 2
  queries (``d_z`` also when every difference is equal).
* **Wins/ties/losses** count those paired queries with a per-query value above,
  equal to or below the baseline's.
* **Correction family**: the comparisons of one measure against one baseline
  (every other run against it), or, without a baseline, every pair of runs
  for that measure, as PyTerrier does.
* The tests themselves, their tie and zero rules and the Monte Carlo p-value
  bound: :mod:`fasteval.analysis.statistics`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis import comparison_render as render
from fasteval.analysis import statistics as stats
from fasteval.errors import ParameterError

SCHEMA = {
    "measure": pl.String,
    "baseline": pl.String,
    "run_id": pl.String,
    "mean": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "baseline_mean": pl.Float64,
    "diff": pl.Float64,
    "diff_pct": pl.Float64,
    "diff_ci_low": pl.Float64,
    "diff_ci_high": pl.Float64,
    "effect_size": pl.Float64,
    "p_value": pl.Float64,
    "p_corrected": pl.Float64,
    "significant": pl.Boolean,
    "wins": pl.Int64,
    "ties": pl.Int64,
    "losses": pl.Int64,
    "n_queries": pl.Int64,
}
INTERVALS = {
    "run_id": pl.String,
    "measure": pl.String,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
}
FORMATS = render.FORMATS


@dataclass
class Comparison:
    """The result of :func:`fasteval.compare` and :func:`compare_table`.

    Attributes
    ----------
    table
        One row per (measure, baseline, run): ``measure, baseline, run_id,
        mean, ci_low, ci_high, baseline_mean, diff, diff_pct, diff_ci_low,
        diff_ci_high, effect_size, p_value, p_corrected, significant, wins,
        ties, losses, n_queries``. With baselines, each
        baseline's block also has the baseline's own row (comparison columns
        null); without, one row per pair of runs (``baseline`` is the second run).
    means
        One row per run, a column per measure (trec_eval's means).
    intervals
        One row per (run, measure): ``run_id, measure, ci_low, ci_high``, the
        t interval of the run's mean at ``ci_level``.
    """

    table: pl.DataFrame
    means: pl.DataFrame
    runs: list[str]
    measures: list[str]
    baselines: list[str] | None
    test: str
    correction: str
    alpha: float
    B: int
    seed: int
    complete: bool
    notes: list[str] = field(default_factory=list)
    ci_level: float = 0.95
    intervals: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=INTERVALS))

    def to_text(self) -> str:
        """A plain-text table with aligned columns and the footnotes."""
        return render.to_text(self)

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table and the footnotes."""
        return render.to_markdown(self)

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (significance as ``$^{*}$``, superscripts as ``$^{ab}$``)."""
        return render.to_latex(self)

    def to_html(self) -> str:
        """An HTML ``<table>`` (superscripts as ``<sup>``) with the footnotes below."""
        return render.to_html(self)

    def to_csv(self) -> str:
        """:attr:`table` as CSV (full precision, machine-readable)."""
        return render.to_csv(self)

    def render(self, fmt: str = "text") -> str:
        """Render in ``fmt``: ``text``, ``markdown``, ``latex``, ``html`` or ``csv``."""
        return render.render(self, fmt)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_text()


@dataclass(frozen=True)
class _Options:
    """The test settings every pair of one comparison shares."""

    test: str
    correction: str
    alpha: float
    B: int
    seed: int
    complete: bool
    ci_level: float = 0.95


def compare_table(  # noqa: PLR0913 (keyword-only options)
    table: pl.DataFrame,
    *,
    baseline: str | Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    B: int = 9999,
    seed: int = 0,
    complete: bool = False,
    ci_level: float = 0.95,
) -> Comparison:
    """Compare runs from a per-query evaluation table (``run_id, query_id, measure, value``).

    Parameters
    ----------
    table
        ``fasteval.evaluate(..., per_query=True)``; the ``all`` rows give the
        means (the mean of the per-query rows where they are absent).
    baseline
        One run id or several; ``None`` compares every pair of runs.
    measures
        Measure names as they appear in ``table`` (default: all, in order).
    test
        ``t``, ``wilcoxon``, ``randomization``, ``bootstrap`` or ``tukey``
        (Tukey's HSD over all runs of a measure; ``correction`` is then not
        applied, the test controls the family-wise error itself).
    correction
        ``holm``, ``bonferroni``, ``bh`` or ``none`` (family: one measure
        against one baseline, or every pair of one measure).
    alpha
        Significance level of the marker.
    B
        Sign flips / bootstrap resamples for the Monte Carlo tests.
    seed
        Seed of the Monte Carlo tests (printed in the notes).
    complete
        Pair over the queries either run has, a missing one scoring 0.
    ci_level
        Level of the t intervals of the means and of the mean differences.

    Returns
    -------
    Comparison
    """
    need = {"run_id", "query_id", "measure", "value"}
    if not need <= set(table.columns):
        msg = f"the evaluation table needs columns {sorted(need)}, got {table.columns}"
        raise ParameterError(msg)
    opt = _options(test, correction, alpha, B, seed, complete, ci_level)
    runs = table["run_id"].unique(maintain_order=True).to_list()
    ms = _measures_of(table, measures)
    if len(runs) < 2:
        msg = f"need at least 2 runs to compare, got {len(runs)}"
        raise ParameterError(msg)
    baselines = _baselines(baseline, runs)
    means = _means(table, runs, ms)
    rows: list[dict[str, Any]] = []
    ivs: list[dict[str, Any]] = []
    for m in ms:
        mean_of = dict(zip(runs, means[m].to_list(), strict=True))
        rows += _measure_rows(table, m, runs, mean_of, baselines, opt, ivs)
    out = pl.DataFrame(rows, schema=SCHEMA) if rows else pl.DataFrame(schema=SCHEMA)
    notes = []
    if opt.test in stats.MONTE_CARLO:
        notes.append(f"seed {seed}; smallest possible p = 1/(B+1) = {1.0 / (B + 1):.3g}")
    return Comparison(
        table=out,
        means=means,
        runs=runs,
        measures=ms,
        baselines=baselines,
        test=opt.test,
        correction=opt.correction,
        alpha=alpha,
        B=B,
        seed=seed,
        complete=complete,
        notes=notes,
        ci_level=opt.ci_level,
        intervals=pl.DataFrame(ivs, schema=INTERVALS),
    )


def _options(
    test: str,
    correction: str,
    alpha: float,
    B: int,
    seed: int,
    complete: bool,
    ci_level: float = 0.95,
) -> _Options:
    t = stats.test_name(test)
    c = stats.correction_name(correction)
    if t == "tukey":
        c = "none"  # Tukey's HSD controls the family-wise error over all pairs itself
    if not 0.0 < alpha < 1.0:
        msg = f"alpha must be in (0, 1), got {alpha}"
        raise ParameterError(msg)
    if t in stats.MONTE_CARLO and B < 1:
        msg = f"the {t} test needs B >= 1 resamples, got {B}"
        raise ParameterError(msg)
    return _Options(t, c, alpha, B, seed, complete, stats.check_level(ci_level))


def _measures_of(table: pl.DataFrame, measures: Sequence[str] | None) -> list[str]:
    have = table["measure"].unique(maintain_order=True).to_list()
    ms = list(measures) if measures is not None else have
    missing = [m for m in ms if m not in have]
    if missing:
        msg = f"measure(s) {missing} not in the evaluation table (have {have})"
        raise ParameterError(msg)
    return ms


def _baselines(baseline: str | Sequence[str] | None, runs: list[str]) -> list[str] | None:
    if baseline is None:
        return None
    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    unknown = [b for b in baselines if b not in runs]
    if unknown:
        shown = ", ".join(runs[:8]) + (" ..." if len(runs) > 8 else "")
        msg = f"baseline {unknown[0]!r} is not among the runs ({shown})"
        raise ParameterError(msg)
    return baselines


def _families(runs: list[str], baselines: list[str] | None) -> list[list[tuple[int, int]]]:
    """``(run, baseline)`` index pairs per correction family (a run against itself included)."""
    if baselines is not None:
        return [[(runs.index(r), runs.index(b)) for r in runs] for b in baselines]
    return [[(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]]


def _measure_rows(
    table: pl.DataFrame,
    measure: str,
    runs: list[str],
    mean_of: dict[str, float],
    baselines: list[str] | None,
    opt: _Options,
    intervals: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    X = _wide_per_query(table, measure, runs)
    hsd = _tukey(X, opt.complete) if opt.test == "tukey" else None
    cis = [_run_interval(x, mean_of[r], opt) for x, r in zip(X, runs, strict=True)]
    intervals += [
        {"run_id": r, "measure": measure, "ci_low": lo, "ci_high": hi}
        for r, (lo, hi) in zip(runs, cis, strict=True)
    ]
    rows: list[dict[str, Any]] = []
    for fam in _families(runs, baselines):
        block = []
        for i, j in fam:
            row = _pair_row(X[i], X[j], opt) if i != j else {}  # a baseline's own row: nulls
            if hsd is not None:
                row["p_value"] = float(hsd[i, j])
            row.update(
                measure=measure,
                baseline=runs[j],
                run_id=runs[i],
                mean=mean_of[runs[i]],
                ci_low=cis[i][0],
                ci_high=cis[i][1],
                baseline_mean=mean_of[runs[j]],
            )
            block.append(row)
        pvals = np.array(
            [r["p_value"] if i != j else np.nan for r, (i, j) in zip(block, fam, strict=True)]
        )
        adjusted = stats.adjust(pvals, opt.correction)
        for r, (i, j), pc in zip(block, fam, adjusted, strict=True):
            _finish_row(r, i == j, float(pc), opt.alpha)
        rows += block
    return rows


def _finish_row(r: dict[str, Any], own: bool, p_corrected: float, alpha: float) -> None:
    """The difference, corrected p and mark of a row; nulls for a baseline's own row."""
    if own:
        for k in ("diff", "diff_pct", "p_value", "p_corrected", "significant", *_DIFF_STATS):
            r[k] = None
        for k in ("wins", "ties", "losses", "n_queries"):
            r[k] = None
        return
    r["diff"] = r["mean"] - r["baseline_mean"]
    bm = r["baseline_mean"]
    r["diff_pct"] = 100.0 * r["diff"] / bm if bm else math.nan
    r["p_corrected"] = p_corrected
    r["significant"] = bool(p_corrected < alpha) if not math.isnan(p_corrected) else False


_DIFF_STATS = ("diff_ci_low", "diff_ci_high", "effect_size")


def _nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else x


def _run_interval(
    x: np.ndarray, mean: float | None, opt: _Options
) -> tuple[float | None, float | None]:
    """The t interval of one run's mean over its queries (all, a missing one as 0, with -c).

    With -c the mean divides by every qrels query, some of which no run may have
    (no row in the table): their number is the one that mean implies, ``sum / mean``,
    and they count as 0, so that the interval is around the mean it reports.
    """
    v = np.nan_to_num(x) if opt.complete else x[~np.isnan(x)]
    if opt.complete and mean is not None and mean > 0 and v.shape[0]:
        implied = round(float(v.sum()) / mean)
        if implied > v.shape[0]:
            v = np.concatenate([v, np.zeros(implied - v.shape[0])])
    lo, hi = stats.t_interval(v, opt.ci_level)
    return _nan_to_none(lo), _nan_to_none(hi)


def _wide_per_query(table: pl.DataFrame, measure: str, runs: list[str]) -> np.ndarray:
    """``(n_runs, n_queries)`` per-query values of ``measure``; NaN where a run lacks a query."""
    df = table.filter((pl.col("measure") == measure) & (pl.col("query_id") != "all"))
    if df.height == 0:
        msg = f"no per-query values for measure {measure!r}: evaluate with per_query=True"
        raise ParameterError(msg)
    wide = df.pivot(on="query_id", index="run_id", values="value", aggregate_function="first")
    wide = pl.DataFrame({"run_id": runs}).join(wide, on="run_id", how="left")
    qcols = [c for c in wide.columns if c != "run_id"]
    return wide.select(qcols).to_numpy().astype(np.float64)


def _means(table: pl.DataFrame, runs: list[str], ms: list[str]) -> pl.DataFrame:
    df = table.filter(pl.col("measure").is_in(ms))
    allrows = df.filter(pl.col("query_id") == "all")
    if allrows.height == 0:
        allrows = df.group_by("run_id", "measure").agg(pl.col("value").mean())
    wide = allrows.pivot(on="measure", index="run_id", values="value", aggregate_function="first")
    wide = pl.DataFrame({"run_id": runs}).join(wide, on="run_id", how="left")
    for m in ms:
        if m not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(m))
    return wide.select("run_id", *ms)


def _tukey(X: np.ndarray, complete: bool) -> np.ndarray:
    """Tukey's HSD p-values between all runs (rows of ``X``): each run's queries are a group."""
    groups = [np.nan_to_num(x) if complete else x[~np.isnan(x)] for x in X]
    return stats.tukey_hsd(groups)


def _pair_row(x: np.ndarray, y: np.ndarray, opt: _Options) -> dict[str, Any]:
    if opt.complete:
        keep = ~(np.isnan(x) & np.isnan(y))
        d = np.nan_to_num(x[keep]) - np.nan_to_num(y[keep])
    else:
        keep = ~(np.isnan(x) | np.isnan(y))
        d = x[keep] - y[keep]
    tested = opt.test != "tukey"
    lo, hi = stats.t_interval(d, opt.ci_level)
    return {
        "diff_ci_low": _nan_to_none(lo),
        "diff_ci_high": _nan_to_none(hi),
        "effect_size": _nan_to_none(stats.cohens_dz(d)),
        "p_value": stats.p_value(d, opt.test, B=opt.B, seed=opt.seed) if tested else math.nan,
        "wins": int((d > 0).sum()),
        "ties": int((d == 0).sum()),
        "losses": int((d < 0).sum()),
        "n_queries": int(d.shape[0]),
    }
