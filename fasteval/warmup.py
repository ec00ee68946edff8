"""``fasteval warmup``: every part of the engine run once on the packaged sample.

The kernels the package's library lacks (studies, fusion, content, ...) compile on
numba's JIT into its disk cache, for the array types real inputs give; with no
library (``FASTEVAL_AOT=0``) the evaluation kernels too. :mod:`fasteval.aot` records
its workload from the same sample.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

SAMPLE_DIR = Path(__file__).parent / "data"
SAMPLE_QRELS = SAMPLE_DIR / "sample.qrels"
SAMPLE_RUNS = SAMPLE_DIR / "sample_runs.parquet"


def text_copies(tmp: Path) -> tuple[Path, Path]:
    """The sample runs as TREC text files, and a diversity qrels (3 subtopics) from the qrels."""
    import polars as pl

    from fasteval.io.tables import load_runs

    runs = load_runs(SAMPLE_RUNS)
    run_dir = tmp / "runs"
    run_dir.mkdir()
    for (rid,), part in runs.group_by(["run_id"], maintain_order=True):
        lines = part.select(
            pl.format("{} Q0 {} {} {} {}", "query_id", "doc_id", "rank", "score", "run_id")
        )
        (run_dir / f"{rid}.run").write_text("\n".join(lines.to_series().to_list()) + "\n")
    div = tmp / "diversity.qrels"
    rows = []
    for i, line in enumerate(SAMPLE_QRELS.read_text().splitlines()):
        qid, _, doc, rel = line.split()[:4]
        rows.append(f"{qid} {i % 3 + 1} {doc} {rel}")
    div.write_text("\n".join(rows) + "\n")
    return run_dir, div


def _content(qrels: Path, runs: Path, div: Path) -> object:
    """Every content kernel (SPEC 9) on a made-up collection of the sample's documents
    (a few words of a 60-word vocabulary each, drawn by a hash of the document's id)."""
    import zlib

    from fasteval.analysis import content as ac
    from fasteval.analysis.content_study import content_study
    from fasteval.io.collection import from_texts
    from fasteval.io.tables import load_runs

    ids = load_runs(runs)["doc_id"].unique().sort().to_list()
    texts = []
    for d in ids:
        h = zlib.crc32(d.encode())
        texts.append(" ".join(f"w{(h >> (3 * i)) % 60}" for i in range(h % 7 + 3)))
    coll = from_texts(ids, texts)
    data = ac.prepare_content(qrels, runs, coll)
    ac.evaluate_content(qrels, runs, coll, ["LMJS@20", "LMKL@20"], data=data)
    ac.evaluate_content(div, runs, coll, ["LMJS_IA@20"])
    ac.select(data, depth=3, max_depth=5)
    return content_study(None, None, None, ["map", "LMJS@20"], rates=[0.5], reps=2, data=data)


def in_memory(qrels: Path, runs: Path) -> object:
    """The readers of in-memory runs: a polars frame (string views) and a dict."""
    import fasteval
    from fasteval.io.tables import load_runs

    frame = load_runs(runs)
    one = frame.filter(frame["run_id"] == frame["run_id"][0])
    as_dict: dict[str, dict[str, float]] = {}
    for qid, doc, score in one.select("query_id", "doc_id", "score").iter_rows():
        as_dict.setdefault(qid, {})[doc] = score
    return fasteval.evaluate(qrels, frame, ["map"]), fasteval.evaluate(qrels, as_dict, ["map"])


def trec_families() -> list[str]:
    """Every trec_eval measure family plain qrels score (not ``*_avgjg`` nor ``prefs_*``)."""
    from fasteval.measures.registry import FAMILIES

    return [f for f in FAMILIES if not f.endswith("_avgjg") and not f.startswith("prefs_")]


def steps(tmp: Path) -> list[tuple[str, Callable[[], object]]]:
    """The warm-up steps: (what, call) pairs, each exercising one kernel family."""
    import fasteval
    from fasteval.analysis.fusion import fuse
    from fasteval.analysis.meta import discriminative_power
    from fasteval.analysis.studies import subsample

    run_dir, div = text_copies(tmp)
    q, r = SAMPLE_QRELS, SAMPLE_RUNS
    families = trec_families()

    def eval_all() -> object:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fasteval.evaluate(q, r, families)

    def significance() -> object:
        table = fasteval.evaluate(q, r, ["map"])
        return discriminative_power(table, "map", B=20, seed=0)

    return [
        ("content measures, completion and the content study", lambda: _content(q, r, div)),
        ("the text reader (runs as TREC files)", lambda: fasteval.evaluate(q, run_dir, ["map"])),
        ("in-memory runs (polars frames, dicts)", lambda: in_memory(q, r)),
        ("all trec_eval measure families", eval_all),
        ("diversity (ndeval) measures", lambda: fasteval.diversity_evaluate(div, run_dir)),
        ("histogram analysis (DO, HSA)", lambda: fasteval.histogram_analysis(q, r)),
        ("RIC and information difference", lambda: fasteval.information_difference(q, r)),
        (
            "metasearch (CombSUM, Condorcet, bounds)",
            lambda: [fuse(r, m, qrels=q) for m in ("combmnz", "condorcet", "pareto")],
        ),
        ("significance and discriminative power", significance),
        ("qrels subsampling study", lambda: subsample(q, r, ["map"], rates=[0.5], reps=2)),
    ]


def warm_up(report: Callable[[str, float], None] | None = None) -> float:
    """Run every warm-up step; ``report(what, seconds)`` after each. Returns the total seconds."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fasteval-warmup-") as d:
        for what, call in steps(Path(d)):
            t = time.perf_counter()
            call()
            if report is not None:
                report(what, time.perf_counter() - t)
    return time.perf_counter() - t0
