"""Metasearch speed: fasteval vs ranx on TREC-8 (129 runs, 50 topics).

Tasks (each in a fresh process; wall time and peak RSS measured by the parent):

* ``all129``: fuse all 129 runs per query (CombSUM, CondorcetFuse for fasteval).
* ``groups``: fuse 1,000 random 10-run groups (seed 1), depth 1000 (CombSUM and
  CondorcetFuse for both tools).
* ``study``: the upper-bound study (``fasteval.analysis.fusion.upper_bound_study``)
  over the same 1,000 groups: joint RIC of each group, and RIC and MAP of the
  seven fusion methods' outputs (needs ``--qrels``).

Inside the child, the archive is read once; the first fusion call (numba
kernels loaded or compiled) and the median of ``--reps`` further calls are
reported. "cold" runs the child with an empty ``NUMBA_CACHE_DIR`` (compiling
included, for ranx too); "warm" with the cache filled by the cold run.
ranx builds numba typed dicts of strings and fuses group by group; its
CondorcetFuse finds each candidate's rank with a linear ``list.index`` per run
and sorts in Python with ``cmp_to_key`` (hours for 129 runs), so ranx runs
CombSUM only on all 129 runs; its 1,000 groups are timed on ``--ranx-groups``
of them (CombSUM) or ``--ranx-condorcet-groups`` (CondorcetFuse) and scaled
linearly (said so in the output). ranx uses min-max normalisation like fasteval.

Run from the repository root (the archive comes from ``fasteval ingest``)::

    python benchmarks/fusion.py ../shared/data/trec8_adhoc/runs --archive trec8.parquet \
        --qrels ../shared/data/trec8_adhoc/qrels.trec8.adhoc.gz

``--only ranx`` (or ``fasteval``, ``study``, a task or a method) runs the
matching rows only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def child(
    tool: str, task: str, method: str, archive: str, reps: int, n_groups: int, qrels: str
) -> dict:
    import numpy as np

    from fasteval.analysis import fusion as fu

    t0 = time.perf_counter()
    fin = fu.prepare_fusion(archive, qrels if task == "study" else None)
    t_read = time.perf_counter() - t0
    groups = (
        [list(range(fin.n_runs))]
        if task == "all129"
        else fu.random_groups(fin.n_runs, 1000, 10, seed=1)[:n_groups]
    )
    names = [[fin.run_names[i] for i in g] for g in groups]
    if task == "study":

        def call() -> int:
            return fu.upper_bound_study(fin, groups=groups).height

    elif tool == "fasteval":

        def call() -> int:
            return int(fu.fuse_groups(fin, groups, method, depth=1000).doc.shape[0])

    else:
        import polars as pl
        from ranx import Run
        from ranx import fuse as ranx_fuse

        t0 = time.perf_counter()
        src = fin.runs
        df = pl.DataFrame(
            {
                "run_id": np.asarray(src.run_names)[src.run],
                "q_id": src.qid.to_arrow(),
                "doc_id": src.doc.to_arrow(),
                "score": src.score,
            }
        )
        runs = {
            name: Run.from_df(
                part.drop("run_id").to_pandas().astype({"q_id": object, "doc_id": object}),
                name=name,
            )
            for (name,), part in df.group_by("run_id")
        }
        t_read += time.perf_counter() - t0

        def call() -> int:
            n = 0
            for g in names:
                m = method[4:] if method.startswith("comb") else method
                out = ranx_fuse([runs[r] for r in g], norm="min-max", method=m)
                n += sum(min(len(v), 1000) for v in out.run.values())
            return n

    t0 = time.perf_counter()
    n_docs = call()
    first = time.perf_counter() - t0
    warm = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        warm.append(time.perf_counter() - t0)
    return {
        "read_s": t_read,
        "first_s": first,
        "warm_s": statistics.median(warm) if warm else float("nan"),
        "n_docs": n_docs,
        "groups": len(groups),
    }


def launch(args: list[str], cache: str) -> tuple[dict, float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", *args], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode:
        msg = f"child {args[:3]} failed with exit code {proc.returncode}"
        raise SystemExit(msg)
    peak = usage.ru_maxrss / 1024.0  # Linux: kilobytes
    return json.loads(out.strip().splitlines()[-1]), wall, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "runs", nargs="?", help="TREC-8 run directory (ingested if --archive is absent)"
    )
    ap.add_argument("--archive", help="Parquet archive of the runs (required)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--qrels", help="TREC-8 qrels (for the study rows)")
    ap.add_argument("--ranx-groups", type=int, default=20)
    ap.add_argument("--ranx-condorcet-groups", type=int, default=1)
    ap.add_argument("--skip-ranx", action="store_true")
    ap.add_argument("--only", help="run only rows whose tool, task or method is this")
    ap.add_argument(
        "--child", nargs=7, metavar=("TOOL", "TASK", "METHOD", "ARCHIVE", "REPS", "N", "QRELS")
    )
    a = ap.parse_args()
    if a.child:
        tool, task, method, archive, reps, n, qrels = a.child
        print(json.dumps(child(tool, task, method, archive, int(reps), int(n), qrels)))
        return
    if not a.archive:
        ap.error("--archive is required")
    if not Path(a.archive).exists():
        subprocess.run(
            [sys.executable, "-m", "fasteval.cli", "ingest", a.runs, "-o", a.archive],
            check=True,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
    plan = [
        ("fasteval", "all129", "combsum", a.reps, 1),
        ("fasteval", "all129", "condorcet", a.reps, 1),
        ("fasteval", "groups", "combsum", a.reps, 1000),
        ("fasteval", "groups", "condorcet", a.reps, 1000),
    ]
    if a.qrels:
        plan.append(("fasteval", "study", "all", 0, 1000))
    if not a.skip_ranx:
        plan += [
            ("ranx", "all129", "combsum", 1, 1),
            ("ranx", "groups", "combsum", 1, a.ranx_groups),
            ("ranx", "groups", "condorcet", 0, a.ranx_condorcet_groups),
        ]
    if a.only:
        plan = [p for p in plan if a.only in p[:3]]
    print(
        "| tool | task | method | cache | read s | first call s | warm median s "
        "| per 1,000 groups s | process wall s | peak RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for tool, task, method, reps, n in plan:
        with tempfile.TemporaryDirectory() as cache:
            for label in ("cold", "warm"):
                res, wall, peak = launch(
                    [
                        *(tool, task, method, a.archive),
                        *(str(reps if label == "warm" else 0), str(n), str(a.qrels)),
                    ],
                    cache,
                )
                t = res["warm_s"] if label == "warm" and reps else res["first_s"]
                scale = (1000 / res["groups"]) * t if task != "all129" else float("nan")
                note = "" if res["groups"] in (1, 1000) else f" (x{1000 // res['groups']})"
                print(
                    f"| {tool} | {task} | {method} | {label} | {res['read_s']:.1f} | "
                    f"{res['first_s']:.2f} | {res['warm_s']:.2f} | {scale:.1f}{note} | "
                    f"{wall:.1f} | {peak:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
