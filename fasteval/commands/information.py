"""``fasteval ric``, ``fasteval infodiff`` and ``fasteval correlate`` (SPEC section 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from fasteval.commands.common import (
    TABLE_WRITES,
    friendly,
    options,
    output_option,
    progress_bar,
    progress_option,
    qrels_and_runs,
    run_id_option,
    show_progress,
)
from fasteval.errors import ParameterError

_FORMATS = click.Choice(["tsv", "csv", "json", "parquet"])  # io.writers.TABLE_FORMATS

if TYPE_CHECKING:
    import polars as pl


def _emit(df: pl.DataFrame, fmt: str, output: str | None) -> None:
    from fasteval.io.writers import TABLE_FORMATS, write_table

    text = write_table(df, fmt, output, formats=TABLE_FORMATS, tsv_digits=4)
    if text is not None:
        click.echo(text, nl=False)


_common = options(
    qrels_and_runs,
    click.option(
        "-l",
        "level",
        type=int,
        default=1,
        show_default=True,
        help="Relevance level: grade >= level is relevant (truncation point).",
    ),
    click.option(
        "--format",
        "fmt",
        type=_FORMATS,
        default=None,
        help="Output format. Default: from -o's suffix (.parquet, .csv, .json), else tsv.",
    ),
    output_option(writes=TABLE_WRITES),
    run_id_option,
)


@click.command("ric")
@_common
@click.option("-q", "per_query", is_flag=True, help="Also print per-query values.")
@friendly
def ric_cmd(
    qrels: str,
    runs: tuple[str, ...],
    level: int,
    fmt: str,
    output: str | None,
    run_id_from: str,
    per_query: bool,
) -> None:
    """Relevance information correlation (RIC, bits) of every run in RUNS."""
    from fasteval.analysis.information import ric

    df = ric(qrels, list(runs), relevance_level=level, per_query=per_query, run_id_from=run_id_from)
    _emit(df, fmt, output)


@click.command("infodiff")
@_common
@click.option(
    "--bin-by",
    default=None,
    help="Compare only runs whose score by this measure (e.g. map) falls in the same bin.",
)
@click.option("--bins", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--top", type=click.IntRange(min=1), default=None, help="Print only the N smallest.")
@click.option(
    "--cluster",
    envvar="FASTEVAL_CLUSTER",
    default=None,
    help="Compute blocks of pairs on this Dask scheduler (tcp://host:8786, or local:N).",
)
@progress_option
@friendly
def infodiff_cmd(
    qrels: str,
    runs: tuple[str, ...],
    level: int,
    fmt: str,
    output: str | None,
    run_id_from: str,
    bin_by: str | None,
    bins: int,
    top: int | None,
    cluster: str | None,
    progress: bool | None,
) -> None:
    """Information difference of pairs of runs, smallest first (near-duplicate systems).

    With --bin-by map --bins 20, runs are put in 20 equal-width bins of MAP and
    only pairs within a bin are compared, as Golbus & Aslam do.
    """
    from fasteval.analysis.information import all_pairs, binned_pairs, pair_data

    if bin_by is not None:  # checked before the inputs are read
        from fasteval.measures.parser import parse_measures

        n = len(parse_measures([bin_by]))
        if n != 1:
            msg = f"--bin-by needs one measure, got {bin_by!r} ({n} measures)"
            raise ParameterError(msg)
    if cluster:
        from fasteval.distributed import information_difference

        df = information_difference(
            qrels,
            list(runs),
            client=cluster,
            relevance_level=level,
            run_id_from=run_id_from,
            bin_by=bin_by,
            bins=bins,
            progress=show_progress(progress),
        ).sort("id", nulls_last=True)
        _emit(df.head(top) if top is not None else df, fmt, output)
        return
    data = pair_data(qrels, list(runs), relevance_level=level, run_id_from=run_id_from)
    n = len(data.run_names)
    cols: dict[str, Any] = {}
    if bin_by is None:
        a, b = all_pairs(n)
    else:
        a, b, cols = binned_pairs(data, bin_by, bins, relevance_level=level)
    show = show_progress(progress)
    with progress_bar(a.shape[0], "pair", "information difference", show) as bar:
        mean, _ = data.information_difference(a, b, progress=bar.update)
    import polars as pl

    names = pl.Series(data.run_names, dtype=pl.String)
    df = pl.DataFrame(
        {"run_a": names.gather(a), "run_b": names.gather(b), "id": mean, **cols}
    ).sort("id", nulls_last=True)
    if top is not None:
        df = df.head(top)
    _emit(df, fmt, output)


@click.command("correlate")
@_common
@click.option("-a", "measure_a", default="map", show_default=True, help="First measure.")
@click.option("-b", "measure_b", default="RIC", show_default=True, help="Second measure.")
@click.option(
    "--given",
    multiple=True,
    help="Condition information tau on the rankings by these measures (repeatable).",
)
@click.option("--per-query", is_flag=True, help="Correlate per query (systems ranked per query).")
@click.option("--top", type=click.IntRange(min=2), default=None, help="Only the top-k by -a.")
@friendly
def correlate_cmd(
    qrels: str,
    runs: tuple[str, ...],
    level: int,
    fmt: str,
    output: str | None,
    run_id_from: str,
    measure_a: str,
    measure_b: str,
    given: tuple[str, ...],
    per_query: bool,
    top: int | None,
) -> None:
    """Correlation of the system rankings by two measures (tau_a, tau_b, rho, r, tau_AP, tau_I)."""
    from fasteval.analysis.correlation import METHODS, information_tau, rank_correlation
    from fasteval.api import evaluate
    from fasteval.measures.catalog import output_name

    # the one measure parser: every name the API takes, checked before any input is read
    col_a = output_name(measure_a, what="-a")
    col_b = output_name(measure_b, what="-b")
    col_given = [output_name(g, what="--given") for g in given]
    names = list(dict.fromkeys([measure_a, measure_b, *given]))
    df = evaluate(
        qrels,
        list(runs),
        names,
        per_query=per_query,
        relevance_level=level,
        run_id_from=run_id_from,
    )
    import polars as pl

    want = "all"
    rows = []
    qids = sorted(set(df["query_id"].to_list()) - {"all"}) if per_query else [want]
    for q in qids:
        wide = (
            df.filter(pl.col("query_id") == q)
            .pivot(on="measure", index="run_id", values="value")
            .drop_nulls()
        )
        if wide.height < 2:
            continue
        if top is not None:
            wide = wide.sort(col_a, descending=True).head(top)
        x = wide[col_a].to_numpy()
        y = wide[col_b].to_numpy()
        row: dict[str, Any] = {"query_id": q, "n_systems": wide.height}
        for m in METHODS:
            row[m] = rank_correlation(x, y, m)
        if given:
            g = [wide[n].to_numpy() for n in col_given]
            row["cond_information_tau"] = information_tau(x, y, given=g)
        rows.append(row)
    _emit(pl.DataFrame(rows), fmt, output)
