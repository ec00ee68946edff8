"""``fasteval study subsample|pool-depth|leave-out``: rankings under missing judgments."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from fasteval.commands.common import (
    friendly,
    level_option,
    no_extra_warning,
    on_interrupt,
    options,
    progress_option,
    qrels_and_runs,
    show_progress,
    study_kept,
)
from fasteval.errors import InputFormatError, ParameterError


def parse_floats(text: str | None, what: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(t) for t in text.replace(" ", "").split(",") if t]
    except ValueError:
        msg = f"--{what} must be comma-separated numbers, got {text!r}"
        raise ParameterError(msg) from None


def _ints(text: str, what: str) -> list[int]:
    out: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = (int(v) for v in part.split("-", 1))
                out.extend(range(a, b + 1))
            else:
                out.append(int(part))
        except ValueError:
            msg = f"--{what} must be comma-separated integers or ranges a-b, got {text!r}"
            raise ParameterError(msg) from None
    return out


def read_groups(path: str) -> dict[str, str]:
    """A run -> group map: one ``run group`` pair per line (whitespace separated)."""
    groups: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 2:
                msg = f"{path}:{n}: expected 'run group', got {line.strip()!r}"
                raise InputFormatError(msg)
            groups[parts[0]] = parts[1]
    return groups


def _finish(res: Any, out: str, plot: bool, xlabel: str, t0: float) -> None:
    if plot and no_extra_warning("matplotlib", "no plots were drawn"):
        from fasteval.plots.studies import plot_study

        for st in ("tau", "tau_ap"):
            plot_study(res.summary, Path(out) / f"{st}.png", statistic=st, xlabel=xlabel)
    echo_summary(res, out, t0)


#: Fewer repetitions than this give confidence intervals too rough to rely on.
FEW_REPS = 10


def echo_summary(res: Any, out: str, t0: float) -> None:
    """Print a study's Kendall tau per setting and measure, and where it was written.

    The table is titled with its statistic; information tau, when computed, is a
    column of its own in bits (a mutual information, not a correlation: it may
    exceed 1). Intervals from fewer than :data:`FEW_REPS` repetitions come with a
    warning, and a resumed study says how many of its units were already done.
    """
    import polars as pl

    summary = res.summary
    keys = ["setting", "measure"]
    tau = summary.filter(pl.col("statistic") == "tau").select(
        *keys, "n", "mean", "ci_low", "ci_high", "min", "max"
    )
    info = summary.filter(pl.col("statistic") == "information_tau")
    if info.height:
        bits = info.select(*keys, pl.col("mean").alias("info_tau_bits"))
        tau = tau.join(bits, on=keys, how="left", maintain_order="left")
    n = tau["n"].to_list()
    if n and max(n) == 1:  # one repetition per setting: no interval to show
        tau = tau.drop("ci_low", "ci_high")
    click.echo(
        "Kendall's tau (b) between each variant's system ranking and the full qrels' ranking: "
        + ("value per setting" if n and max(n) == 1 else "mean over n repetitions, 95% CI")
        + ", min, max"
        + (
            "; info_tau_bits: information tau in bits (mutual information, not a "
            "correlation: may exceed 1)"
            if info.height
            else ""
        )
    )
    with pl.Config(
        tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True
    ):
        click.echo(str(tau))
    few = sorted({k for k in n if 1 < k < FEW_REPS})
    if few:
        click.echo(
            f"fasteval: warning: confidence intervals from {', '.join(map(str, few))} "
            f"repetition(s) are rough; use --reps {FEW_REPS} or more",
            err=True,
        )
    total = int(res.units.select(pl.struct("setting", "rep").n_unique()).item())
    if getattr(res, "resumed", 0):
        click.echo(
            f"fasteval: note: resumed the study in {out}: {res.resumed} of {total} units "
            "were already done",
            err=True,
        )
    click.echo(f"wrote {out} in {time.perf_counter() - t0:.1f} s", err=True)


_with_common = options(
    qrels_and_runs,
    click.option(
        "-m",
        "--measure",
        "measures",
        multiple=True,
        help=(
            "Measures to rank systems by (default: map, ndcg, P_10): ad-hoc names, RIC, HSA, DO, "
            "or diversity names (alpha_nDCG@20, ERR_IA@20, NRBP, ...; QRELS are then diversity "
            "qrels and a variant drops whole judged documents)."
        ),
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="Study seed."),
    click.option(
        "-o",
        "--output",
        "out",
        required=True,
        type=click.Path(file_okay=False),
        help="Output folder (one Parquet per finished setting; re-run to resume).",
    ),
    level_option,
    click.option("--no-plot", is_flag=True, help="Skip the PNG figures."),
    click.option(
        "--cluster",
        envvar="FASTEVAL_CLUSTER",
        default=None,
        help="Run the units on this Dask scheduler (tcp://host:8786, or local:N); "
        "env FASTEVAL_CLUSTER. Paths must be readable by every worker.",
    ),
    progress_option,
)


@click.group("study")
def study() -> None:
    """Robustness of system rankings to missing judgments (Kendall tau vs full qrels)."""


@study.command("subsample")
@_with_common
@click.option(
    "--rates",
    default="0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0",
    show_default=True,
    help="Sampling rates in (0, 1], comma separated.",
)
@click.option("--reps", type=click.IntRange(min=1), default=30, show_default=True)
@friendly
def subsample_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    seed: int,
    out: str,
    level: int,
    no_plot: bool,
    cluster: str | None,
    progress: bool | None,
    rates: str,
    reps: int,
) -> None:
    """Randomly subsample the judgments at each rate, REPS times, and re-rank the systems."""
    from fasteval.analysis.studies import subsample
    from fasteval.distributed import with_cluster

    on_interrupt(study_kept(out))
    t0 = time.perf_counter()
    res = with_cluster(subsample, cluster)(
        qrels,
        list(runs),
        list(measures) or None,
        rates=parse_floats(rates, "rates") or [],
        reps=reps,
        seed=seed,
        out_dir=out,
        relevance_level=level,
        progress=show_progress(progress),
    )
    _finish(res, out, not no_plot, "sampling rate", t0)


@study.command("pool-depth")
@_with_common
@click.option(
    "--depths",
    default="1,2,3,5,10,20,30,50,75,100",
    show_default=True,
    help="Pool depths (comma separated; ranges a-b allowed).",
)
@friendly
def pool_depth_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    seed: int,
    out: str,
    level: int,
    no_plot: bool,
    cluster: str | None,
    progress: bool | None,
    depths: str,
) -> None:
    """Keep only judgments of documents some run ranks in its top k, for each depth k."""
    from fasteval.analysis.studies import pool_depth
    from fasteval.distributed import with_cluster

    on_interrupt(study_kept(out))
    t0 = time.perf_counter()
    res = with_cluster(pool_depth, cluster)(
        qrels,
        list(runs),
        list(measures) or None,
        depths=_ints(depths, "depths"),
        seed=seed,
        out_dir=out,
        relevance_level=level,
        progress=show_progress(progress),
    )
    _finish(res, out, not no_plot, "pool depth", t0)


@study.command("leave-out")
@_with_common
@click.option("--rates", default=None, help="Shares of runs (or groups) to leave out.")
@click.option(
    "--groups",
    type=click.Path(dir_okay=False),
    default=None,
    help="Run -> group map ('run group' per line); alone: leave one group out.",
)
@click.option("--pool-depth", "depth", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--reps", type=click.IntRange(min=1), default=30, show_default=True)
@friendly
def leave_out_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    seed: int,
    out: str,
    level: int,
    no_plot: bool,
    cluster: str | None,
    progress: bool | None,
    rates: str | None,
    groups: str | None,
    depth: int,
    reps: int,
) -> None:
    """Drop judgments that only left-out runs (or groups) contributed to the depth-K pool."""
    from fasteval.analysis.studies import leave_out
    from fasteval.distributed import with_cluster

    on_interrupt(study_kept(out))
    t0 = time.perf_counter()
    res = with_cluster(leave_out, cluster)(
        qrels,
        list(runs),
        list(measures) or None,
        rates=parse_floats(rates, "rates"),
        groups=read_groups(groups) if groups else None,
        depth=depth,
        reps=reps,
        seed=seed,
        out_dir=out,
        relevance_level=level,
        progress=show_progress(progress),
    )
    _finish(res, out, not no_plot, "share left out" if rates else "group left out", t0)
