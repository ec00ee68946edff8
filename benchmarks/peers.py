"""One benchmarked tool, run in its own process by ``run.py``.

``python benchmarks/peers.py TOOL QRELS RUNS OUT_JSON`` evaluates the seven
per-query measures of :data:`MEASURES` for every run in RUNS (a directory of TREC
run files, or for fasteval a Parquet archive) the way a user of TOOL would, from
the files on disk (reading included), and writes a JSON summary to OUT_JSON:
timestamps (seconds since this process started executing Python code), the
number of per-query values computed, and the mean MAP of every run (keyed by the
run tag) so that ``run.py`` can check that all tools agree.

Heavy imports happen inside the tool functions so their cost is measured.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import gzip  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, TextIO  # noqa: E402

# The 7 per-query measures, in each tool's own names (same order), from the table of
# measures and their oracles (tests/comparisons.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.comparisons import BENCHMARK  # noqa: E402

MEASURES: dict[str, list[str]] = BENCHMARK
# the name of MAP in each tool's output
MAP_NAME = {"trec": "map", "ranx": "map", "ir_measures": "AP"}


def run_files(runs: str) -> list[Path]:
    """The run files of a directory (sorted, hidden files skipped), or the file itself."""
    p = Path(runs)
    if p.is_dir():
        return sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
    return [p]


def _open(path: Path) -> TextIO:
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


# --- fasteval ---------------------------------------------------------------------------


def run_fasteval(qrels: str, runs: str, marks: dict[str, float]) -> tuple[int, dict[str, float]]:
    import fasteval

    marks["imported"] = time.perf_counter() - T0
    df = fasteval.evaluate(qrels, runs, MEASURES["trec"], per_query=True)
    marks["evaluated"] = time.perf_counter() - T0
    n_values = int((df["query_id"] != "all").sum())
    agg = df.filter((df["query_id"] == "all") & (df["measure"] == "map"))
    return n_values, dict(zip(agg["run_id"].to_list(), agg["value"].to_list(), strict=True))


# --- pytrec_eval: files parsed with plain Python, one evaluator for all runs -------------


def read_qrels_dict(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with _open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 4:
                qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return qrels


def read_run_dict(path: Path) -> tuple[str, dict[str, dict[str, float]]]:
    run: dict[str, dict[str, float]] = {}
    tag = path.name
    with _open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6:
                run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
                tag = parts[5]
    return tag, run


def run_pytrec_eval(qrels: str, runs: str, marks: dict[str, float]) -> tuple[int, dict[str, float]]:
    import pytrec_eval

    marks["imported"] = time.perf_counter() - T0
    # PEERS_MEASURES (comma separated trec names) overrides the seven, e.g. map,P_10
    wanted = os.environ.get("PEERS_MEASURES", ",".join(MEASURES["trec"])).split(",")
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels_dict(Path(qrels)), set(wanted))
    n_values = 0
    maps = {}
    for path in run_files(runs):
        tag, run = read_run_dict(path)
        res = evaluator.evaluate(run)
        n_values += sum(len(v) for v in res.values())
        maps[tag] = _mean([v["map"] for v in res.values()])
    marks["evaluated"] = time.perf_counter() - T0
    return n_values, maps


# --- ranx: Qrels.from_file / Run.from_file + evaluate ------------------------------------


def _ranx_kind(path: Path) -> str:
    return "gz" if path.suffix == ".gz" else "trec"


def run_ranx(qrels: str, runs: str, marks: dict[str, float]) -> tuple[int, dict[str, float]]:
    from ranx import Qrels, Run, evaluate

    marks["imported"] = time.perf_counter() - T0
    q = Qrels.from_file(qrels, kind=_ranx_kind(Path(qrels)))
    metrics = MEASURES["ranx"]
    n_values = 0
    maps = {}
    for path in run_files(runs):
        run = Run.from_file(str(path), kind=_ranx_kind(path))
        res = evaluate(q, run, metrics)  # means; per-query values are kept in run.scores
        n_values += sum(len(run.scores[m]) for m in metrics)
        maps[run.name] = float(res["map"])
    marks["evaluated"] = time.perf_counter() - T0
    return n_values, maps


# --- ir_measures: one evaluator over the qrels, iter_calc per run file --------------------


def run_ir_measures(qrels: str, runs: str, marks: dict[str, float]) -> tuple[int, dict[str, float]]:
    import ir_measures

    marks["imported"] = time.perf_counter() - T0
    measures = [ir_measures.parse_measure(m) for m in MEASURES["ir_measures"]]
    evaluator = ir_measures.evaluator(measures, ir_measures.read_trec_qrels(qrels))
    ap = ir_measures.parse_measure(MAP_NAME["ir_measures"])
    n_values = 0
    maps = {}
    for path in run_files(runs):
        tag = path.name
        with _open(path) as f:
            first = f.readline().split()
            if len(first) >= 6:
                tag = first[5]
        aps = []
        for m in evaluator.iter_calc(ir_measures.read_trec_run(str(path))):
            n_values += 1
            if m.measure == ap:
                aps.append(m.value)
        maps[tag] = _mean(aps)
    marks["evaluated"] = time.perf_counter() - T0
    return n_values, maps


# --- reference floors: just reading the runs with polars ----------------------------------


def run_polars_text(qrels: str, runs: str, marks: dict[str, float]) -> tuple[int, dict[str, float]]:
    import polars as pl

    marks["imported"] = time.perf_counter() - T0
    schema = {
        "query_id": pl.String,
        "q0": pl.String,
        "doc_id": pl.String,
        "rank": pl.Int64,
        "score": pl.Float64,
        "run_id": pl.String,
    }
    frames = [
        pl.read_csv(p, separator=" ", has_header=False, schema=schema) for p in run_files(runs)
    ]
    df = pl.concat(frames)
    marks["evaluated"] = time.perf_counter() - T0
    return df.height, {}


def run_polars_parquet(
    qrels: str, runs: str, marks: dict[str, float]
) -> tuple[int, dict[str, float]]:
    import polars as pl

    marks["imported"] = time.perf_counter() - T0
    df = pl.read_parquet(runs)
    marks["evaluated"] = time.perf_counter() - T0
    return df.height, {}


TOOLS: dict[str, Callable[[str, str, dict[str, float]], tuple[int, dict[str, float]]]] = {
    "fasteval": run_fasteval,
    "pytrec_eval": run_pytrec_eval,
    "ranx": run_ranx,
    "ir_measures": run_ir_measures,
    "polars_text": run_polars_text,
    "polars_parquet": run_polars_parquet,
}


def parse_trec_eval_output(text: str) -> Iterator[tuple[str, str, str]]:
    """(measure, query, value) triples of trec_eval's output."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            yield parts[0], parts[1], parts[2]


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] not in TOOLS:
        print(f"usage: peers.py {{{','.join(TOOLS)}}} QRELS RUNS OUT_JSON", file=sys.stderr)
        return 2
    tool, qrels, runs, out = argv
    marks: dict[str, float] = {}
    n_values, maps = TOOLS[tool](qrels, runs, marks)
    result: dict[str, Any] = {
        "tool": tool,
        "marks": marks,
        "n_values": n_values,
        "map": maps,
        "done": time.perf_counter() - T0,
    }
    Path(out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
