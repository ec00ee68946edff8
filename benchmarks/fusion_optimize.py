"""Fusion optimisation: fasteval's batch ``optimize_fusion`` vs ranx's, on TREC-8.

The task (issue 28): three TREC-8 runs (CL99XT, ok8alx, INQ603), weighted sum
(``wsum``) of min-max normalised scores, ranx's weight grid (step 0.1: the 62
tuples whose float sum is 1.0), maximising nDCG@100. Both tools get the runs and
qrels already in memory (ranx: ``Run``/``Qrels`` built from dicts; fasteval: the
runs prepared once with ``prepare_fusion``); the timed call is the optimisation
itself. Each measurement is a fresh child process; the parent records the
call's wall time, the child's CPU time (user + system, all threads, for the
whole process) and its peak RSS. "cold" runs the child with an empty
``NUMBA_CACHE_DIR`` (numba compiles everything, for ranx too); "warm" reuses
the cache the cold run filled, and times the second call in the process.

Run from the repository root::

    python benchmarks/fusion_optimize.py ../shared/data/trec8_adhoc
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
RUNS = ("CL99XT", "ok8alx", "INQ603")


def child(tool: str, data: str, metric: str, method: str, reps: int) -> dict:
    import polars as pl

    import fasteval

    base = Path(data)
    paths = [base / "runs" / f"input.{r}.gz" for r in RUNS]
    qrels_path = base / "qrels.trec8.adhoc.gz"
    t0 = time.perf_counter()
    if tool == "ranx":
        from ranx import Qrels, Run, optimize_fusion

        df = fasteval.load_runs(paths)
        runs = []
        for r in RUNS:
            d: dict[str, dict[str, float]] = {}
            sub = df.filter(pl.col("run_id") == r)
            for q, doc, s in sub.select("query_id", "doc_id", "score").iter_rows():
                d.setdefault(q, {})[doc] = s
            runs.append(Run(d, name=r))
        qd: dict[str, dict[str, int]] = {}
        qr = fasteval.load_qrels(qrels_path)
        for q, doc, g in qr.select("query_id", "doc_id", "relevance").iter_rows():
            qd.setdefault(q, {})[doc] = int(g)
        qrels = Qrels(qd)

        def call() -> tuple[float, object]:
            best, rep = optimize_fusion(
                qrels,
                runs,
                norm="min-max",
                method=method,
                metric=metric.lower(),
                return_optimization_report=True,
                show_progress=False,
            )
            return max(rep.results), best

    else:
        from fasteval.analysis.fusion import optimize_fusion, prepare_fusion

        fin = prepare_fusion(paths, qrels_path)

        def call() -> tuple[float, object]:
            out = optimize_fusion(None, fin, method, "min-max", metric)
            return float(out[metric][0]), out.row(0, named=True)

    t_load = time.perf_counter() - t0
    times = []
    best = None
    for _ in range(reps):
        t = time.perf_counter()
        best = call()
        times.append(time.perf_counter() - t)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "load_s": t_load,
        "first_s": times[0],
        "later_s": sorted(times[1:])[len(times[1:]) // 2] if len(times) > 1 else None,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "peak_mb": ru.ru_maxrss / 1024,
        "best": best[0] if best else None,
        "best_params": str(best[1]) if best else None,
    }


def measure(tool: str, args: argparse.Namespace, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    cmd = [
        sys.executable,
        __file__,
        args.data,
        "--child",
        tool,
        "--metric",
        args.metric,
        "--method",
        args.method,
        "--reps",
        str(args.reps),
    ]
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_s"] = time.perf_counter() - t
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="the trec8_adhoc folder (runs/ and qrels.trec8.adhoc.gz)")
    ap.add_argument("--metric", default="nDCG@100")
    ap.add_argument("--method", default="wsum")
    ap.add_argument("--reps", type=int, default=3, help="calls per process (first + later)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--only", default=None, help="ranx or fasteval")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.data, args.metric, args.method, args.reps)))
        return
    rows = []
    for tool in ("fasteval", "ranx"):
        if args.only and args.only != tool:
            continue
        with tempfile.TemporaryDirectory() as cache:
            for state in ("cold", "warm"):
                r = measure(tool, args, cache)
                r.update(tool=tool, state=state)
                rows.append(r)
                print(
                    f"{tool:8s} {state}: first call {r['first_s']:.2f} s, later "
                    f"{(r['later_s'] or float('nan')):.3f} s (median), CPU {r['cpu_s']:.1f} s, "
                    f"peak RSS {r['peak_mb']:.0f} MB, best {args.metric} {r['best']:.6f} "
                    f"({r['best_params']})",
                    flush=True,
                )
    by = {(r["tool"], r["state"]): r for r in rows}
    if ("ranx", "warm") in by and ("fasteval", "warm") in by:
        rw, fw = by["ranx", "warm"], by["fasteval", "warm"]
        print(f"speed-up, warm, later calls: {rw['later_s'] / fw['later_s']:.1f}x")
        print(f"speed-up, warm, first call: {rw['first_s'] / fw['first_s']:.1f}x")
        rc, fc = by["ranx", "cold"], by["fasteval", "cold"]
        print(f"speed-up, cold, first call: {rc['first_s'] / fc['first_s']:.1f}x")


if __name__ == "__main__":
    main()
