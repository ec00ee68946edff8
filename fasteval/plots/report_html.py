"""Write an evaluation report to files: text pages and self-contained HTML.

``write_report(rep, outdir)`` writes, per run, ``<run>.txt`` (the NIST summary
layout) and ``<run>.html`` (tables and the two figures embedded as PNG), and an
``index.html`` ranking the runs by MAP with a precision-recall plot comparing
them. File names are the run ids with anything but letters, digits, ``.-_``
replaced by ``_``.
"""

from __future__ import annotations

import base64
import html
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from fasteval.analysis.report import CUTOFFS, IPREC, PREC, RECALL_LEVELS, Report, format_text
from fasteval.errors import ParameterError
from fasteval.io.writers import make_folder, write_text

FORMATS = ("text", "html", "both")
MAX_INDEX_CURVES = 10

CSS = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f0f0f0; }
td.l, th.l { text-align: left; }
td.pos { color: #1a7f37; } td.neg { color: #b42318; }
.figs img { max-width: 100%; margin-right: 1em; }
"""


def file_stem(run_id: str) -> str:
    """A file name for a run id."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", run_id) or "_"


def _stems(runs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    used: set[str] = set()
    for r in runs:
        s = file_stem(r)
        if s in used or s == "index":
            i = 2
            while f"{s}_{i}" in used:
                i += 1
            s = f"{s}_{i}"
        used.add(s)
        out[r] = s
    return out


def _png(draw: Callable[[Path], object]) -> str:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "fig.png"
        draw(p)
        data = base64.b64encode(p.read_bytes()).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> str:
    def cell(tag: str, v: object, i: int, cls: str = "") -> str:
        c = ' class="l"' if i < left else cls
        return f"<{tag}{c}>{html.escape(str(v))}</{tag}>"

    out = ["<table>", "<tr>" + "".join(cell("th", h, i) for i, h in enumerate(header)) + "</tr>"]
    for row in rows:
        tds = []
        for i, v in enumerate(row):
            cls = ""
            if isinstance(v, str) and v.startswith(("+", "-")) and i >= left:
                cls = ' class="pos"' if v.startswith("+") else ' class="neg"'
            tds.append(cell("td", v, i, cls))
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def run_html(rep: Report, run_id: str, *, figures: bool = True) -> str:
    """One run's report as a self-contained HTML page.

    Parameters
    ----------
    rep
        The report.
    run_id
        The run.
    figures
        Embed the precision-recall and median-difference figures (needs matplotlib).

    Returns
    -------
    str
        The page: summary, recall- and document-level precision, the figures,
        and per topic the run against its group's best / median / worst.
    """
    rep.run_summary(run_id)  # an unknown run: a ParameterError naming the runs
    group = rep.groups[run_id]
    members = [r for r in rep.runs if rep.groups[r] == group]
    parts = _summary_parts(rep, run_id, members)
    if figures:
        parts.append(_figures(rep, run_id, members))
    parts += [
        f"<h2>Per topic, against the best / median / worst of {len(members)} runs</h2>",
        _topic_table(rep, run_id),
    ]
    return _page(f"{run_id}: evaluation report", "\n".join(parts))


def _summary_parts(rep: Report, run_id: str, members: list[str]) -> list[str]:
    """The page's heading and its three summary tables."""
    s = rep.run_summary(run_id)
    group = rep.groups[run_id]
    what = rep.descriptions.get(group, group)
    counts = [s["num_q"], s["num_ret"], s["num_rel"], s["num_rel_ret"]]
    return [
        '<p><a href="index.html">all runs</a></p>',
        f"<h1>{html.escape(run_id)}</h1>",
        f"<p>trec_eval {rep.compat} arithmetic; group: {html.escape(what)} "
        f"({len(members)} runs)</p>",
        "<h2>Summary statistics</h2>",
        _table(
            ["Topics", "Retrieved", "Relevant", "Rel_ret", "MAP", "R-prec"],
            [[*counts, f"{s['map']:.4f}", f"{s['Rprec']:.4f}"]],
            left=0,
        ),
        "<h2>Recall-level precision averages</h2>",
        _table(
            ["Recall", *(f"{r:.2f}" for r in RECALL_LEVELS)],
            [["Precision", *(f"{s[c]:.4f}" for c in IPREC)]],
        ),
        "<h2>Document-level precision averages</h2>",
        _table(
            ["At docs", *(str(k) for k in CUTOFFS)], [["Precision", *(f"{s[c]:.4f}" for c in PREC)]]
        ),
    ]


def _figures(rep: Report, run_id: str, members: list[str]) -> str:
    """The precision-recall curve among the group and, with company, the median difference."""
    from fasteval.plots import report as plots

    pr = _png(
        lambda p: plots.precision_recall(
            rep, p, members, highlight=run_id, title=f"{run_id} among its group"
        )
    )
    figs = [pr]
    if len(members) > 1:
        figs.append(_png(lambda p: plots.median_difference(rep, run_id, p)))
    return '<div class="figs">' + "".join(figs) + "</div>"


_TOPIC_HEADER = (
    "Topic",
    "Relevant",
    "Retrieved",
    "Rel_ret",
    "P@10",
    "R-prec",
    "AP",
    "Best AP",
    "Median AP",
    "Worst AP",
    "AP - median",
)


def _topic_table(rep: Report, run_id: str) -> str:
    """Per topic: the run's counts, P@10, R-prec and AP; its group's best / median / worst AP."""
    mine = rep.per_query.filter(pl.col("run_id") == run_id).select(
        "query_id", "num_ret", "num_rel_ret", "P_10", "Rprec"
    )
    t = rep.vs_median(run_id).join(mine, on="query_id", how="left")
    rows = [
        [
            r["query_id"],
            r["num_rel"],
            r["num_ret"] or 0,
            r["num_rel_ret"] or 0,
            f"{r['P_10'] or 0:.4f}",
            f"{r['Rprec'] or 0:.4f}",
            f"{r['map']:.4f}",
            f"{r['map_best']:.4f}",
            f"{r['map_median']:.4f}",
            f"{r['map_worst']:.4f}",
            f"{r['diff']:+.4f}",
        ]
        for r in t.iter_rows(named=True)
    ]
    return _table(_TOPIC_HEADER, rows)


def index_html(rep: Report, stems: dict[str, str], *, figures: bool = True) -> str:
    """The index page: every run ranked by MAP, linked to its page."""
    from fasteval.plots import report as plots

    s = rep.summary.sort("map", descending=True)
    rows = [
        [
            f'<a href="{stems[r["run_id"]]}.html">{html.escape(r["run_id"])}</a>',
            html.escape(rep.groups[r["run_id"]]),
            r["num_q"],
            r["num_ret"],
            r["num_rel_ret"],
            f"{r['map']:.4f}",
            f"{r['Rprec']:.4f}",
            f"{r['P_10']:.4f}",
            f"{r['iprec_at_recall_0.00']:.4f}",
        ]
        for r in s.iter_rows(named=True)
    ]
    head = [
        "Run",
        "Group",
        "Topics",
        "Retrieved",
        "Rel_ret",
        "MAP",
        "R-prec",
        "P@10",
        "P at recall 0",
    ]
    table = [
        "<table>",
        "<tr>"
        + "".join(f"<th{' class=l' if i < 2 else ''}>{h}</th>" for i, h in enumerate(head))
        + "</tr>",
    ]
    for row in rows:
        table.append(
            "<tr>"
            + "".join(f"<td{' class=l' if i < 2 else ''}>{v}</td>" for i, v in enumerate(row))
            + "</tr>"
        )
    table.append("</table>")
    parts = [
        f"<h1>Evaluation report: {len(rows)} runs</h1>",
        f"<p>trec_eval {rep.compat} arithmetic.</p>",
    ]
    if figures:
        top = s["run_id"].to_list()[:MAX_INDEX_CURVES]
        title = (
            "Interpolated recall-precision"
            if len(top) == len(rows)
            else f"Interpolated recall-precision: top {len(top)} runs by MAP"
        )
        parts.append(
            '<div class="figs">'
            + _png(lambda p: plots.precision_recall(rep, p, top, title=title))
            + "</div>"
        )
    parts.append("\n".join(table))
    return _page("Evaluation report", "\n".join(parts))


def write_report(
    rep: Report,
    outdir: str | Path,
    fmt: str = "both",
    *,
    figures: bool = True,
    progress: Callable[[str], object] | None = None,
) -> list[Path]:
    """Write the report of every run into ``outdir``.

    Parameters
    ----------
    rep
        The report (:func:`fasteval.analysis.report.report`).
    outdir
        Directory (created if missing).
    fmt
        ``"text"`` (``<run>.txt``), ``"html"`` (``<run>.html`` + ``index.html``) or
        ``"both"``.
    figures
        Embed the figures in the HTML pages (needs matplotlib).
    progress
        Called with each run id once its files are written.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    if fmt not in FORMATS:
        msg = f"format must be one of {', '.join(FORMATS)}, got {fmt!r}"
        raise ParameterError(msg)
    out = Path(outdir)
    make_folder(out)
    stems = _stems(rep.runs)
    written: list[Path] = []
    for r in rep.runs:
        if fmt in ("text", "both"):
            p = out / f"{stems[r]}.txt"
            write_text(format_text(rep, r), p)
            written.append(p)
        if fmt in ("html", "both"):
            p = out / f"{stems[r]}.html"
            write_text(run_html(rep, r, figures=figures), p)
            written.append(p)
        if progress is not None:
            progress(r)
    if fmt in ("html", "both"):
        p = out / "index.html"
        write_text(index_html(rep, stems, figures=figures), p)
        written.append(p)
    return written
