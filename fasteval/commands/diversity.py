"""``fasteval ndeval``: ndeval's measures and options (``fasteval eval`` routes through the API)."""

from __future__ import annotations

import click

from fasteval.commands.common import (
    Writes,
    friendly,
    output_option,
    qrels_and_runs,
    reading_options,
)

# ndeval's own layout is CSV: ``-o x.csv`` writes it (``--format csv``: the long table)
_WRITES = Writes(
    ("ndeval", "trec", "csv", "json", "parquet"), "ndeval", named_by=((".csv", "ndeval"),)
)


@click.command("ndeval")
@qrels_and_runs
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Diversity measures (alpha_nDCG@20, ERR_IA@10, NRBP, MAP_IA, P_IA@5, strec@20, ...). "
    "Default: ndeval's 21 columns.",
)
@click.option("--alpha", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--beta", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option(
    "--order",
    type=click.Choice(["rank", "traditional", "pyndeval"]),
    default="rank",
    show_default=True,
    help="rank: the rank column (ndeval's default); traditional: score, then docno "
    "descending (ndeval -traditional); pyndeval: score, then docno ascending.",
)
@click.option("-c", "complete", is_flag=True, help="Average over every qrels topic (missing = 0).")
@click.option(
    "-M", "max_depth", type=click.IntRange(min=1), default=None, help="Cut runs at depth M."
)
@click.option(
    "-l", "level", type=int, default=1, show_default=True, help="Relevant iff grade >= l."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["ndeval", "trec", "csv", "json", "parquet"]),
    default=None,
    help="Output format. Default: from -o's suffix (.parquet, .json; .csv is ndeval's "
    "own CSV), else ndeval.",
)
@output_option(writes=_WRITES)
@reading_options
@friendly
def ndeval_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    alpha: float,
    beta: float,
    order: str,
    complete: bool,
    max_depth: int | None,
    level: int,
    fmt: str,
    output: str | None,
    run_id_from: str,
    keep_first: bool,
    lenient: bool,
) -> None:
    """Novelty and diversity measures of RUNS against diversity QRELS, as ndeval computes them.

    QRELS lines are `topic subtopic docno judgment`.
    """
    from fasteval.engine.diversity import diversity_evaluate
    from fasteval.io.writers import DIVERSITY_FORMATS, write_table

    df = diversity_evaluate(
        qrels,
        list(runs),
        list(measures) or None,
        alpha=alpha,
        beta=beta,
        order=order,
        relevance_level=level,
        complete=complete,
        max_depth=max_depth,
        on_duplicate="first" if keep_first else "error",
        lenient=lenient,
        run_id_from=run_id_from,
    )
    text = write_table(df, fmt, output, formats=DIVERSITY_FORMATS)
    if text is not None:
        click.echo(text, nl=False)
