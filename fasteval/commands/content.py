"""Content-based evaluation commands (SPEC 9): ``index``, ``complete-qrels``,
``select-judgments``, ``study content``, and ``eval --collection``.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from fasteval.commands.common import (
    Writes,
    friendly,
    level_option,
    no_extra_warning,
    on_interrupt,
    options,
    output_option,
    progress_option,
    qrels_and_runs,
    show_progress,
    study_kept,
)
from fasteval.errors import ParameterError

# complete-qrels and select-judgments write TREC qrels text, under any name but a table's
_QRELS = Writes(("qrels",), "qrels", param=None, any_suffix=True)

if TYPE_CHECKING:
    import polars as pl

collection_option = click.option(
    "--collection",
    "collection",
    required=True,
    help="Documents: an index from `fasteval index` (.parquet), a doc_id/text table "
    "(Parquet, CSV, JSONL), TREC <DOC> SGML, or classic:NAME.",
)
diversity_option = click.option(
    "--diversity",
    is_flag=True,
    help="QRELS are diversity qrels (qid subtopic docno rel); work per subtopic.",
)


def _analyzer(stem: str | None, stopwords: str | None) -> Any:
    from fasteval.io.collection import Analyzer

    words: frozenset[str] = frozenset()
    if stopwords:
        try:
            text = Path(stopwords).read_text(encoding="utf-8")
        except OSError as e:
            msg = f"{stopwords}: cannot read the stop list: {e.strerror}"
            raise ParameterError(msg) from e
        words = frozenset(w.lower() for w in text.split())
    return Analyzer(words, stem)


@click.command("index")
@click.argument("docs")
@output_option("Parquet to write.", required=True, writes=Writes(("parquet",), None, param=None))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "csv", "jsonl", "trec", "classic"]),
    default=None,
    help="Input format (default: from the file name; classic:NAME for the classic collections).",
)
@click.option("--stem", default=None, help="Snowball stemmer (english, porter, ...).")
@click.option("--stopwords", default=None, help="Stop list file (whitespace-separated words).")
@friendly
def index_cmd(
    docs: str, output: str, fmt: str | None, stem: str | None, stopwords: str | None
) -> None:
    """Tokenize a document collection once into term counts (for content measures)."""
    from fasteval.io.collection import read_collection, write_collection

    t0 = time.perf_counter()
    c = read_collection(docs, analyzer=_analyzer(stem, stopwords), format=fmt)
    write_collection(c, output)
    click.echo(
        f"indexed {len(c)} documents, {len(c.vocabulary)} terms, "
        f"{int(c.counts.sum())} tokens into {output} in {time.perf_counter() - t0:.1f} s",
        err=True,
    )


@click.command("complete-qrels")
@qrels_and_runs
@collection_option
@click.option(
    "--depth", type=click.IntRange(min=1), default=20, show_default=True, help="Pool depth K."
)
@diversity_option
@level_option
@output_option("Qrels file to write.", required=True, writes=_QRELS)
@friendly
def complete_qrels_cmd(
    qrels: str,
    runs: tuple[str, ...],
    collection: str,
    depth: int,
    diversity: bool,
    level: int,
    output: str,
) -> None:
    """Add content-predicted labels for unjudged pooled documents; write ordinary qrels."""
    from fasteval.analysis import content as ac
    from fasteval.io.writers import write_qrels

    data = ac.prepare_content(
        qrels, list(runs), collection, diversity=diversity, relevance_level=level
    )
    comp = ac.complete(data, depth=depth)
    df = ac.completed_qrels(data, comp)
    write_qrels(df, output)
    click.echo(
        f"{comp.pred_doc.shape[0]} predicted relevant of {comp.n_candidates} unjudged "
        f"candidates (depth {depth}); wrote {df.height} judgments to {output}",
        err=True,
    )


@click.command("select-judgments")
@qrels_and_runs
@collection_option
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Judge this pool depth first.",
)
@click.option(
    "--max-depth",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Candidates come from this pool depth.",
)
@diversity_option
@level_option
@output_option("Qrels file to write.", required=True, writes=_QRELS)
@friendly
def select_judgments_cmd(
    qrels: str,
    runs: tuple[str, ...],
    collection: str,
    depth: int,
    max_depth: int,
    diversity: bool,
    level: int,
    output: str,
) -> None:
    """Representative judgments: the depth-k pool, then documents chosen by content."""
    from fasteval.analysis import content as ac
    from fasteval.io.writers import write_qrels

    used, summary = ac.select_judgments(
        qrels,
        list(runs),
        collection,
        depth=depth,
        max_depth=max_depth,
        diversity=diversity,
        relevance_level=level,
    )
    write_qrels(used, output)
    judged = int(summary["judged"].sum())
    pool = int(summary["pool20"].sum())
    by_content = int(summary["by_content"].sum())
    share = judged / pool if pool else float("nan")
    click.echo(
        f"judged {judged} documents ({by_content} chosen by content) of a depth-{max_depth} "
        f"pool of {pool} ({share:.1%}); wrote {used.height} qrels rows to {output}",
        err=True,
    )


def content_eval(
    qrels: str,
    runs: list[str],
    collection: str,
    measures: list[str],
    *,
    per_query: bool,
    fmt: str,
    output: str | None,
    level: int,
    compat: int,
    keep_first: bool,
    label_options: dict[str, Any] | None = None,
) -> None:
    """``fasteval eval ... --collection``: label measures by the engine, content ones by content.

    ``label_options`` are ``eval``'s other options (``-c``, ``-M``, ``-J``,
    ``-N``, ``-Z``, ...) as :func:`fasteval.evaluate` keywords; they apply
    to the label measures.
    """
    from fasteval.evaluator import evaluate_with_collection
    from fasteval.measures.catalog import split
    from fasteval.options import EvalOptions

    opts = dict(label_options or {})
    _refuse_other_inputs(opts)
    groups = split(measures or ["LMJS@20"])
    content = groups.pop("content", [])
    df, report = evaluate_with_collection(
        qrels,
        runs,
        collection,
        content,
        [n for ns in groups.values() for n in ns],
        per_query=per_query,
        options=EvalOptions(
            **{
                **opts,
                "relevance_level": level,
                "compat": compat,
                "on_duplicate": "first" if keep_first else "error",
                "zscores": opts.get("zscores") or None,  # read by EvalOptions
            }
        ),
    )
    for line in report.lines():
        click.echo(f"fasteval: note: {line}", err=True)
    _write_table(df, fmt, output)


def _refuse_other_inputs(opts: dict[str, Any]) -> None:
    """Refuse ``eval`` options that would make the label rows read other inputs.

    The content measures read runs and qrels the plain way: an option that
    would make the label rows name other runs (or read other judgments) than
    the content rows is an error.
    """
    differ = {
        "run_id_from": ("tag", "--run-id filename"),
        "lenient": (False, "--lenient"),
        "rel_format": ("qrels", "-R qrels_jg"),
    }
    for key, (plain, flag) in differ.items():
        if opts.get(key, plain) != plain:
            msg = f"{flag} is not supported with --collection (content measures)"
            raise ParameterError(msg)


def _write_table(df: pl.DataFrame, fmt: str, output: str | None) -> None:
    """Write or print the result table in ``eval``'s format ``fmt`` (parquet, csv, json, text)."""
    from fasteval.io.writers import emit, require_path, write_parquet

    if fmt == "parquet":
        write_parquet(df, require_path(fmt, output))
        return
    if fmt == "csv":
        text = df.write_csv()
    elif fmt == "json":
        text = df.write_json() + "\n"
    else:
        buf = io.StringIO()
        for run_id, q, name, value in df.iter_rows():
            buf.write(f"{name:<22}\t{q}\t{value:6.4f}\t{run_id}\n")
        text = buf.getvalue()
    if emit(text, output) is not None:
        click.echo(text, nl=False)


@click.command("content")
@options(qrels_and_runs)
@collection_option
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    required=True,
    help="One label measure (map, ndcg, P_10, ...) and content measures (LMJS@20, ...).",
)
@click.option(
    "--rates",
    default="0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0",
    show_default=True,
    help="Sampling rates in (0, 1], comma separated.",
)
@click.option("--reps", type=click.IntRange(min=1), default=30, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Study seed.")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Pool depth of the label completion (curve c).",
)
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(file_okay=False),
    help="Output folder (one Parquet per finished rate; re-run to resume).",
)
@level_option
@click.option("--no-plot", is_flag=True, help="Skip the PNG figure.")
@progress_option
@friendly
def study_content_cmd(
    qrels: str,
    runs: tuple[str, ...],
    collection: str,
    measures: tuple[str, ...],
    rates: str,
    reps: int,
    seed: int,
    depth: int,
    out: str,
    level: int,
    no_plot: bool,
    progress: bool | None,
) -> None:
    """Hui's Figure 3 with content: tau of (a) labels, (b) content, (c) completed labels."""

    from fasteval.analysis.content_study import content_study
    from fasteval.commands.study import echo_summary, parse_floats

    on_interrupt(study_kept(out))
    t0 = time.perf_counter()
    res = content_study(
        qrels,
        list(runs),
        collection,
        list(measures),
        rates=parse_floats(rates, "rates") or [],
        reps=reps,
        seed=seed,
        depth=depth,
        out_dir=out,
        relevance_level=level,
        progress=show_progress(progress),
    )
    if not no_plot and no_extra_warning("matplotlib", "no plot was drawn"):
        from fasteval.plots.content import plot_content_study

        plot_content_study(res.summary, Path(out) / "tau.png")
    echo_summary(res, out, t0)


def register(main: click.Group, study: click.Group) -> None:
    """Add the content commands to the ``fasteval`` group and ``study content`` to ``study``."""
    main.add_command(index_cmd)
    main.add_command(complete_qrels_cmd)
    main.add_command(select_judgments_cmd)
    study.add_command(study_content_cmd)
