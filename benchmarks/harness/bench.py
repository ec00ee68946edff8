"""The benchmark of one dataset: its jobs, run round-robin, cold and warm."""

from __future__ import annotations

import argparse
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from harness.common import OUT, REPO, log
from harness.datasets import Dataset
from harness.measure import (
    Job,
    Sample,
    cache_state,
    measure_cli,
    measure_python,
    measure_trec_eval,
)


@dataclass
class Series:
    job: Job
    cache: str  # "cold", "warm" or "-" (no JIT)
    samples: list[Sample] = field(default_factory=list)

    @property
    def good(self) -> list[Sample]:
        return [s for s in self.samples if s.ok]


def make_jobs(ds: Dataset, tools: list[str]) -> list[Job]:
    jobs = []
    if "fasteval" in tools:
        jobs.append(Job("fasteval", "text", "fasteval", True, ds.qrels, ds.runs))
        if ds.parquet is not None:
            jobs.append(Job("fasteval", "parquet", "fasteval", True, ds.qrels, ds.parquet))
        jobs.append(Job("fasteval CLI", "text", "fasteval_cli", True, ds.qrels, ds.runs))
        if ds.parquet is not None:
            jobs.append(Job("fasteval CLI", "parquet", "fasteval_cli", True, ds.qrels, ds.parquet))
    if "pytrec_eval" in tools:
        jobs.append(Job("pytrec_eval", "text", "pytrec_eval", False, ds.qrels, ds.runs))
    if "ranx" in tools:
        jobs.append(Job("ranx", "text", "ranx", True, ds.qrels, ds.runs))
    if "ir_measures" in tools:
        jobs.append(Job("ir_measures", "text", "ir_measures", False, ds.qrels, ds.runs))
    if "trec_eval" in tools and ds.plain_runs is not None and ds.plain_qrels is not None:
        jobs.append(Job("trec_eval", "text", "trec_eval", False, ds.plain_qrels, ds.plain_runs))
    if "polars" in tools and ds.name == "synthetic":
        jobs.append(Job("polars read only", "text", "polars_text", False, ds.qrels, ds.runs, True))
        if ds.parquet is not None:
            jobs.append(
                Job(
                    "polars read only",
                    "parquet",
                    "polars_parquet",
                    False,
                    ds.qrels,
                    ds.parquet,
                    True,
                )
            )
    return jobs


def bench_dataset(
    ds: Dataset, jobs: list[Job], args: argparse.Namespace, scratch: Path, te_binary: str | None
) -> dict[str, Series]:
    logs = OUT / "logs" / ds.name
    series: dict[str, Series] = {}
    warm_dir = {j.key: scratch / "numba" / f"{ds.name}-{j.key}-warm" for j in jobs}
    shared_dir = scratch / "numba" / f"{ds.name}-nojit"

    def run(job: Job, cache: Path) -> Sample:
        load = os.getloadavg()[0]
        before = cache_state(cache) if job.jit else []
        if job.peer == "trec_eval":
            assert te_binary is not None
            s = measure_trec_eval(job, te_binary, logs, args.timeout)
        elif job.peer == "fasteval_cli":
            s = measure_cli(job, cache, logs, args.timeout)
        else:
            s = measure_python(job, cache, logs, args.timeout)
        s.load = load
        s.compiled = job.jit and cache_state(cache) != before
        return s

    def report(job: Job, label: str, s: Sample) -> None:
        what = f"{s.wall:7.2f} s  {s.maxrss_mb:7.0f} MB" if s.ok else f"FAILED ({s.error})"
        if s.compiled and label.startswith("warm #"):
            what += "  [compiled: the warm cache was missed]"
        log(f"[{ds.name}] {job.tool:<16} {job.mode:<7} {label:<9} {what}  (load {s.load:.1f})")

    # cold: every kernel compiles; the first cold run fills the warm cache (= warm-up)
    jit_jobs = [j for j in jobs if j.jit]
    for j in jit_jobs:
        series[f"{j.key}-cold"] = Series(j, "cold")
    for i in range(max(args.cold_reps, 1)):
        for j in jit_jobs:
            fresh = scratch / "numba" / f"{ds.name}-{j.key}-cold{i}"
            cache = warm_dir[j.key] if i == 0 else fresh
            shutil.rmtree(cache, ignore_errors=True)
            s = run(j, cache)
            if i > 0:
                shutil.rmtree(cache, ignore_errors=True)
            if i < args.cold_reps:
                series[f"{j.key}-cold"].samples.append(s)
                report(j, f"cold #{i + 1}", s)
            else:
                report(j, "warm-up", s)
            if i == 0 and j.tool.startswith("fasteval") and not s.ok:
                msg = (
                    f"fasteval failed on its first run ({s.error}); is the working tree "
                    f"mid-edit? See {logs.relative_to(REPO)}"
                )
                raise SystemExit(msg)
    for j in jobs:
        if not j.jit:
            report(j, "warm-up", run(j, shared_dir))  # page cache, imports
    # warm: round-robin, order rotated each repetition
    for j in jobs:
        series[f"{j.key}-warm"] = Series(j, "warm" if j.jit else "-")
    for i in range(args.reps):
        k = i % len(jobs)
        for j in jobs[k:] + jobs[:k]:
            s = run(j, warm_dir[j.key] if j.jit else shared_dir)
            series[f"{j.key}-warm"].samples.append(s)
            report(j, f"warm #{i + 1}", s)
    return {k: v for k, v in series.items() if v.samples}
