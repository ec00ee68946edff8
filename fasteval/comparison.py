"""Compare runs the way IR papers do: means, differences, paired tests, corrections.

:func:`compare` evaluates runs and tests each against one or more baselines
(or every pair of runs, without a baseline) per measure;
:func:`compare_table` does the same from an evaluation table already
computed. The result, a :class:`Comparison`, holds a polars table and renders
text, Markdown, LaTeX, HTML and CSV.

Rules
-----
* **Means** are trec_eval's: each run's mean over the queries it has (with
  ``complete=True``, trec_eval ``-c``: over every qrels query, a missing one
  scoring 0).
* **Paired tests** pair the queries both runs have (a query one run lacks is
  left out of that pair's test); with ``complete=True`` a query that one of
  the two runs lacks counts as 0 for it (``-c``), over the queries either has.
  ``n_queries`` says how many queries each test used.
* **Wins/ties/losses** count those paired queries with a per-query value above,
  equal to or below the baseline's.
* **Correction family**: the comparisons of one measure against one baseline
  (every other run against it), or, without a baseline, every pair of runs
  for that measure, as PyTerrier does.
* The tests themselves, their tie and zero rules and the Monte Carlo p-value
  bound: :mod:`fasteval.analysis.statistics`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval.analysis import statistics as sg
from fasteval.api import evaluate
from fasteval.errors import ParameterError
from fasteval.measures.ir_measures_names import canonical, split_judged_only
from fasteval.measures.parser import parse_measure

SCHEMA = {
    "measure": pl.String,
    "baseline": pl.String,
    "run_id": pl.String,
    "mean": pl.Float64,
    "baseline_mean": pl.Float64,
    "diff": pl.Float64,
    "diff_pct": pl.Float64,
    "p_value": pl.Float64,
    "p_corrected": pl.Float64,
    "significant": pl.Boolean,
    "wins": pl.Int64,
    "ties": pl.Int64,
    "losses": pl.Int64,
    "n_queries": pl.Int64,
}
FORMATS = ("text", "markdown", "latex", "html", "csv")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def measure_names(measures: Any) -> list[str]:
    """Measure arguments as strings: names, or ir_measures measure objects (their ``str``)."""
    if measures is None:
        return ["map", "ndcg_cut_10", "P_10"]
    if isinstance(measures, str) or not isinstance(measures, (list, tuple, set, frozenset)):
        measures = [measures]

    return [m.strip() if isinstance(m, str) else canonical(m) for m in measures]


@dataclass
class Comparison:
    """The result of :func:`compare`.

    Attributes
    ----------
    table
        One row per (measure, baseline, run): ``measure, baseline, run_id,
        mean, baseline_mean, diff, diff_pct, p_value, p_corrected,
        significant, wins, ties, losses, n_queries``. With baselines, each
        baseline's block also has the baseline's own row (comparison columns
        null); without, one row per pair of runs (``baseline`` is the second run).
    means
        One row per run, a column per measure (trec_eval's means).
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

    # ------------------------------------------------------------------ display

    def _p_text(self, p: float | None) -> str:
        if p is None or (isinstance(p, float) and math.isnan(p)):
            return "-"
        if self.test in sg.MONTE_CARLO and p <= 1.0 / (self.B + 1) * (1 + 1e-9):
            return f"<={_num(1.0 / (self.B + 1))}"
        return _num(p)

    def _cells(self) -> tuple[list[str], list[list[str]], list[str]]:
        """Header, rows and footnotes of the rendered table."""
        if self.baselines:
            return self._baseline_cells()
        return self._pairs_cells()

    def _baseline_cells(self) -> tuple[list[str], list[list[str]], list[str]]:
        assert self.baselines is not None
        header = ["run"]
        p_label = "p" if self.correction == "none" else f"p ({self.correction})"
        for m in self.measures:
            header += [m, f"{m} diff", f"{m} {p_label}", f"{m} W/T/L"]
        if len(self.baselines) > 1:
            header.insert(0, "baseline")
        rows: list[list[str]] = []
        index = {
            (r["baseline"], r["run_id"], r["measure"]): r for r in self.table.iter_rows(named=True)
        }
        for b in self.baselines:
            for run in self.runs:
                row = [run + (" (baseline)" if run == b else "")]
                for m in self.measures:
                    r = index[(b, run, m)]
                    if run == b:
                        row += [_num(r["mean"]), "", "", ""]
                        continue
                    mark = "*" if r["significant"] else ""
                    pct = r["diff_pct"]
                    pct_s = "" if pct is None or math.isnan(pct) else f" ({pct:+.1f}%)"
                    row += [
                        f"{_num(r['mean'])}{mark}",
                        f"{r['diff']:+.4f}{pct_s}",
                        self._p_text(r["p_corrected"]),
                        f"{r['wins']}/{r['ties']}/{r['losses']}",
                    ]
                if len(self.baselines) > 1:
                    row.insert(0, b)
                rows.append(row)
        return header, rows, self._footnotes()

    def _pairs_cells(self) -> tuple[list[str], list[list[str]], list[str]]:
        letters = {r: _letter(i) for i, r in enumerate(self.runs)}
        beats: dict[tuple[str, str], list[str]] = {}
        for r in self.table.filter(pl.col("significant")).iter_rows(named=True):
            a, b, m = r["run_id"], r["baseline"], r["measure"]
            winner, loser = (a, b) if r["diff"] > 0 else (b, a)
            beats.setdefault((winner, m), []).append(letters[loser])
        header = ["", "run", *self.measures]
        means = {r["run_id"]: r for r in self.means.iter_rows(named=True)}
        rows = []
        for run in self.runs:
            row = [f"({letters[run]})", run]
            for m in self.measures:
                sup = "".join(sorted(beats.get((run, m), [])))
                row.append(_num(means[run][m]) + (f"^{sup}" if sup else ""))
            rows.append(row)
        return header, rows, self._footnotes()

    def _footnotes(self) -> list[str]:
        test = {
            "t": "paired t-test (two-sided)",
            "wilcoxon": "Wilcoxon signed-rank test (two-sided; zero differences dropped, "
            "ties get average ranks; exact for <= 50 differences without ties/zeros, "
            "else normal approximation with tie correction)",
            "randomization": f"randomization test, {self.B} sign flips, seed {self.seed}, "
            "p = (hits + 1) / (B + 1)",
            "bootstrap": f"paired bootstrap test (Sakai), {self.B} resamples, "
            f"seed {self.seed}, p = (hits + 1) / (B + 1)",
            "tukey": "Tukey's HSD (Tukey-Kramer; all runs of a measure are the groups, "
            "studentized range); it controls the family-wise error over all pairs, "
            "so no further correction is applied",
        }[self.test]
        corr = {
            "holm": "Holm",
            "bonferroni": "Bonferroni",
            "bh": "Benjamini-Hochberg",
            "none": "no",
        }[self.correction]
        if self.baselines:
            family = "the runs compared with one baseline on one measure"
            mark = f"* = corrected p < {self.alpha} against the baseline"
        else:
            family = "every pair of runs on one measure"
            mark = (
                f"superscripts: the runs this run beats with corrected p < {self.alpha} "
                "(ranx style)"
            )
        queries = (
            "paired over the queries either run has, a missing one scoring 0 (-c)"
            if self.complete
            else "paired over the queries both runs have; means over each run's own queries"
        )
        return [
            f"test: {test}",
            f"correction: {corr} correction; family = {family}",
            mark,
            f"queries: {queries}",
            *self.notes,
        ]

    def to_text(self) -> str:
        """A plain-text table with aligned columns and the footnotes."""
        header, rows, notes = self._cells()
        widths = [max(len(c) for c in col) for col in zip(header, *rows, strict=True)]

        def line(cells: list[str]) -> str:
            return "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()

        out = [line(header), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in rows]
        out += ["", *(f"# {n}" for n in notes)]
        return "\n".join(out) + "\n"

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table and the footnotes."""
        header, rows, notes = self._cells()

        def esc(c: str) -> str:
            c = c.replace("|", "\\|").replace("*", "\\*")
            if "^" in c:
                base, sup = c.split("^", 1)
                c = f"{base}<sup>{sup}</sup>"
            return c

        out = ["| " + " | ".join(esc(c) for c in header) + " |"]
        out.append("|" + "|".join([":--"] + ["--:"] * (len(header) - 1)) + "|")
        out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
        out += ["", *(f"- {esc(n)}" for n in notes)]
        return "\n".join(out) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (significance as ``$^{*}$``, superscripts as ``$^{ab}$``)."""
        header, rows, notes = self._cells()

        def esc(c: str) -> str:
            c = c.replace("\\", "\\textbackslash{}")
            for ch in "&%$#_{}":
                c = c.replace(ch, "\\" + ch)
            c = c.replace("<=", "$\\leq$")
            if "^" in c:
                base, sup = c.split("^", 1)
                c = f"{base}$^{{{sup}}}$"
            if c.endswith("*"):
                c = c[:-1] + "$^{*}$"
            return c

        spec = "l" * min(2, len(header)) + "r" * (len(header) - min(2, len(header)))
        out = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
        out.append(" & ".join(esc(c) for c in header) + " \\\\")
        out.append("\\midrule")
        out += [" & ".join(esc(c) for c in r) + " \\\\" for r in rows]
        out += ["\\bottomrule", "\\end{tabular}"]
        out += [f"% {n}" for n in notes]
        return "\n".join(out) + "\n"

    def to_html(self) -> str:
        """An HTML ``<table>`` (superscripts as ``<sup>``) with the footnotes below."""
        header, rows, notes = self._cells()

        def cell(c: str) -> str:
            if "^" in c:
                base, sup = c.split("^", 1)
                return f"{html.escape(base)}<sup>{html.escape(sup)}</sup>"
            return html.escape(c)

        out = ['<table class="fasteval-compare">', "<thead><tr>"]
        out += [f"<th>{html.escape(c)}</th>" for c in header]
        out.append("</tr></thead><tbody>")
        for r in rows:
            out.append("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>")
        out.append("</tbody></table>")
        out.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """:attr:`table` as CSV (full precision, machine-readable)."""
        return self.table.write_csv()

    def render(self, fmt: str = "text") -> str:
        """Render in ``fmt``: ``text``, ``markdown``, ``latex``, ``html`` or ``csv``."""
        fn = {
            "text": self.to_text,
            "markdown": self.to_markdown,
            "md": self.to_markdown,
            "latex": self.to_latex,
            "tex": self.to_latex,
            "html": self.to_html,
            "csv": self.to_csv,
        }.get(fmt)
        if fn is None:
            msg = f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"
            raise ParameterError(msg)
        return fn()

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_text()


def _num(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "-"
    if x != 0.0 and abs(x) < 1e-4:
        return f"{x:.1e}"
    return f"{x:.4f}"


def _letter(i: int) -> str:
    return _LETTERS[i] if i < len(_LETTERS) else f"{_LETTERS[i % 26]}{i // 26}"


def _wide_per_query(table: pl.DataFrame, measure: str, runs: list[str]) -> tuple[np.ndarray, int]:
    """``(n_runs, n_queries)`` per-query values of ``measure``; NaN where a run lacks a query."""
    df = table.filter((pl.col("measure") == measure) & (pl.col("query_id") != "all"))
    if df.height == 0:
        msg = f"no per-query values for measure {measure!r}: evaluate with per_query=True"
        raise ParameterError(msg)
    wide = df.pivot(on="query_id", index="run_id", values="value", aggregate_function="first")
    wide = pl.DataFrame({"run_id": runs}).join(wide, on="run_id", how="left")
    qcols = [c for c in wide.columns if c != "run_id"]
    X = wide.select(qcols).to_numpy().astype(np.float64)
    return X, len(qcols)


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

    Returns
    -------
    Comparison
    """
    need = {"run_id", "query_id", "measure", "value"}
    if not need <= set(table.columns):
        msg = f"the evaluation table needs columns {sorted(need)}, got {table.columns}"
        raise ParameterError(msg)
    t = sg.test_name(test)
    c = sg.correction_name(correction)
    if t == "tukey":
        c = "none"  # Tukey's HSD controls the family-wise error over all pairs itself
    if not 0.0 < alpha < 1.0:
        msg = f"alpha must be in (0, 1), got {alpha}"
        raise ParameterError(msg)
    if t in sg.MONTE_CARLO and B < 1:
        msg = f"the {t} test needs B >= 1 resamples, got {B}"
        raise ParameterError(msg)
    runs = table["run_id"].unique(maintain_order=True).to_list()
    have = table["measure"].unique(maintain_order=True).to_list()
    ms = list(measures) if measures is not None else have
    missing = [m for m in ms if m not in have]
    if missing:
        msg = f"measure(s) {missing} not in the evaluation table (have {have})"
        raise ParameterError(msg)
    if len(runs) < 2:
        msg = f"need at least 2 runs to compare, got {len(runs)}"
        raise ParameterError(msg)
    baselines: list[str] | None
    if baseline is None:
        baselines = None
    else:
        baselines = [baseline] if isinstance(baseline, str) else list(baseline)
        unknown = [b for b in baselines if b not in runs]
        if unknown:
            shown = ", ".join(runs[:8]) + (" ..." if len(runs) > 8 else "")
            msg = f"baseline {unknown[0]!r} is not among the runs ({shown})"
            raise ParameterError(msg)
    means = _means(table, runs, ms)
    rows: list[dict[str, Any]] = []
    for m in ms:
        X, _ = _wide_per_query(table, m, runs)
        mean_of = dict(zip(runs, means[m].to_list(), strict=True))
        families: list[list[tuple[int, int]]]
        if baselines is not None:
            families = [[(runs.index(r), runs.index(b)) for r in runs] for b in baselines]
        else:
            families = [[(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]]
        hsd = _tukey(X, complete) if t == "tukey" else None
        for fam in families:
            block: list[dict[str, Any]] = []
            for i, j in fam:
                block.append(_pair_row(X[i], X[j], t, B, seed, complete))
                if hsd is not None:
                    block[-1]["p_value"] = float(hsd[i, j])
                block[-1].update(
                    measure=m,
                    baseline=runs[j],
                    run_id=runs[i],
                    mean=mean_of[runs[i]],
                    baseline_mean=mean_of[runs[j]],
                )
            pvals = np.array(
                [r["p_value"] if i != j else np.nan for r, (i, j) in zip(block, fam, strict=True)]
            )
            adj = sg.adjust(pvals, c)
            for r, (i, j), pc in zip(block, fam, adj, strict=True):
                if i == j:  # the baseline's own row
                    for k in ("diff", "diff_pct", "p_value", "p_corrected", "significant"):
                        r[k] = None
                    for k in ("wins", "ties", "losses", "n_queries"):
                        r[k] = None
                    continue
                r["diff"] = r["mean"] - r["baseline_mean"]
                bm = r["baseline_mean"]
                r["diff_pct"] = 100.0 * r["diff"] / bm if bm else math.nan
                r["p_corrected"] = float(pc)
                r["significant"] = bool(pc < alpha) if not math.isnan(pc) else False
            rows.extend(block)
    out = pl.DataFrame(rows, schema=SCHEMA) if rows else pl.DataFrame(schema=SCHEMA)
    notes = []
    if t in sg.MONTE_CARLO:
        notes.append(f"seed {seed}; smallest possible p = 1/(B+1) = {1.0 / (B + 1):.3g}")
    return Comparison(
        table=out,
        means=means,
        runs=runs,
        measures=ms,
        baselines=baselines,
        test=t,
        correction=c,
        alpha=alpha,
        B=B,
        seed=seed,
        complete=complete,
        notes=notes,
    )


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
    return sg.tukey_hsd(groups)


def _pair_row(
    x: np.ndarray, y: np.ndarray, test: str, B: int, seed: int, complete: bool
) -> dict[str, Any]:
    if complete:
        keep = ~(np.isnan(x) & np.isnan(y))
        d = np.nan_to_num(x[keep]) - np.nan_to_num(y[keep])
    else:
        keep = ~(np.isnan(x) | np.isnan(y))
        d = x[keep] - y[keep]
    return {
        "p_value": math.nan if test == "tukey" else sg.p_value(d, test, B=B, seed=seed),
        "wins": int((d > 0).sum()),
        "ties": int((d == 0).sum()),
        "losses": int((d < 0).sum()),
        "n_queries": int(d.shape[0]),
    }


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
        See :func:`compare_table`.
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
