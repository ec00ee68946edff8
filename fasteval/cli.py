"""The ``fasteval`` command."""

from __future__ import annotations

import gc
import os
import sys

# fasteval does no linear algebra, but numpy (and scipy, which numba probes for
# BLAS) start OpenBLAS worker threads that busy-wait for work at start-up, on
# the cores the kernels need. One BLAS thread, unless the user says otherwise.
# (Set before numpy is imported; the library itself never touches it.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# numpy asks for transparent huge pages on large arrays; on VMs where first-touch faults
# are slow (this project's CI machine) the 2 MB zeroing costs more than it saves.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
# Arrow's allocations from glibc's malloc (which keep_freed_memory below sets to reuse
# what is freed) rather than pyarrow's bundled mimalloc: faster and smaller on archives.
# (Figures for both: benchmarks/RESULTS.md, "Figures moved out of the code".)
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import click

from fasteval.commands.common import (
    EVAL_WRITES,
    Writes,
    interrupted,
    lenient_option,
    level_option,
    output_format,
    output_option,
    progress_bar,
    progress_option,
    qrels_and_runs,
    reading_options,
    run_id_option,
    show_progress,
)
from fasteval.commands.common import friendly as _friendly
from fasteval.commands.startup import keep_freed_memory, skip_blas_probe
from fasteval.errors import ParameterError

skip_blas_probe()  # numba's BLAS probe imports scipy.linalg; no kernel uses BLAS
keep_freed_memory()  # glibc: reuse freed heap memory instead of faulting in fresh pages

F = TypeVar("F", bound=Callable[..., Any])

SAMPLE_DIR = Path(__file__).parent / "data"


class _OneLineErrors(click.Group):
    """A click group whose usage errors are one line and exit 1, and Ctrl-C exits 130.

    click prints a usage block and exits 2 on a missing argument, an unknown option or a
    bad choice; fasteval's rule is one line naming the command, and a hint to ``-h``.
    """

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:
                click.echo(e.ctx.get_help())  # bare "fasteval" (click >= 8.2): its help
                sys.exit(0)
            where = e.ctx.command_path if e.ctx is not None else "fasteval"
            msg = e.format_message().rstrip(".")
            msg = msg[:1].lower() + msg[1:]
            click.echo(
                f"fasteval: error: {where}: {' '.join(msg.split())} (see '{where} -h')",
                err=True,
            )
            sys.exit(1)
        except click.ClickException as e:
            click.echo(f"fasteval: error: {' '.join(e.format_message().split())}", err=True)
            sys.exit(1)
        except (click.Abort, KeyboardInterrupt):
            interrupted()
        # --help, --version (click's Exit) return their status here
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fasteval")
def main() -> None:
    """fasteval: trec_eval's numbers for whole TREC archives at once."""


@main.result_callback()
def _finished(*_: Any, **__: Any) -> None:
    # The command is done and its output written. Freezing the heap spares the
    # interpreter's shutdown from scanning numba's and pyarrow's objects for cycles.
    gc.freeze()


@main.command("eval")
@qrels_and_runs
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Measure(s): trec_eval names (map, P.5,10, ndcg_cut_10, official, all_trec) "
    "or ir_measures strings (AP, P@10, nDCG@10). Default: official.",
)
@click.option("-q", "per_query", is_flag=True, help="Also print per-query values.")
@click.option("-c", "complete", is_flag=True, help="Average over every qrels query (missing = 0).")
@level_option
@click.option(
    "-M",
    "max_depth",
    type=click.IntRange(min=1),
    default=None,
    help="Only the first M documents of each ranking count.",
)
@click.option("-J", "judged_only", is_flag=True, help="Score judged documents only.")
@click.option(
    "-N",
    "num_docs",
    type=click.IntRange(min=0),
    default=0,
    help="Number of documents in the collection (for utility's p4 term).",
)
@click.option(
    "--compat",
    type=click.Choice(["9", "10"]),
    default="9",
    show_default=True,
    help="trec_eval version semantics (9: float32 scores, 9.0.8 recall cutoffs).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["trec", "csv", "json", "jsonl", "parquet", "ndeval"]),
    default=None,
    help="Output format. Default: from -o's suffix (.parquet, .csv, .json, .jsonl), else trec.",
)
@output_option(writes=EVAL_WRITES)
@reading_options
@click.option(
    "--cluster",
    envvar="FASTEVAL_CLUSTER",
    default=None,
    help="Evaluate blocks of runs on this Dask scheduler (tcp://host:8786, or local:N).",
)
@click.option(
    "-Z",
    "--zscores",
    "zscore_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Print z-scores against this file of 'qid measure mean stddev' lines (trec_eval -Z).",
)
@click.option(
    "-R",
    "--rel-format",
    "rel_format",
    type=click.Choice(["qrels", "qrels_jg", "prefs", "qrels_prefs"]),
    default="qrels",
    show_default=True,
    help="Format of QRELS: qrels, qrels_jg (qid jg docno rel; *_avgjg measures), prefs "
    "(qid jg jsg docno rel_level) or qrels_prefs (qrels read as preferences; all_prefs).",
)
@click.option(
    "--collection",
    default=None,
    help="Documents for content measures (LMJS@20, LMKL@20, LMJS_IA@20): an index from "
    "`fasteval index`, a doc_id/text table, TREC SGML or classic:NAME.",
)
@click.option(
    "--quiet",
    "quiet",
    is_flag=True,
    help="No progress bar (the same as --no-progress).",
)
@progress_option
@_friendly
def eval_cmd(**params: Any) -> None:
    """Evaluate RUNS (files, directories, Parquet archives) against QRELS."""
    args = _EvalArgs(**params)
    fmt = output_format(args.fmt, args.output)
    if args.collection is not None:  # content measures (SPEC 9): fasteval.commands.content
        _content_eval(args, fmt)
        return
    from fasteval.io.writers import DIVERSITY_FORMATS, FORMATS, emit, write_table
    from fasteval.measures.catalog import parse_request
    from fasteval.measures.ir_measures_names import normalise_measures

    if fmt == "ndeval" and not args.measures:
        args = replace(args, measures=("ndeval",))
    if args.measures:  # ir_measures' judged_only=True on every measure is trec_eval's -J
        names, all_judged_only = normalise_measures(list(args.measures))
        args = replace(args, measures=tuple(names), judged_only=args.judged_only or all_judged_only)
    measures = args.measures
    req = parse_request(list(measures) or None, compat=int(args.compat), rel_format=args.rel_format)
    if fmt == "ndeval" and not req.diversity:
        msg = f"--format ndeval prints diversity measures only, got {', '.join(measures)}"
        raise ParameterError(msg)
    df = _evaluate(args, req, fmt)
    zscore = args.zscore_file is not None
    if not req.diversity:
        _per_query_only_note(req.ranking, measures, args.per_query)
    if fmt == "trec" and not req.diversity:
        text = emit(trec_text(df, req.ranking, zscore=zscore), args.output)
    else:
        text = write_table(
            df,
            fmt,
            args.output,
            measures=None if req.diversity else req.ranking,
            zscore=zscore,
            formats=DIVERSITY_FORMATS if req.diversity else FORMATS,
        )
    if text is not None:
        click.echo(text, nl=False)


@dataclass(frozen=True)
class _EvalArgs:
    """The options of ``fasteval eval``, as click passes them."""

    qrels: str
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    per_query: bool
    complete: bool
    level: int
    max_depth: int | None
    judged_only: bool
    num_docs: int
    compat: str
    fmt: str | None
    output: str | None
    run_id_from: str
    keep_first: bool
    lenient: bool
    cluster: str | None
    zscore_file: str | None
    rel_format: str
    collection: str | None
    quiet: bool
    progress: bool | None


def _content_eval(args: _EvalArgs, fmt: str) -> None:
    """``eval --collection``: content measures (fasteval.commands.content)."""
    from fasteval.commands.content import content_eval

    content_eval(
        args.qrels,
        list(args.runs),
        str(args.collection),
        list(args.measures),
        per_query=args.per_query,
        fmt=fmt,
        output=args.output,
        level=args.level,
        compat=int(args.compat),
        keep_first=args.keep_first,
        label_options={
            "complete": args.complete,
            "max_depth": args.max_depth,
            "judged_only": args.judged_only,
            "num_docs": args.num_docs,
            "zscores": args.zscore_file,
            "lenient": args.lenient,
            "run_id_from": args.run_id_from,
            "rel_format": args.rel_format,
        },
    )


def _evaluate(args: _EvalArgs, req: Any, fmt: str) -> Any:
    """The evaluation's table: on the Dask cluster (``--cluster``) or here, with a bar.

    Here, ranking measures give the engine's own table (no polars until a format needs it).
    """
    per_query = args.per_query or fmt == "ndeval"  # ndeval prints every topic
    options: dict[str, Any] = {
        "compat": int(args.compat),
        "relevance_level": args.level,
        "complete": args.complete,
        "max_depth": args.max_depth,
        "judged_only": args.judged_only,
        "num_docs": args.num_docs,
        "zscores": args.zscore_file,
        "on_duplicate": "first" if args.keep_first else "error",
        "lenient": args.lenient,
        "run_id_from": args.run_id_from,
    }
    measures, runs = args.measures, list(args.runs)
    if args.cluster:  # blocks of runs on a Dask cluster (fasteval.distributed)
        from fasteval.distributed import refuse_diversity, with_cluster

        refuse_diversity(measures, fmt)
        if args.rel_format != "qrels":
            msg = f"--cluster reads plain qrels only; run -R {args.rel_format} without --cluster"
            raise ParameterError(msg)
        from fasteval.api import evaluate
        from fasteval.io.writers import in_measure_order

        df = with_cluster(evaluate, args.cluster)(
            args.qrels, runs, list(measures) or None, per_query=per_query, **options
        )
        # evaluate() keeps the order asked; the command's outputs keep trec_eval's
        return in_measure_order(df, {m.name: i for i, m in enumerate(req.ranking)})
    from fasteval.evaluator import Evaluator

    with _BatchBar(show=show_progress(False if args.quiet else args.progress)) as bar:
        ev = Evaluator(args.qrels, req, rel_format=args.rel_format, **options)
        return ev.table(runs, per_query=per_query, progress=bar.update)


def trec_text(df: Any, measures: Any, *, zscore: bool = False) -> str:
    """trec_eval's text for ``df``; with several runs, each block led by a ``runid`` line.

    trec_eval prints one run, so one run's text is trec_eval's byte for byte. With
    several runs each block starts with trec_eval's own label line (``runid  all  X``,
    what ``-m runid`` prints), unless ``runid`` is among the measures and trec_eval's
    line already names the run.
    """
    from fasteval.io.writers import format_trec

    # the commands evaluate a parsed request: the rows come in trec_eval's order
    return format_trec(df, measures, zscore=zscore, in_order=True, run_labels=True)


def _per_query_only_note(measures: Any, asked: tuple[str, ...], per_query: bool) -> None:
    """Say why a per-query-only measure (``relstring``) named in ``-m`` printed nothing.

    Named only: ``all_trec`` includes ``relstring`` and, as in trec_eval, prints it with
    ``-q`` only, without a note on every run.
    """
    named = {n.split(".")[0].split("_")[0].lower() for a in asked for n in a.split(",")}
    only = [m.name for m in measures if m.info.text and m.name.split("_")[0].lower() in named]
    if only and not per_query:
        click.echo(
            f"fasteval: note: {', '.join(only)} has per-query values only (no 'all' line): "
            "add -q to print it",
            err=True,
        )


class _BatchBar:
    """The progress bar over the input files of a batched evaluation, opened at the first batch."""

    def __init__(self, *, show: bool) -> None:
        self.show = show
        self.bar: Any = None

    def update(self, done: int, total: int) -> None:
        if not self.show:  # no bar: tqdm is not even loaded
            return
        if self.bar is None:
            self.bar = progress_bar(total, "file", "evaluating", self.show)
        self.bar.update(done - self.bar.n)

    def __enter__(self) -> _BatchBar:
        return self

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.close()


@main.command("ingest")
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@output_option(
    "The archive to write (.parquet).", required=True, writes=Writes(("parquet",), None, None)
)
@run_id_option
@lenient_option
@progress_option
@_friendly
def ingest_cmd(
    inputs: tuple[str, ...], output: str, run_id_from: str, lenient: bool, progress: bool | None
) -> None:
    """Pack many run files (a whole track) into one Parquet archive.

    The runs are read and written batch by batch (about $FASTEVAL_BATCH_ROWS
    rows, default 1M), so memory stays bounded whatever the number of runs;
    the archive is sorted by run then query, and appears only when complete.
    """
    from fasteval.io.archive import ArchiveWriter
    from fasteval.io.batches import batch_rows_of, plan_batches
    from fasteval.io.tables import expand_paths, run_columns
    from fasteval.options import EvalOptions

    opts = EvalOptions(lenient=lenient, run_id_from=run_id_from)
    files = expand_paths(list(inputs))
    t0 = time.perf_counter()
    # whole files per batch (a file larger than the budget is read alone, whole)
    batches = plan_batches(files, batch_rows_of(None), opts, split=False)
    with (
        ArchiveWriter(output, opts) as archive,
        progress_bar(len(files), "file", "reading runs", show_progress(progress)) as bar,
    ):
        for b in batches:
            cols = run_columns([u.item for u in b.units], opts)
            archive.write(cols)
            del cols  # nothing of a batch outlives it
            bar.update(len(b.units))
    click.echo(
        f"wrote {output}: {archive.runs} runs, {archive.rows:,} rows "
        f"in {time.perf_counter() - t0:.1f} s",
        err=True,
    )


@main.command("demo")
@click.option("-m", "--measure", "measures", multiple=True, help="Measures (default: official).")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False),
    default=None,
    help="Instead, write the sample as the documentation's examples name it: "
    "DIR/qrels.txt, DIR/runs/ (8 TREC run files) and DIR/runs.parquet.",
)
@_friendly
def demo_cmd(measures: tuple[str, ...], workspace: str | None) -> None:
    """Evaluate the small sample archive shipped with fasteval (or, with --workspace,
    write it out for the documentation's examples)."""
    if workspace is not None:
        from fasteval.commands.demo import write_workspace

        folder = write_workspace(workspace)
        click.echo(
            f"wrote {folder}: qrels.txt, runs/ (8 runs), runs.parquet; "
            f"try: cd {folder} && fasteval eval qrels.txt runs/ -m map",
            err=True,
        )
        return
    from fasteval.api import evaluate
    from fasteval.measures.catalog import parse_request

    qrels = SAMPLE_DIR / "sample.qrels"
    archive = SAMPLE_DIR / "sample_runs.parquet"
    click.echo(f"# qrels: {qrels.name}; runs: {archive.name}", err=True)
    t0 = time.perf_counter()
    req = parse_request(list(measures) or None)  # a request: rows in trec_eval's order
    df = evaluate(qrels, archive, req, per_query=False)
    dt = time.perf_counter() - t0
    click.echo(trec_text(df, req.ranking), nl=False)
    n_runs = df["run_id"].n_unique()
    click.echo(f"# evaluated {n_runs} runs in {dt:.2f} s (first run includes compiling)", err=True)


@main.command("warmup")
@_friendly
def warmup_cmd() -> None:
    """Compile (and cache) the kernels the package build leaves to numba's JIT.

    The install compiles the kernels of evaluation (eval, compare, ndeval, the
    Python API, the ir_measures provider); those of studies, fusion, content,
    information and histogram analysis compile on first use and are cached on
    disk. This runs each once on the packaged sample, so the first real run of
    those is fast too.
    """
    from fasteval.warmup import warm_up

    total = warm_up(lambda what, sec: click.echo(f"{sec:6.1f} s  {what}", err=True))
    click.echo(f"kernels ready in {total:.1f} s", err=True)


from fasteval.commands.study import study as _study  # noqa: E402

main.add_command(_study)


from fasteval.commands.report import report_cmd  # noqa: E402

main.add_command(report_cmd)

from fasteval.commands import information as _information_cmds  # noqa: E402

main.add_command(_information_cmds.ric_cmd)
main.add_command(_information_cmds.infodiff_cmd)
main.add_command(_information_cmds.correlate_cmd)


from fasteval.commands.diversity import ndeval_cmd  # noqa: E402

main.add_command(ndeval_cmd)
from fasteval.commands.hsa import hsa_cmd  # noqa: E402

main.add_command(hsa_cmd)
from fasteval.commands.fusion import fuse_cmd  # noqa: E402

main.add_command(fuse_cmd)
from fasteval.commands.fusion import fuse_study_cmd, optimize_fusion_cmd  # noqa: E402

main.add_command(fuse_study_cmd)
main.add_command(optimize_fusion_cmd)
from fasteval.commands.compare import compare_cmd  # noqa: E402  (issue 19)

main.add_command(compare_cmd)
from fasteval.commands.verify import verify_cmd  # noqa: E402  (issue 27)

main.add_command(verify_cmd)
from fasteval.commands.agreement import agree_cmd, ranks_cmd  # noqa: E402  (issue 46)

main.add_command(ranks_cmd)
main.add_command(agree_cmd)
from fasteval.commands.content import register as _register_content  # noqa: E402

_register_content(main, _study)  # index, complete-qrels, select-judgments, study content

if __name__ == "__main__":  # pragma: no cover
    main()
