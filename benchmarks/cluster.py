"""Overhead of the Dask cluster path against the local path: a TREC-8 subsampling study.

The study: 129 runs x 50 topics, MAP + nDCG + P@10, ``--rates`` x ``--reps``
variants (default 10 x 5 = 50 re-evaluations of the archive).

- local: ``fasteval.studies.subsample`` in this process, (a) from the files
  (read + join + study) and (b) on inputs prepared once (the study alone);
- cluster: ``fasteval.distributed.study`` on a LocalCluster of W single-threaded
  worker processes on 127.0.0.1 (W = 1, 2). "cold" is the first call after
  the cluster starts (every worker reads and joins the archive, loads the
  kernels); "warm" repeats the call (workers keep the prepared archive).

Each result is checked bit-identical to the local one. Also printed: tasks,
per-unit time, bytes returned per task, and the peak RSS of client and workers.

Run from the repository root:
``python benchmarks/cluster.py [--data ../shared/data/trec8_adhoc] [--reps 5] [--repeat 3]
[--inputs parquet|text]``
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fasteval import distributed as fd  # noqa: E402
from fasteval.analysis import studies  # noqa: E402
from fasteval.engine import prepare  # noqa: E402

RATES = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
MEASURES = ["map", "ndcg", "P_10"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_hwm_mb() -> float:
    """Peak RSS of this process's own memory map (ru_maxrss is inherited from the spawner)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def same(a: studies.StudyResult, b: studies.StudyResult) -> bool:
    return all(x.equals(y) for x, y in zip(a, b, strict=True))


def timed(fn, repeat: int) -> tuple[list[float], object]:
    times, res = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
    return times, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
    ap.add_argument("--data", default=str(shared / "trec8_adhoc"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument(
        "--inputs",
        choices=["parquet", "text"],
        default="parquet",
        help="runs as one Parquet archive (written to a temp folder) or the 129 .gz files",
    )
    ap.add_argument(
        "--kernel-threads",
        type=int,
        default=None,
        help="numba threads per task on the workers (default: 2 / W, so W workers use 2 cores)",
    )
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    data = Path(args.data)
    qrels, run_dir = data / "qrels.trec8.adhoc.gz", data / "runs"
    tmp = tempfile.TemporaryDirectory(prefix="fasteval-bench-")
    if args.inputs == "parquet":  # the archive every worker reads (fasteval ingest)
        from fasteval.io.tables import run_columns, runs_to_table
        from fasteval.io.writers import write_arrow as write_parquet

        archive = Path(tmp.name) / "trec8.parquet"
        write_parquet(runs_to_table(run_columns([run_dir])), archive)
        run_dir = archive
    print(f"# runs read from: {args.inputs} ({run_dir.name})")
    kw = {"rates": RATES, "reps": args.reps, "seed": 1}
    units = len(RATES) * args.reps
    print(f"# subsample study: {len(RATES)} rates x {args.reps} reps = {units} variants")
    print(f"# machine: {os.cpu_count()} cores (shared, noisy); repeat {args.repeat}, medians")

    t0 = time.perf_counter()
    local_files = studies.subsample(qrels, run_dir, MEASURES, **kw)
    t_files_first = time.perf_counter() - t0
    t_files, _ = timed(lambda: studies.subsample(qrels, run_dir, MEASURES, **kw), args.repeat)
    prep = prepare(qrels, run_dir)
    t_prep, local = timed(
        lambda: studies.subsample(prepared=prep, measures=MEASURES, **kw), args.repeat
    )
    assert same(local, local_files)
    m_files, m_prep = statistics.median(t_files), statistics.median(t_prep)
    print(f"local, from files (first call)      {t_files_first:7.2f} s")
    print(f"local, from files                   {m_files:7.2f} s   {t_files}")
    print(f"local, prepared inputs (study only) {m_prep:7.2f} s   per unit {m_prep / units:.3f} s")

    for w in [int(x) for x in args.workers.split(",")]:
        kt = args.kernel_threads or max(1, (os.cpu_count() or 2) // w)
        t0 = time.perf_counter()
        with (
            LocalCluster(
                n_workers=w,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            ) as lc,
            Client(lc) as c,
        ):
            c.wait_for_workers(w)
            t_start = time.perf_counter() - t0

            def run(c=c, kt=kt):
                return fd.study(
                    "subsample", qrels, run_dir, MEASURES, client=c, kernel_threads=kt, **kw
                )

            t0 = time.perf_counter()
            cold = run()
            t_cold = time.perf_counter() - t0
            t_warm, warm = timed(run, args.repeat)
            assert same(cold, local) and same(warm, local), "cluster result differs"
            n_tasks = -(-units // fd.block_size(units, c, None))
            rows_per_task = local.units.height / n_tasks
            one_block = local.units.head(int(rows_per_task))
            nbytes = len(pickle.dumps(one_block))
            worker_mb = c.run(vm_hwm_mb)
        m_warm = statistics.median(t_warm)
        print(
            f"cluster W={w} (kernel threads {kt}): start {t_start:5.2f} s, cold {t_cold:6.2f} s, "
            f"warm {m_warm:6.2f} s {[round(t, 2) for t in t_warm]}; "
            f"warm/local-prepared {m_warm / m_prep:.2f}x, "
            f"cold/local-files {t_cold / m_files:.2f}x; "
            f"{n_tasks} tasks, ~{nbytes / 1024:.0f} KiB returned per task; "
            f"worker peak RSS {', '.join(f'{v:.0f}' for v in worker_mb.values())} MB"
        )
    print(f"client peak RSS {peak_mb():.0f} MB; all results bit-identical to the local path")
    tmp.cleanup()


if __name__ == "__main__":
    main()
