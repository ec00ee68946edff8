"""Steady-state speed inside one process: the library use (studies that re-score often).

`run.py` times every tool in a fresh process, start-up included. This script times
``fasteval.evaluate`` called repeatedly in one process (numba cache warm), for the
same datasets and measures, and prints a Markdown table for RESULTS.md:
the first call (kernel loading and first-touch memory included) and the median of
the following calls.

Run from the repository root: ``python benchmarks/inprocess.py --reps 5``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fasteval  # noqa: E402

MEASURES = ["map", "P_10", "ndcg_cut_10", "recall_100", "recip_rank", "bpref", "ndcg"]


def datasets() -> list[tuple[str, Path, list[Path]]]:
    shared = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
    synth = REPO / "benchmarks" / "data" / "synthetic"
    out = []
    if synth.exists():
        out.append(("synthetic, text", synth / "qrels.txt", sorted((synth / "runs").iterdir())))
        out.append(("synthetic, parquet", synth / "qrels.txt", [synth / "runs.parquet"]))
    t8 = shared / "trec8_adhoc"
    if t8.exists():
        out.append(("TREC-8, gzipped text", t8 / "qrels.trec8.adhoc.gz", [t8 / "runs"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5, help="calls after the first (median)")
    args = ap.parse_args()
    rows = []
    for name, qrels, runs in datasets():
        times = []
        for _ in range(args.reps + 1):
            t = time.perf_counter()
            df = fasteval.evaluate(qrels, runs, MEASURES)
            times.append(time.perf_counter() - t)
        n = df.filter(df["query_id"] != "all").height
        rows.append((name, times[0], statistics.median(times[1:]), min(times[1:]), n))
        print(f"{name}: first {times[0]:.2f} s, then median {rows[-1][2]:.2f} s", file=sys.stderr)
    print("| dataset | first call s | median of next calls s | min s | per-query values |")
    print("|---|---:|---:|---:|---:|")
    for name, first, med, lo, n in rows:
        print(f"| {name} | {first:.2f} | {med:.2f} | {lo:.2f} | {n:,} |")


if __name__ == "__main__":
    main()
