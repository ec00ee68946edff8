"""Render a comparison of runs as text, Markdown, LaTeX, HTML or CSV.

The numbers come from :func:`fasteval.analysis.comparison.compare_table`; this
module only lays them out. Every format shows the same cells
(:func:`cells`): with baselines, one row per run and per measure the mean (``*``
when the corrected p is below ``alpha``) with its t interval, the difference
with its paired t interval, the effect size ``d_z``, the corrected p-value and
wins/ties/losses; without, one row per run with each mean and its interval followed by the
letters of the runs it beats (``^ab``, ranx's style). Footnotes name the test,
the correction and its family, and the queries paired.
"""

from __future__ import annotations

import html
import math
from typing import Any, Protocol

import polars as pl

from fasteval.analysis.statistics import MONTE_CARLO
from fasteval.errors import ParameterError

FORMATS = ("text", "markdown", "latex", "html", "csv")
_FORMAT_ALIASES = {"md": "markdown", "tex": "latex"}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"

Cells = tuple[list[str], list[list[str]], list[str]]
"""Header, rows and footnotes of a rendered table."""


class ComparisonData(Protocol):
    """What the renderers read of a :class:`fasteval.analysis.comparison.Comparison`."""

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
    notes: list[str]
    ci_level: float
    intervals: pl.DataFrame


def number(x: float | None) -> str:
    """A mean or p-value as printed: 4 decimals, ``1.2e-05`` when tiny, ``-`` when missing.

    Parameters
    ----------
    x
        The value (None or NaN: missing).

    Returns
    -------
    str
        The printed value.
    """
    if x is None or math.isnan(x):
        return "-"
    if x != 0.0 and abs(x) < 1e-4:
        return f"{x:.1e}"
    return f"{x:.4f}"


def interval(low: float | None, high: float | None) -> str:
    """An interval as printed, ``[0.2130, 0.3190]``; empty when it is missing.

    Parameters
    ----------
    low, high
        Its ends (None or NaN: missing).

    Returns
    -------
    str
        The printed interval.
    """
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return ""
    return f"[{number(low)}, {number(high)}]"


def _with_interval(value: str, low: float | None, high: float | None) -> str:
    iv = interval(low, high)
    return f"{value} {iv}" if iv else value


def _signed(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.4f}"


def _effect(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.2f}"


def letter(i: int) -> str:
    """The letter naming the ``i``-th run in the all-pairs table (``a``..``z``, ``a1``..)."""
    return _LETTERS[i] if i < len(_LETTERS) else f"{_LETTERS[i % 26]}{i // 26}"


def p_text(cmp: ComparisonData, p: float | None) -> str:
    """A p-value as printed; a Monte Carlo test's smallest, ``1/(B+1)``, as the bound ``<=``.

    Parameters
    ----------
    cmp
        The comparison (its test and ``B``).
    p
        The p-value.

    Returns
    -------
    str
        The printed p-value.
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    if cmp.test in MONTE_CARLO and p <= 1.0 / (cmp.B + 1) * (1 + 1e-9):
        return f"<={number(1.0 / (cmp.B + 1))}"
    return number(p)


def cells(cmp: ComparisonData) -> Cells:
    """Header, rows and footnotes of the rendered table (the same for every format).

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    Cells
        ``(header, rows, footnotes)``; a superscript is written ``value^letters``,
        a significant mean ``value*``.
    """
    if cmp.baselines:
        return _baseline_cells(cmp, cmp.baselines)
    return _pairs_cells(cmp)


def _baseline_row(
    cmp: ComparisonData, index: dict[tuple[str, str, str], dict[str, Any]], baseline: str, run: str
) -> list[str]:
    row = [run + (" (baseline)" if run == baseline else "")]
    for m in cmp.measures:
        r = index[(baseline, run, m)]
        if run == baseline:
            row += [_with_interval(number(r["mean"]), r["ci_low"], r["ci_high"]), "", "", "", ""]
            continue
        mark = "*" if r["significant"] else ""
        pct = r["diff_pct"]
        pct_s = "" if pct is None or math.isnan(pct) else f" ({pct:+.1f}%)"
        diff_iv = interval(r["diff_ci_low"], r["diff_ci_high"])
        row += [
            _with_interval(f"{number(r['mean'])}{mark}", r["ci_low"], r["ci_high"]),
            f"{r['diff']:+.4f}{pct_s}" + (f" {diff_iv}" if diff_iv else ""),
            _effect(r["effect_size"]),
            p_text(cmp, r["p_corrected"]),
            f"{r['wins']}/{r['ties']}/{r['losses']}",
        ]
    if len(cmp.baselines or ()) > 1:
        row.insert(0, baseline)
    return row


def _baseline_cells(cmp: ComparisonData, baselines: list[str]) -> Cells:
    header = ["run"]
    p_label = "p" if cmp.correction == "none" else f"p ({cmp.correction})"
    for m in cmp.measures:
        header += [m, f"{m} diff", f"{m} d_z", f"{m} {p_label}", f"{m} W/T/L"]
    if len(baselines) > 1:
        header.insert(0, "baseline")
    index = {(r["baseline"], r["run_id"], r["measure"]): r for r in cmp.table.iter_rows(named=True)}
    rows = [_baseline_row(cmp, index, b, run) for b in baselines for run in cmp.runs]
    return header, rows, footnotes(cmp)


def _pairs_cells(cmp: ComparisonData) -> Cells:
    letters = {r: letter(i) for i, r in enumerate(cmp.runs)}
    beats: dict[tuple[str, str], list[str]] = {}
    for r in cmp.table.filter(pl.col("significant")).iter_rows(named=True):
        a, b, m = r["run_id"], r["baseline"], r["measure"]
        winner, loser = (a, b) if r["diff"] > 0 else (b, a)
        beats.setdefault((winner, m), []).append(letters[loser])
    header = ["", "run", *cmp.measures]
    means = {r["run_id"]: r for r in cmp.means.iter_rows(named=True)}
    cis = {
        (r["run_id"], r["measure"]): (r["ci_low"], r["ci_high"])
        for r in cmp.intervals.iter_rows(named=True)
    }
    rows = []
    for run in cmp.runs:
        row = [f"({letters[run]})", run]
        for m in cmp.measures:
            sup = "".join(sorted(beats.get((run, m), [])))
            lo, hi = cis.get((run, m), (None, None))
            row.append(_with_interval(number(means[run][m]), lo, hi) + (f"^{sup}" if sup else ""))
        rows.append(row)
    return header, rows, footnotes(cmp)


_TEST_NOTES = {
    "t": "paired t-test (two-sided)",
    "wilcoxon": "Wilcoxon signed-rank test (two-sided; zero differences dropped, "
    "ties get average ranks; exact for <= 50 differences without ties/zeros, "
    "else normal approximation with tie correction)",
    "randomization": "randomization test, {B} sign flips, seed {seed}, p = (hits + 1) / (B + 1)",
    "bootstrap": "paired bootstrap test (Sakai), {B} resamples, seed {seed}, "
    "p = (hits + 1) / (B + 1)",
    "tukey": "Tukey's HSD (Tukey-Kramer; all runs of a measure are the groups, "
    "studentized range); it controls the family-wise error over all pairs, "
    "so no further correction is applied",
}
_CORRECTION_NOTES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
    "none": "no",
}


def footnotes(cmp: ComparisonData) -> list[str]:
    """What the table shows: the test, the correction and its family, the marks, the queries.

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    list of str
        One line each, then the comparison's own notes.
    """
    test = _TEST_NOTES[cmp.test].format(B=cmp.B, seed=cmp.seed)
    if cmp.baselines:
        family = "the runs compared with one baseline on one measure"
        mark = f"* = corrected p < {cmp.alpha} against the baseline"
    else:
        family = "every pair of runs on one measure"
        mark = f"superscripts: the runs this run beats with corrected p < {cmp.alpha} (ranx style)"
    queries = (
        "paired over the queries either run has, a missing one scoring 0 (-c)"
        if cmp.complete
        else "paired over the queries both runs have; means over each run's own queries"
    )
    level = f"{100 * cmp.ci_level:g}%"
    intervals = (
        f"[low, high]: {level} t interval of the mean over queries; after a difference, "
        f"the paired t interval of the mean difference; d_z = mean(d) / sd(d), Cohen's "
        f"paired effect size"
        if cmp.baselines
        else f"[low, high]: {level} t interval of the mean over queries"
    )
    return [
        f"test: {test}",
        f"correction: {_CORRECTION_NOTES[cmp.correction]} correction; family = {family}",
        mark,
        f"queries: {queries}",
        intervals,
        *cmp.notes,
    ]


def to_text(cmp: ComparisonData) -> str:
    """A plain-text table with aligned columns and the footnotes.

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    str
        The table; the first two columns left-aligned, the others right-aligned.
    """
    header, rows, notes = cells(cmp)
    widths = [max(len(c) for c in col) for col in zip(header, *rows, strict=True)]

    def line(row: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    out += ["", *(f"# {n}" for n in notes)]
    return "\n".join(out) + "\n"


def _markdown_cell(c: str) -> str:
    c = c.replace("|", "\\|").replace("*", "\\*")
    if "^" in c:
        base, sup = c.split("^", 1)
        c = f"{base}<sup>{sup}</sup>"
    return c


def to_markdown(cmp: ComparisonData) -> str:
    """A GitHub-flavoured Markdown table and the footnotes.

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    str
        The table (superscripts as ``<sup>``) and the footnotes as a list.
    """
    header, rows, notes = cells(cmp)
    out = ["| " + " | ".join(_markdown_cell(c) for c in header) + " |"]
    out.append("|" + "|".join([":--"] + ["--:"] * (len(header) - 1)) + "|")
    out += ["| " + " | ".join(_markdown_cell(c) for c in r) + " |" for r in rows]
    out += ["", *(f"- {_markdown_cell(n)}" for n in notes)]
    return "\n".join(out) + "\n"


def _latex_cell(c: str) -> str:
    c = c.replace("\\", "\\textbackslash{}")
    for ch in "&%$#_{}":
        c = c.replace(ch, "\\" + ch)
    c = c.replace("<=", "$\\leq$")
    if "^" in c:
        base, sup = c.split("^", 1)
        c = f"{base}$^{{{sup}}}$"
    if "*" in c:  # the significance mark, after the mean and before its interval
        c = c.replace("*", "$^{*}$", 1)
    return c


def to_latex(cmp: ComparisonData) -> str:
    """A booktabs ``tabular`` (significance as ``$^{*}$``, superscripts as ``$^{ab}$``).

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    str
        The ``tabular`` and the footnotes as ``%`` comments.
    """
    header, rows, notes = cells(cmp)
    left = min(2, len(header))
    spec = "l" * left + "r" * (len(header) - left)
    out = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
    out.append(" & ".join(_latex_cell(c) for c in header) + " \\\\")
    out.append("\\midrule")
    out += [" & ".join(_latex_cell(c) for c in r) + " \\\\" for r in rows]
    out += ["\\bottomrule", "\\end{tabular}"]
    out += [f"% {n}" for n in notes]
    return "\n".join(out) + "\n"


def _html_cell(c: str) -> str:
    if "^" in c:
        base, sup = c.split("^", 1)
        return f"{html.escape(base)}<sup>{html.escape(sup)}</sup>"
    return html.escape(c)


def to_html(cmp: ComparisonData) -> str:
    """An HTML ``<table>`` (superscripts as ``<sup>``) with the footnotes below.

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    str
        A ``<table class="fasteval-compare">`` and a ``<ul>`` of footnotes.
    """
    header, rows, notes = cells(cmp)
    out = ['<table class="fasteval-compare">', "<thead><tr>"]
    out += [f"<th>{html.escape(c)}</th>" for c in header]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    out.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(out) + "\n"


def to_csv(cmp: ComparisonData) -> str:
    """The comparison's table as CSV (full precision, machine-readable).

    Parameters
    ----------
    cmp
        The comparison.

    Returns
    -------
    str
        ``cmp.table`` written as CSV.
    """
    return cmp.table.write_csv()


def render(cmp: ComparisonData, fmt: str = "text") -> str:
    """Render in ``fmt``: ``text``, ``markdown`` (``md``), ``latex`` (``tex``), ``html`` or ``csv``.

    Parameters
    ----------
    cmp
        The comparison.
    fmt
        The format.

    Returns
    -------
    str
        The rendered comparison.
    """
    name = _FORMAT_ALIASES.get(fmt, fmt)
    fn = {
        "text": to_text,
        "markdown": to_markdown,
        "latex": to_latex,
        "html": to_html,
        "csv": to_csv,
    }.get(name)
    if fn is None:
        msg = f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"
        raise ParameterError(msg)
    return fn(cmp)
