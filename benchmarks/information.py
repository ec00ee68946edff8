"""Benchmark RIC, information difference and joint RIC on the 129 TREC-8 ad hoc runs.

Usage (from the repository root)::

    python benchmarks/information.py [--data ../shared/data/trec8_adhoc] [--reps 5]

Reads qrels and runs once (``prepare``), then times, in this process:
RIC of every run (pair counting included), information difference of all
pairs of runs (and of subsets, to show how it scales, on 1 and all threads),
and joint RIC of sets of 2, 5 and 10 runs. Prints a Markdown section for
benchmarks/RESULTS.md. The first call of each kernel includes numba's
compile or cache load and is reported separately.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import time
from pathlib import Path

import numba
import numpy as np

from fasteval.analysis import information as inf
from fasteval.engine import prepare

REPO = Path(__file__).resolve().parents[1]


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out), min(out), max(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    shared = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
    ap.add_argument("--data", default=str(shared / "trec8_adhoc"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--id-reps", type=int, default=2)
    args = ap.parse_args()
    data = Path(args.data)
    load0 = os.getloadavg()[0]
    rows = []
    t = time.perf_counter()
    prep = prepare(data / "qrels.trec8.adhoc.gz", data / "runs")
    t_prep = time.perf_counter() - t
    n_runs = len(prep.enc.run_names)

    t = time.perf_counter()
    d = inf.pair_data(prep)
    d.ric_per_run()
    first_ric = time.perf_counter() - t
    med, lo, hi = timed(lambda: inf.pair_data(prep).ric_per_run(), args.reps)
    rows.append(("RIC, all runs (truncate + count + mean)", n_runs, first_ric, med, lo, hi))

    a, b = inf.all_pairs(n_runs)
    t = time.perf_counter()
    d.information_difference(a[:50], b[:50])
    first_id = time.perf_counter() - t
    scaling = []
    threads = numba.get_num_threads()
    for n in (1000, 4000, a.shape[0]):
        med, lo, hi = timed(lambda n=n: d.information_difference(a[:n], b[:n]), args.id_reps)
        rows.append((f"information difference, {n} pairs", n, first_id, med, lo, hi))
        scaling.append((n, threads, med))
    if threads > 1:
        numba.set_num_threads(1)
        try:
            med1, _, _ = timed(lambda: d.information_difference(a[:1000], b[:1000]), 1)
            scaling.append((1000, 1, med1))
        finally:
            numba.set_num_threads(threads)
    rng = np.random.default_rng(20251122)
    t = time.perf_counter()
    d.joint_ric([d.run_names[:2]])
    first_joint = time.perf_counter() - t
    for k in (2, 5, 10):
        sets = [list(rng.choice(d.run_names, k, replace=False)) for _ in range(5)]
        med, lo, hi = timed(lambda sets=sets: d.joint_ric(sets), max(1, args.reps // 2))
        rows.append((f"joint RIC, 5 random sets of {k} runs", 5, first_joint, med, lo, hi))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
            cwd=REPO,
        ).stdout.strip()
    except OSError:  # pragma: no cover
        sha = "?"
    print("## information-theoretic measures (RIC, id, joint RIC) on TREC-8 ad hoc\n")
    print(f"Command: `python benchmarks/information.py --reps {args.reps}`\n")
    print(
        f"- fasteval @ {sha}; Python {platform.python_version()}, numba {numba.__version__}; "
        f"{os.cpu_count()} CPUs, {threads} numba threads; 1-min load {load0:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end"
    )
    print(
        f"- Data: {n_runs} runs, {len(prep.enc.qids)} queries, {prep.enc.qr_rel.shape[0]:,} "
        f"judgments; prepare (read text runs + encode) {t_prep:.1f} s, not included below"
    )
    print(f"- mean truncated list length {d.lens.mean():.0f} judged docs (max {d.lens.max()})")
    print(f"- peak RSS {peak:.0f} MB\n")
    print("| what | items | first call s | median s | min–max s |")
    print("|---|---:|---:|---:|---:|")
    for name, n, first, med, lo, hi in rows:
        print(f"| {name} | {n} | {first:.2f} | {med:.3f} | {lo:.3f}–{hi:.3f} |")
    print("\nScaling of information difference (median s, pairs x 50 queries):\n")
    print("| pairs | threads | s | ms per pair |")
    print("|---:|---:|---:|---:|")
    for n, th, s in scaling:
        print(f"| {n} | {th} | {s:.2f} | {1000 * s / n:.2f} |")


if __name__ == "__main__":
    main()
