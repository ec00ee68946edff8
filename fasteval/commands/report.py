"""``fasteval report``: the classic per-run evaluation report (text and HTML)."""

from __future__ import annotations

from pathlib import Path

import click

from fasteval.commands.common import (
    friendly,
    level_option,
    no_extra_warning,
    progress_bar,
    progress_option,
    qrels_and_runs,
    reading_options,
    show_progress,
)
from fasteval.errors import InputFormatError, ParameterError


def read_groups(path: str) -> dict[str, str]:
    """``run_id group name`` per line (``#`` comments and blank lines skipped)."""
    groups: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split(None, 1)
            if len(parts) < 2:
                msg = f"{path}:{n}: expected 'run_id group', got {text!r}"
                raise InputFormatError(msg)
            groups[parts[0]] = parts[1].strip()
    return groups


@click.command("report")
@qrels_and_runs
@click.option(
    "-o",
    "--output",
    "outdir",
    type=click.Path(file_okay=False),
    default=None,
    help="Directory for <run>.txt / <run>.html / index.html (default: text on stdout).",
)
@click.option(
    "--compat",
    type=click.Choice(["8", "9", "10"]),
    default="9",
    show_default=True,
    help="trec_eval arithmetic: 9.0.8, 10.0, or 8 = before 9 (as the 1990s NIST summaries).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "html", "both"]),
    default=None,
    help="What to write (default: both with -o, text without).",
)
@click.option(
    "--groups",
    "groups_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="File of 'run_id group' lines: best/median/worst per topic within each group.",
)
@level_option
@click.option("--no-figures", is_flag=True, help="HTML without the embedded plots.")
@reading_options
@progress_option
@friendly
def report_cmd(
    qrels: str,
    runs: tuple[str, ...],
    outdir: str | None,
    compat: str,
    fmt: str | None,
    groups_file: str | None,
    level: int,
    no_figures: bool,
    run_id_from: str,
    keep_first: bool,
    lenient: bool,
    progress: bool | None,
) -> None:
    """Per-run evaluation report of RUNS against QRELS, as the TREC summary pages.

    Summary counts, interpolated precision at 11 recall levels, average
    precision, precision at 5..1000 documents, R-precision, and per topic the
    best / median / worst over the runs (or each run's --groups group).
    """
    if outdir is not None and not no_figures and fmt != "text":
        # the text reports need no matplotlib: without it, they (and the HTML) are
        # written all the same, without figures
        no_figures = not no_extra_warning("matplotlib", "the HTML reports have no figures")
    from fasteval.analysis.report import format_text, report
    from fasteval.plots.report_html import write_report

    fmt = fmt or ("both" if outdir else "text")
    if outdir is None and fmt != "text":
        msg = f"--format {fmt} writes files: give a directory with -o DIR"
        raise ParameterError(msg)
    groups = read_groups(groups_file) if groups_file else None
    rep = report(
        qrels,
        list(runs),
        compat=int(compat),
        groups=groups,
        relevance_level=level,
        on_duplicate="first" if keep_first else "error",
        lenient=lenient,
        run_id_from=run_id_from,
    )
    if groups is not None:
        # as `study leave-out --groups` does: a map that leaves runs out is refused
        # (the Python API's report() puts them in the group "runs", as documented)
        missing = [r for r in rep.runs if r not in groups]
        if missing:
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            msg = (
                f"{groups_file}: run(s) {', '.join(missing[:5])}{more} have no group "
                "in the run -> group map\n  hint: add a 'run_id group' line for each"
            )
            raise ParameterError(msg)
    if outdir is None:
        for r in rep.runs:
            click.echo(format_text(rep, r), nl=False)
        return
    with progress_bar(len(rep.runs), "run", "writing report", show_progress(progress)) as bar:
        files = write_report(
            rep, outdir, fmt, figures=not no_figures, progress=lambda _r: bar.update(1)
        )
    click.echo(f"wrote {len(files)} files to {Path(outdir)}", err=True)
