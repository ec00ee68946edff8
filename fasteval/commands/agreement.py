"""``fasteval ranks`` (bootstrap intervals of system ranks) and ``fasteval agree``
(agreement of judgment sets with a reference: labels, rankings, significance)."""

from __future__ import annotations

from pathlib import Path

import click

from fasteval.commands.common import (
    friendly,
    level_option,
    output_option,
    progress_option,
    qrels_and_runs,
    reading_options,
    require_extra,
    show_progress,
)
from fasteval.errors import ParameterError
from fasteval.io import formats

TABLE_FORMATS = ("parquet", "csv", "tsv")


def table_output(output: str | None) -> str | None:
    """``-o``'s path if its suffix names a table format (.parquet, .csv, .tsv), else an error."""
    if output is None:
        return None
    if formats.named_format(output) not in TABLE_FORMATS:
        msg = (
            f"-o {output}: the suffix {formats.output_suffix(output)!r} names no table format; "
            "use .parquet, .csv or .tsv"
        )
        raise ParameterError(msg)
    return output


resamples_option = click.option(
    "-B",
    "--resamples",
    "B",
    type=int,
    default=1000,
    show_default=True,
    help="Bootstrap resamples of the queries (>= 1).",
)
seed_option = click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the resamples."
)
plot_option = click.option(
    "--plot",
    "plot",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also draw the figure here (.png, .pdf, .svg; needs matplotlib).",
)


@click.command("ranks")
@qrels_and_runs
@click.option("-m", "--measure", default="map", show_default=True, help="The measure to rank by.")
@resamples_option
@click.option(
    "--ci-level", type=float, default=0.95, show_default=True, help="Level of the intervals."
)
@seed_option
@level_option
@output_option("Write the table here (.parquet, .csv or .tsv) instead of printing it.")
@plot_option
@reading_options
@friendly
def ranks_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measure: str,
    B: int,
    ci_level: float,
    seed: int,
    level: int,
    output: str | None,
    plot: str | None,
    run_id_from: str,
    keep_first: bool,
    lenient: bool,
) -> None:
    """Rank RUNS by MEASURE with percentile bootstrap intervals of each rank over queries.

    Prints run_id, mean, rank, rank_low, rank_high (1 = best; ties by run id).
    """
    out = table_output(output)
    if plot is not None:
        require_extra("matplotlib")
    from fasteval.comparison import rank_intervals
    from fasteval.io.writers import write_frame

    df = rank_intervals(
        qrels,
        list(runs),
        measure,
        B=B,
        level=ci_level,
        seed=seed,
        relevance_level=level,
        run_id_from=run_id_from,
        on_duplicate="first" if keep_first else "error",
        lenient=lenient,
    )
    if out is None:
        click.echo(df.write_csv(separator="\t", float_precision=6), nl=False)
    else:
        write_frame(df, out)
    if plot is not None:
        from fasteval.plots.agreement import plot_rank_intervals

        title = f"{measure}: rank intervals ({100 * ci_level:g}%, B={B}, seed {seed})"
        plot_rank_intervals(df, plot, title=title)
        click.echo(f"# figure in {plot}", err=True)


def _names(paths: tuple[str, ...]) -> dict[str, str]:
    """Name -> path of the other judgment sets: the file name, or the path when names repeat."""
    names = [Path(p).name for p in paths]
    if len(set(names)) < len(names):
        names = list(paths)
    if len(set(names)) < len(names):
        msg = f"a judgment set is given twice: {sorted(paths)}"
        raise ParameterError(msg)
    return dict(zip(names, paths, strict=True))


@click.command("agree")
@click.argument("reference", type=click.Path(dir_okay=False))
@click.argument("others", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-r",
    "--runs",
    "runs",
    multiple=True,
    type=click.Path(),
    help="Run file, directory or archive (repeatable); without runs: label agreement only.",
)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Measure (repeatable). Default: map, ndcg_cut_10, P_10.",
)
@resamples_option
@seed_option
@click.option(
    "--alpha", type=float, default=0.05, show_default=True, help="Level of the paired t-tests."
)
@level_option
@output_option(
    "Write the tables here, one file each: OUT.labels, OUT.rankings, OUT.significance, "
    "OUT.means (.parquet, .csv or .tsv)."
)
@plot_option
@reading_options
@progress_option
@friendly
def agree_cmd(
    reference: str,
    others: tuple[str, ...],
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    B: int,
    seed: int,
    alpha: float,
    level: int,
    output: str | None,
    plot: str | None,
    run_id_from: str,
    keep_first: bool,
    lenient: bool,
    progress: bool | None,
) -> None:
    """How far OTHERS (qrels) agree with the REFERENCE qrels.

    Labels: Cohen's kappa (binary at -l), quadratic weighted kappa and
    Krippendorff's ordinal alpha on the pairs judged in both. With --runs:
    Kendall's tau_b (bootstrap interval), tau_AP, RBO, the largest rank drop
    and the winner, and how many system pairs are significant (paired t-test)
    under each set and under both.
    """
    out = table_output(output)
    if plot is not None:
        require_extra("matplotlib")
        if not runs:
            msg = "--plot draws the system means: give --runs"
            raise ParameterError(msg)
    from fasteval.comparison import agreement
    from fasteval.io.writers import part_path, write_frame

    res = agreement(
        reference,
        _names(others),
        runs=list(runs) or None,
        measures=list(measures) or None,
        B=B,
        seed=seed,
        alpha=alpha,
        relevance_level=level,
        run_id_from=run_id_from,
        on_duplicate="first" if keep_first else "error",
        lenient=lenient,
        progress=show_progress(progress),
    )
    tables = {"labels": res.labels}
    if runs:
        tables.update(rankings=res.rankings, significance=res.significance, means=res.means)
    if out is None:
        overall = res.labels.filter(res.labels["query_id"].is_null()).drop("query_id")
        shown = {**tables, "labels": overall}
        shown.pop("means", None)
        for k, df in shown.items():
            click.echo(f"# {k}")
            click.echo(df.write_csv(separator="\t", float_precision=6), nl=False)
    else:
        for k, df in tables.items():
            write_frame(df, part_path(out, k))
        click.echo(f"# {', '.join(tables)} in {part_path(out, '*')}", err=True)
    if plot is not None:
        from fasteval.plots.agreement import plot_agreement

        plot_agreement(res, plot)
        click.echo(f"# figure in {plot}", err=True)
