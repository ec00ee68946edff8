"""``fasteval compare``: a table of runs against baselines with paired significance tests."""

from __future__ import annotations

import click

from fasteval.commands.common import (
    Writes,
    friendly,
    level_option,
    output_option,
    qrels_and_runs,
    reading_options,
)


@click.command("compare")
@qrels_and_runs
@click.option(
    "-b",
    "--baseline",
    "baselines",
    multiple=True,
    help="Baseline run id (repeatable; each is its own correction family). "
    "Without it: every pair of runs, ranx-style superscripts.",
)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Measure (trec_eval or ir_measures name; repeatable). Default: map, ndcg_cut_10, P_10.",
)
@click.option(
    "--test",
    type=click.Choice(["t", "wilcoxon", "randomization", "bootstrap", "tukey"]),
    default="t",
    show_default=True,
    help="Paired two-sided test, or tukey (Tukey's HSD over all runs).",
)
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "bh", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-comparison correction over the comparisons of one measure.",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@click.option(
    "-B",
    "--resamples",
    "B",
    type=int,
    default=9999,
    show_default=True,
    help="Sign flips / bootstrap resamples (randomization, bootstrap).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the Monte Carlo tests."
)
@click.option(
    "-c",
    "complete",
    is_flag=True,
    help="trec_eval -c: means over every qrels query; a query a run lacks scores 0 in the tests.",
)
@level_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "latex", "html", "csv"]),
    default=None,
    help="Table layout. Default: from -o's suffix (.md, .tex, .html, .csv), else text.",
)
@output_option(writes=Writes(("text", "markdown", "latex", "html", "csv"), "text"))
@reading_options
@friendly
def compare_cmd(
    qrels: str,
    runs: tuple[str, ...],
    baselines: tuple[str, ...],
    measures: tuple[str, ...],
    test: str,
    correction: str,
    alpha: float,
    B: int,
    seed: int,
    complete: bool,
    level: int,
    fmt: str,
    output: str | None,
    run_id_from: str,
    keep_first: bool,
    lenient: bool,
) -> None:
    """Compare RUNS against a baseline per measure: means, differences, p-values, W/T/L."""
    from fasteval.comparison import compare

    cmp = compare(
        qrels,
        list(runs),
        list(measures) or None,
        baseline=list(baselines) or None,
        test=test,
        correction=correction,
        alpha=alpha,
        B=B,
        seed=seed,
        complete=complete,
        relevance_level=level,
        run_id_from=run_id_from,
        on_duplicate="first" if keep_first else "error",
        lenient=lenient,
    )
    text = cmp.render(fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        from fasteval.io.writers import write_text

        write_text(text, output)
