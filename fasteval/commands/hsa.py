"""``fasteval hsa``: DO and HSA of every run (histogram analysis, SPEC section 4)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fasteval.commands.common import (
    TABLE_WRITES,
    friendly,
    level_option,
    output_option,
    progress_bar,
    progress_option,
    qrels_and_runs,
    reading_options,
    require_extra,
    show_progress,
)

if TYPE_CHECKING:
    from fasteval.analysis.hsa import Histograms


@click.command("hsa")
@qrels_and_runs
@click.option(
    "--values",
    type=click.Choice(["rank", "score"]),
    default="rank",
    show_default=True,
    help="Histogram the normalised rank 1-(rank-1)/depth or the min-max normalised score.",
)
@click.option("--bins", type=click.IntRange(min=1), default=20, show_default=True)
@click.option(
    "--normalize",
    type=click.Choice(["query", "run"]),
    default="query",
    show_default=True,
    help="Min-max bounds for scores: per query or per run.",
)
@click.option("-q", "--per-query", is_flag=True, help="One histogram per query, then the mean.")
@click.option(
    "--sample",
    "nonrel_sample",
    type=click.IntRange(min=0),
    default=None,
    help="Use at most this many judged non-relevant documents per query (seeded).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option(
    "--unjudged",
    type=click.Choice(["exclude", "nonrel"]),
    default="exclude",
    show_default=True,
    help="Leave retrieved unjudged documents out, or count them as non-relevant.",
)
@level_option
@click.option("--compat", type=click.Choice(["9", "10"]), default="9", show_default=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tsv", "csv", "json", "parquet"]),
    default=None,
    help="Output format. Default: from -o's suffix (.parquet, .csv, .json), else tsv.",
)
@output_option(writes=TABLE_WRITES)
@click.option(
    "--plot",
    "plot_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write a PNG per run and one with the best and worst run side by side here.",
)
@reading_options
@progress_option
@friendly
def hsa_cmd(
    qrels: str,
    runs: tuple[str, ...],
    values: str,
    bins: int,
    normalize: str,
    per_query: bool,
    nonrel_sample: int | None,
    seed: int,
    unjudged: str,
    level: int,
    compat: str,
    fmt: str,
    output: str | None,
    plot_dir: str | None,
    run_id_from: str,
    keep_first: bool,
    lenient: bool,
    progress: bool | None,
) -> None:
    """Distributional overlap (DO, lower is better) and histogram slope (HSA, higher is better).

    Reads QRELS and RUNS (files, directories, Parquet archives) and prints one
    row per run (with -q: per query, then an 'all' row).
    """
    if plot_dir is not None:
        require_extra("matplotlib")
    from fasteval.analysis.hsa import histogram_analysis_prepared
    from fasteval.engine import prepare

    t0 = time.perf_counter()
    prep = prepare(
        qrels,
        list(runs),
        compat=int(compat),
        on_duplicate="first" if keep_first else "error",
        lenient=lenient,
        run_id_from=run_id_from,
    )
    res = histogram_analysis_prepared(
        prep,
        values=values,
        bins=bins,
        normalize=normalize,
        pooled=not per_query,
        nonrel_sample=nonrel_sample,
        seed=seed,
        unjudged=unjudged,
        relevance_level=level,
        return_histograms=True,
    )
    assert isinstance(res, tuple)  # return_histograms=True
    df, hist = res
    from fasteval.io.writers import TABLE_FORMATS, write_table

    text = write_table(df, fmt, output, formats=TABLE_FORMATS, float_precision=6)
    if text is not None:
        click.echo(text, nl=False)
    click.echo(f"# {df['run_id'].n_unique()} runs in {time.perf_counter() - t0:.2f} s", err=True)
    if plot_dir is not None:
        _plots(hist, prep.enc.run_names, per_query, Path(plot_dir), show_progress(progress))


def _plots(hist: Histograms, run_names: list[str], per_query: bool, out: Path, show: bool) -> None:
    from fasteval.plots.hsa import plot_runs

    if per_query:
        click.echo("fasteval: warning: --plot draws pooled histograms; rerun without -q", err=True)
        return
    from fasteval.io.writers import make_folder

    make_folder(out)
    with progress_bar(len(run_names), "run", "plots", show) as bar:
        for i, name in enumerate(run_names):
            plot_runs(hist, [i], [name], out / f"hsa_{_safe(name)}.png")
            bar.update(1)
    hs = [(h, i) for i, h in enumerate(hist.hsa.tolist()) if not math.isnan(h)]
    if len(hs) >= 2:
        best = max(hs)[1]
        worst = min(hs)[1]
        plot_runs(
            hist, [best, worst], [run_names[best], run_names[worst]], out / "hsa_best_vs_worst.png"
        )
    click.echo(f"# plots in {out}", err=True)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
