"""Benchmark fasteval against pytrec_eval, ranx, ir_measures and trec_eval.

Every measurement is one fresh child process of this script (one process tree),
timed from launch to exit (interpreter start, imports, reading the files and
computing the seven per-query measures all included), with its peak resident
memory from ``os.wait4``. Tools that compile with numba (fasteval, ranx) are
measured twice over:

* cold: a fresh, empty ``NUMBA_CACHE_DIR``, so every kernel compiles (a first run
  in a fresh environment);
* warm: a cache warmed by the first cold run, median of ``--reps`` repetitions.

The trec_eval binary is run once per run file, as it is used, and the times summed.
Repetitions go round-robin over the tools so that load from other processes on a
shared machine spreads over all of them. Results replace this dataset's section
of ``benchmarks/RESULTS.md``; raw samples go to ``benchmarks/out/``.

Usage (see benchmarks/README.md)::

    python benchmarks/run.py --dataset all --reps 5
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import shlex
import shutil
import signal
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness.bench import bench_dataset, make_jobs  # noqa: E402
from harness.common import (  # noqa: E402
    ALL_TOOLS,
    FASTEVAL_SRC,
    PY_MODULE,
    REPO,
    RESULTS,
    log,
)
from harness.datasets import prepare_synthetic, prepare_trec8  # noqa: E402
from harness.measure import (  # noqa: E402
    RUNNING,
    find_trec_eval,
    snapshot_fasteval,
    source_hash,
    trec_eval_version,
)
from harness.report import raw_json, section, write_results  # noqa: E402

# --- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark fasteval against its peers; writes benchmarks/RESULTS.md.",
    )
    ap.add_argument("--dataset", choices=["synthetic", "trec8", "all"], default="all")
    ap.add_argument("--reps", type=int, default=5, help="warm repetitions per tool (median)")
    ap.add_argument(
        "--cold-reps",
        type=int,
        default=3,
        help="cold-cache runs per numba tool (0: one untimed warm-up only)",
    )
    ap.add_argument(
        "--tools",
        default=",".join(ALL_TOOLS),
        help=f"comma-separated subset of {','.join(ALL_TOOLS)}",
    )
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per measurement")
    ap.add_argument(
        "--note",
        action="append",
        default=[],
        help="a sentence for the Notes of RESULTS.md (e.g. how trec_eval was compiled)",
    )
    ap.add_argument("--no-write", action="store_true", help="do not touch RESULTS.md")
    ap.add_argument("--keep-scratch", action="store_true", help="keep the temporary folder")
    args = ap.parse_args(argv)
    argv_used = sys.argv[1:] if argv is None else argv
    command = shlex.join(["python", "benchmarks/run.py", *argv_used])

    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(tools) - set(ALL_TOOLS))
    if unknown:
        ap.error(f"unknown tool(s): {', '.join(unknown)}")
    for t, mod in PY_MODULE.items():
        if t in tools and importlib.util.find_spec(mod) is None:
            log(f"{t}: not installed in this Python; skipped (pip install -e '.[bench]')")
            tools.remove(t)
    te = find_trec_eval() if "trec_eval" in tools else (None, "trec_eval not requested")
    if "trec_eval" in tools and te[0] is None:
        log(te[1])
        tools.remove("trec_eval")
    elif te[0]:
        log(f"trec_eval {trec_eval_version(te[0])}: {te[1]}")

    names = ["synthetic", "trec8"] if args.dataset == "all" else [args.dataset]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up on kill, too
    scratch = Path(tempfile.mkdtemp(prefix="fasteval-bench-"))
    all_ok = True
    try:
        FASTEVAL_SRC[0] = snapshot_fasteval(scratch)
        log(f"fasteval: snapshot of the working tree, source hash {source_hash(FASTEVAL_SRC[0])}")
        for name in names:
            started = dt.datetime.now(dt.timezone.utc)
            load0 = os.getloadavg()[0]
            need_plain = "trec_eval" in tools
            if name == "synthetic":
                ds = prepare_synthetic(scratch)
            else:
                ds = prepare_trec8(scratch, need_plain, "fasteval" in tools)
            jobs = make_jobs(ds, tools)
            log(f"[{name}] {len(jobs)} jobs; scratch folder {scratch}")
            ds.notes.extend(args.note)
            series = bench_dataset(ds, jobs, args, scratch, te[0])
            if source_hash() != source_hash(FASTEVAL_SRC[0]):
                ds.notes.append(
                    "fasteval's working tree changed while this ran; the numbers are for "
                    "the snapshot taken at the start (source hash above)."
                )
            missed = [
                f"{ser.job.tool} {ser.job.mode}"
                for ser in series.values()
                if ser.cache == "warm" and any(x.compiled for x in ser.samples)
            ]
            if missed:
                ds.notes.append(
                    "Some warm runs wrote to the numba cache (kernels recompiled): "
                    + ", ".join(missed)
                    + "."
                )
            text, ok = section(ds, series, command, started, (load0, os.getloadavg()[0]), te)
            all_ok = all_ok and ok
            log(f"[{name}] raw samples: {raw_json(ds, series, command, started)}")
            if not args.no_write:
                write_results(name, text)
                log(f"[{name}] wrote {RESULTS.relative_to(REPO)}")
            print(text)
            for ser in series.values():
                if ser.job.tool.startswith("fasteval") and not ser.good:
                    all_ok = False
    finally:
        for proc in list(RUNNING):
            proc.kill()
        if args.keep_scratch:
            log(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    if not all_ok:
        log("fasteval failed or disagreed with pytrec_eval (see above)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
