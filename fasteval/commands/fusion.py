"""``fasteval fuse``: metasearch over runs, written as a TREC run file or a Parquet archive."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import click

from fasteval.commands.common import (
    OutputOption,
    Writes,
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

# fuse-study's and optimize-fusion's tables (io.writers.write_frame)
_TABLE = Writes(("parquet", "csv", "tsv"), None, param=None)

if TYPE_CHECKING:
    import polars as pl

    from fasteval.analysis.fusion.methods import FusionMethod


def _params(items: tuple[str, ...]) -> dict[str, float]:
    """``--param name=value`` pairs (repeatable)."""
    out: dict[str, float] = {}
    for it in items:
        key, sep, val = it.partition("=")
        number = _number(val) if sep else None
        if number is None:
            msg = f"--param takes name=value (e.g. --param phi=0.8), got {it!r}"
            raise ParameterError(msg)
        out[key.strip()] = number
    return out


def _number(text: str) -> float | None:
    """``text`` as a float, or ``None`` if it is not one."""
    try:
        return float(text)
    except ValueError:
        return None


_METHOD_HELP = (
    "ranx's methods: combsum (sum, wsum), combmnz, combanz, combmax, combmin, combmed, "
    "combgmnz (gamma), mixed, wmnz, rrf (k), isr, log_isr, logn_isr (sigma), rbc (phi), "
    "borda (bordafuse, w_bordafuse), condorcet (w_condorcet); supervised (need "
    "--train-qrels): probfuse (n_segments), segfuse, slidefuse (w), posfuse, bayesfuse, "
    "mapfuse; upper bounds (need --qrels): naive, pareto, majoritarian."
)
_NORM_HELP = "min-max, min-max-inverted, max, zscore (zmuv), sum, rank, borda, none."


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--method", default="combsum", show_default=True, help=_METHOD_HELP)
@click.option(
    "--weight",
    "weights",
    type=float,
    multiple=True,
    help="Per-run weight, in the order of --run (or of the runs read); weighted methods.",
)
@click.option("--rrf-k", type=float, default=None, help="RRF's k (default 60).")
@click.option(
    "--param",
    "params",
    multiple=True,
    help="A method parameter name=value (repeatable): k, phi, gamma, sigma, w, n_segments.",
)
@click.option("--norm", default="min-max", show_default=True, help=_NORM_HELP)
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="Qrels file.")
@click.option(
    "--train-qrels",
    type=click.Path(dir_okay=False),
    default=None,
    help="Training qrels of a supervised method.",
)
@click.option(
    "--train-run",
    "train_runs",
    multiple=True,
    type=click.Path(),
    help="Training runs of a supervised method (repeatable; default: the RUNS fused).",
)
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
@output_option(
    "fused.run (TREC text) or fused.parquet.",
    required=True,
    writes=Writes(("trec", "parquet"), "trec", param=None, any_suffix=True),
)
@run_id_option
@lenient_option
@friendly
def fuse_cmd(
    runs: tuple[str, ...],
    method: str,
    weights: tuple[float, ...],
    rrf_k: float | None,
    params: tuple[str, ...],
    norm: str,
    qrels: str | None,
    train_qrels: str | None,
    train_runs: tuple[str, ...],
    depth: int,
    run_ids: tuple[str, ...],
    level: int,
    name: str | None,
    output: str,
    run_id_from: str,
    lenient: bool,
) -> None:
    """Fuse RUNS (files, directories, Parquet archives) per query into one run."""
    from fasteval.analysis.fusion import fuse, prepare_fusion

    spec, p = _fuse_method(method, norm, params, qrels, train_qrels)
    t0 = time.perf_counter()
    fin = prepare_fusion(
        list(runs), qrels, lenient=lenient, run_id_from=run_id_from, only=list(run_ids) or None
    )
    df = fuse(
        fin,
        spec.name,
        list(run_ids) or None,
        depth,
        norm=norm,
        rel_level=level,
        name=name,
        weights=list(weights) or None,
        k=rrf_k,
        params=p,
        train_qrels=train_qrels,
        train_runs=list(train_runs or runs) if spec.trained else None,
    )
    from fasteval.io.writers import write_run

    write_run(df, output)
    n = len(run_ids) or fin.n_runs
    click.echo(
        f"wrote {output}: {spec.name} of {n} runs, {df['query_id'].n_unique()} queries, "
        f"{df.height:,} rows in {time.perf_counter() - t0:.1f} s",
        err=True,
    )


def _fuse_method(
    method: str,
    norm: str,
    params: tuple[str, ...],
    qrels: str | None,
    train_qrels: str | None,
) -> tuple[FusionMethod, dict[str, float]]:
    """The method and its ``--param`` values, checked with its qrels before the runs are read."""
    from fasteval.analysis.fusion import check_norm, method_spec, norm_name

    spec = method_spec(method)
    check_norm(spec, norm_name(norm))
    p = _params(params)
    if spec.upper_bound and qrels is None:  # checked before the runs are read
        msg = f"--method {spec.name} is an upper bound: it needs qrels (give --qrels QRELS)"
        raise ParameterError(msg)
    if spec.trained is not None and train_qrels is None:
        msg = f"--method {spec.name} is supervised: give --train-qrels (and --train-run)"
        raise ParameterError(msg)
    return spec, p


@click.command("optimize-fusion")
@qrels_and_runs
@click.option("-m", "--method", default="wsum", show_default=True, help=_METHOD_HELP)
@click.option("--norm", default="min-max", show_default=True, help=_NORM_HELP)
@click.option(
    "--metric",
    default="nDCG@100",
    show_default=True,
    help="Measure to maximise (fasteval or ranx spelling: nDCG@100, ndcg@100, map, ...).",
)
@click.option(
    "--step",
    type=float,
    default=None,
    help="Grid step (default ranx's: 0.1 weights, 0.01 phi/gamma/sigma, 10 k, 1 w/n_segments).",
)
@click.option("--from", "first", type=float, default=None, help="First value of the parameter.")
@click.option("--to", "last", type=float, default=None, help="Last value of the parameter.")
@click.option(
    "--grid",
    type=click.Choice(["ranx", "simplex"]),
    default="ranx",
    show_default=True,
    help="Weight tuples: ranx's (float sum == 1.0) or every exact one.",
)
@click.option(
    "--folds",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Also choose by cross-validation over this many query folds (0: no).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the folds.")
@click.option("--run", "run_ids", multiple=True, help="Fuse only these run ids (repeatable).")
@click.option("--depth", type=click.IntRange(min=1), default=1000, show_default=True)
@level_option
@output_option("Write every configuration here (.parquet, .csv, .tsv).", writes=_TABLE)
@click.option(
    "--top", type=click.IntRange(min=1), default=10, show_default=True, help="Rows printed."
)
@run_id_option
@lenient_option
@friendly
def optimize_fusion_cmd(
    qrels: str,
    runs: tuple[str, ...],
    method: str,
    norm: str,
    metric: str,
    step: float | None,
    first: float | None,
    last: float | None,
    grid: str,
    folds: int,
    seed: int,
    run_ids: tuple[str, ...],
    depth: int,
    level: int,
    output: str | None,
    top: int,
    run_id_from: str,
    lenient: bool,
) -> None:
    """Score every configuration of a fusion method's grid on QRELS; the best first.

    All configurations are fused and scored as one batch. With --folds, the
    configuration is also chosen on training folds of queries and scored on
    the held-out fold (the cross-validated estimate is printed last).
    """
    import polars as pl

    from fasteval.analysis.fusion import cross_validate_fusion, optimize_fusion, prepare_fusion

    name, metric = _check_optimize(method, norm, metric, folds)
    t0 = time.perf_counter()
    fin = prepare_fusion(list(runs), qrels, lenient=lenient, run_id_from=run_id_from)
    kw: dict[str, Any] = {
        "step": step,
        "run_ids": list(run_ids) or None,
        "grid": grid,
        "first": first,
        "last": last,
        "depth": depth,
        "rel_level": level,
    }
    df = optimize_fusion(None, fin, name, norm, metric, **kw)
    if output is not None:
        from fasteval.io.writers import write_frame

        write_frame(df, output)
    text = df.head(top).with_columns(pl.col(pl.Float64).round(4)).write_csv(separator="\t")
    click.echo(text, nl=False)
    if folds:
        cv = cross_validate_fusion(None, fin, name, norm, metric, folds=folds, seed=seed, **kw)
        _echo_cross_validation(cv, folds, seed, metric)
    click.echo(
        f"{df.height} configurations of {name} in {time.perf_counter() - t0:.1f} s",
        err=True,
    )


def _check_optimize(method: str, norm: str, metric: str, folds: int) -> tuple[str, str]:
    """The method's canonical name and the metric's fasteval name, checked before reading runs."""
    from fasteval.analysis.fusion import check_norm, method_spec, norm_name
    from fasteval.analysis.fusion.optimize import metric_name

    spec = method_spec(method)
    check_norm(spec, norm_name(norm))
    metric = metric_name(metric)  # unknown names fail before the runs are read
    if folds == 1:
        msg = "--folds must be 0 (none) or at least 2"
        raise ParameterError(msg)
    return spec.name, metric


def _echo_cross_validation(cv: pl.DataFrame, folds: int, seed: int, metric: str) -> None:
    """Print the folds' table and the cross-validated estimate (mean test value by ``n_test``)."""
    import polars as pl

    click.echo(f"# cross-validated over {folds} query folds (seed {seed})")
    click.echo(cv.with_columns(pl.col(pl.Float64).round(4)).write_csv(separator="\t"), nl=False)
    n_test = cv["n_test"].to_numpy()
    est = float((cv["test"].to_numpy() * n_test).sum() / n_test.sum())
    click.echo(f"# cross-validated {metric}: {est:.4f}")


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
@output_option("Per-group table: .parquet, .csv or .tsv.", required=True, writes=_TABLE)
@click.option(
    "--summary",
    cls=OutputOption,
    writes=_TABLE,
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
    from fasteval.analysis.fusion import prepare_fusion, upper_bound_study

    ms = _study_methods(methods, norm, measure)
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
    summ = _write_study(df, output, summary, plot)
    import polars as pl

    text = summ.with_columns(pl.col(pl.Float64).round(4)).write_csv(separator="\t")
    click.echo(text, nl=False)
    click.echo(
        f"wrote {output}: {n_groups} groups of {size} runs (seed {seed}) x {len(ms)} methods "
        f"in {time.perf_counter() - t0:.1f} s",
        err=True,
    )


def _study_methods(methods: tuple[str, ...], norm: str, measure: str) -> list[str]:
    """The study's methods (default all seven), with the norm and measure checked before reading."""
    from fasteval.analysis.fusion import STUDY_METHODS, method_name, norm_name
    from fasteval.measures.parser import parse_measures

    ms = [method_name(m) for spec in methods for m in spec.split(",") if m.strip()]
    ms = ms or list(STUDY_METHODS)
    norm_name(norm)
    parse_measures([measure], compat=10)  # unknown names fail before the runs are read
    return ms


def _write_study(
    df: pl.DataFrame, output: str, summary: str | None, plot: str | None
) -> pl.DataFrame:
    """Write the study table (and its summary and plot if asked); return the summary."""
    from fasteval.analysis.fusion import upper_bound_summary
    from fasteval.io.writers import write_frame

    write_frame(df, output)
    summ = upper_bound_summary(df)
    if summary is not None:
        write_frame(summ, summary)
    if plot is not None:
        from fasteval.plots.fusion import upper_bound_scatter

        upper_bound_scatter(df, plot)
    return summ
