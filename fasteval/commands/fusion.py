"""``fasteval fuse``: metasearch over runs, written as a TREC run file or a Parquet archive."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from fasteval.commands._common import (
    friendly,
    lenient_option,
    level_option,
    output_option,
    progress_bar,
    progress_option,
    qrels_and_runs,
    require_extra,
    run_id_option,
    show_progress,
)
from fasteval.errors import ParameterError

if TYPE_CHECKING:
    pass


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option(
    "-m",
    "--method",
    default="combsum",
    show_default=True,
    help="combsum, combmnz, combanz, rrf, borda, condorcet; upper bounds (need --qrels): "
    "naive, pareto, majoritarian.",
)
@click.option(
    "--weight",
    "weights",
    type=float,
    multiple=True,
    help="Per-run weight, in the order of --run (or of the runs read); combsum/rrf/borda.",
)
@click.option("--rrf-k", type=float, default=60.0, show_default=True, help="RRF's k.")
@click.option(
    "--norm",
    default="min-max",
    show_default=True,
    help="Score normalisation for Comb*: min-max, zscore, sum, rank, none.",
)
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="Qrels file.")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Documents kept per query.",
)
@click.option("--run", "run_ids", multiple=True, help="Fuse only these run ids (repeatable).")
@level_option
@click.option("--name", default=None, help="Run id of the fused run (default: the method).")
@output_option("fused.run (TREC text) or fused.parquet.", required=True)
@run_id_option
@lenient_option
@friendly
def fuse_cmd(
    runs: tuple[str, ...],
    method: str,
    weights: tuple[float, ...],
    rrf_k: float,
    norm: str,
    qrels: str | None,
    depth: int,
    run_ids: tuple[str, ...],
    level: int,
    name: str | None,
    output: str,
    run_id_from: str,
    lenient: bool,
) -> None:
    """Fuse RUNS (files, directories, Parquet archives) per query into one run."""
    from fasteval.analysis.fusion import (
        UPPER_BOUNDS,
        fuse,
        method_name,
        norm_name,
        prepare_fusion,
    )

    m = method_name(method)
    norm_name(norm)
    if m in UPPER_BOUNDS and qrels is None:  # checked before the runs are read
        msg = f"--method {m} is an upper bound: it needs qrels (give --qrels QRELS)"
        raise ParameterError(msg)
    t0 = time.perf_counter()
    fin = prepare_fusion(list(runs), qrels, lenient=lenient, run_id_from=run_id_from)
    df = fuse(
        fin,
        m,
        list(run_ids) or None,
        depth,
        norm=norm,
        rel_level=level,
        name=name,
        weights=list(weights) or None,
        k=rrf_k,
    )
    from fasteval.io.writers import write_run

    write_run(df, output)
    n = len(run_ids) or fin.n_runs
    click.echo(
        f"wrote {output}: {m} of {n} runs, {df['query_id'].n_unique()} queries, "
        f"{df.height:,} rows in {time.perf_counter() - t0:.1f} s",
        err=True,
    )


@click.command("fuse-study")
@qrels_and_runs
@click.option(
    "-n",
    "--groups",
    "n_groups",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Random groups of runs.",
)
@click.option(
    "--size", type=click.IntRange(min=1), default=10, show_default=True, help="Runs per group."
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the random groups.")
@click.option(
    "-m",
    "--method",
    "methods",
    multiple=True,
    help="Fusion methods (repeatable or comma-separated; default: combsum, combmnz, "
    "combanz, condorcet, naive, pareto, majoritarian).",
)
@click.option("--norm", default="min-max", show_default=True, help="Normalisation for Comb*.")
@click.option("--depth", type=click.IntRange(min=1), default=1000, show_default=True)
@level_option
@click.option(
    "--measure", default="map", show_default=True, help="Measure of fused runs besides RIC."
)
@output_option("Per-group table: .parquet, .csv or .tsv.", required=True)
@click.option(
    "--summary",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the per-method summary here (.parquet, .csv, .tsv).",
)
@click.option(
    "--plot", type=click.Path(dir_okay=False), default=None, help="Scatter plot (.png, .pdf)."
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Groups fused at once (memory).",
)
@run_id_option
@lenient_option
@progress_option
@friendly
def fuse_study_cmd(
    qrels: str,
    runs: tuple[str, ...],
    n_groups: int,
    size: int,
    seed: int,
    methods: tuple[str, ...],
    norm: str,
    depth: int,
    level: int,
    measure: str,
    output: str,
    summary: str | None,
    plot: str | None,
    batch: int,
    run_id_from: str,
    lenient: bool,
    progress: bool | None,
) -> None:
    """Upper-bound study: joint RIC of random groups of RUNS vs each fusion method.

    For N random groups of SIZE runs, the joint RIC of the group and the RIC
    and MEASURE of each method's fused run; prints Kendall tau, Spearman rho
    and RMSE between joint RIC and each per method.
    """
    if plot is not None:
        require_extra("matplotlib")
    from fasteval.analysis.fusion import (
        STUDY_METHODS,
        method_name,
        norm_name,
        prepare_fusion,
        upper_bound_study,
        upper_bound_summary,
    )

    ms = [method_name(m) for spec in methods for m in spec.split(",") if m.strip()]
    ms = ms or list(STUDY_METHODS)
    norm_name(norm)
    from fasteval.measures.parser import parse_measures

    parse_measures([measure], compat=10)  # unknown names fail before the runs are read
    t0 = time.perf_counter()
    fin = prepare_fusion(list(runs), qrels, lenient=lenient, run_id_from=run_id_from)
    show = show_progress(progress)
    with progress_bar(n_groups * len(ms), "fusion", "upper-bound study", show) as bar:
        df = upper_bound_study(
            fin,
            n_groups=n_groups,
            group_size=size,
            seed=seed,
            methods=ms,
            norm=norm,
            depth=depth,
            rel_level=level,
            measure=measure,
            batch=batch,
            progress=bar.update,
        )
    from fasteval.io.writers import write_frame

    write_frame(df, output)
    summ = upper_bound_summary(df)
    if summary is not None:
        write_frame(summ, summary)
    if plot is not None:
        from fasteval.plots.fusion import upper_bound_scatter

        upper_bound_scatter(df, plot)
    import polars as pl

    text = summ.with_columns(pl.col(pl.Float64).round(4)).write_csv(separator="\t")
    click.echo(text, nl=False)
    click.echo(
        f"wrote {output}: {n_groups} groups of {size} runs (seed {seed}) x {len(ms)} methods "
        f"in {time.perf_counter() - t0:.1f} s",
        err=True,
    )
