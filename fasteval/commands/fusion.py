"""``fasteval fuse``: metasearch over runs, written as a TREC run file or a Parquet archive."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fasteval.commands._common import friendly

if TYPE_CHECKING:
    import polars as pl


def write_run(df: pl.DataFrame, path: str) -> None:
    """Write a run-schema frame as TREC text (``qid Q0 doc rank score tag``) or Parquet."""
    import polars as pl

    from fasteval.io.tables import PARQUET_SUFFIXES, write_parquet

    p = Path(path)
    if p.suffix.lower() in PARQUET_SUFFIXES:
        write_parquet(df.to_arrow(compat_level=pl.CompatLevel.oldest()), p)
        return
    lines = df.select(
        pl.format(
            "{} Q0 {} {} {} {}",
            "query_id",
            "doc_id",
            "rank",
            pl.col("score").cast(pl.String),
            "run_id",
        )
    ).to_series()
    text = "\n".join(lines.to_list())
    p.write_text(text + "\n" if text else "")


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option(
    "-m",
    "--method",
    default="combsum",
    show_default=True,
    help="combsum, combmnz, combanz, condorcet; upper bounds (need --qrels): "
    "naive, pareto, majoritarian.",
)
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
@click.option("-l", "level", type=int, default=1, show_default=True, help="Relevance level.")
@click.option("--name", default=None, help="Run id of the fused run (default: the method).")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="fused.run (TREC text) or fused.parquet.",
)
@click.option(
    "--run-id",
    "run_id_from",
    type=click.Choice(["tag", "filename"]),
    default="tag",
    show_default=True,
    help="Name input runs after the tag column or the file name.",
)
@click.option("--lenient", is_flag=True, help="Skip malformed lines (and say how many).")
@friendly
def fuse_cmd(
    runs: tuple[str, ...],
    method: str,
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
    from fasteval.analysis.fusion import fuse, method_name, norm_name, prepare_fusion

    m = method_name(method)
    norm_name(norm)
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
    )
    write_run(df, output)
    n = len(run_ids) or fin.n_runs
    click.echo(
        f"wrote {output}: {m} of {n} runs, {df['query_id'].n_unique()} queries, "
        f"{df.height:,} rows in {time.perf_counter() - t0:.1f} s",
        err=True,
    )
