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
import gzip
import hashlib
import importlib.util
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from peers import MEASURES, parse_trec_eval_output, run_files  # noqa: E402

RESULTS = HERE / "RESULTS.md"
OUT = HERE / "out"
SHARED = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
SYNTHETIC = HERE / "data" / "synthetic"
# where the children import fasteval from: a snapshot of the working tree taken at the
# start (see main), so that edits made while the benchmark runs cannot mix versions
FASTEVAL_SRC = [REPO]
FASTEVAL_VERSION = ["?"]  # commit and source hash of that snapshot

ALL_TOOLS = ["fasteval", "pytrec_eval", "ranx", "ir_measures", "trec_eval", "polars"]
PY_MODULE = {"pytrec_eval": "pytrec_eval", "ranx": "ranx", "ir_measures": "ir_measures"}
PACKAGES = [
    "numpy",
    "numba",
    "polars",
    "pyarrow",
    "pytrec-eval-terrier",
    "ranx",
    "ir-measures",
]
# fasteval must agree with pytrec_eval exactly (same float operations); anything
# beyond this is a wrong answer.
EXACT_TOL = 1e-9

TARGETS = """\
Targets from the issue (dataset (b), text files, 7 per-query measures):
fasteval end-to-end from text <= 1.5 s warm and >= 4x pytrec_eval; from the Parquet
archive <= 0.8 s; first run with a cold numba cache <= 15 s; peak memory <= 1.5 GB."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- datasets ----------------------------------------------------------------------------


@dataclass
class Dataset:
    name: str
    title: str
    qrels: Path
    runs: Path  # directory of run files
    parquet: Path | None = None  # the same runs as one archive (fasteval ingest)
    plain_qrels: Path | None = None  # uncompressed copies for trec_eval
    plain_runs: Path | None = None
    notes: list[str] = field(default_factory=list)


def child_env(cache_dir: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    src = str(FASTEVAL_SRC[0])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def prepare_synthetic(scratch: Path) -> Dataset:
    gen = [sys.executable, str(HERE / "generate.py")]
    subprocess.run(gen, check=True, env=child_env(scratch / "numba" / "generate"))
    manifest = json.loads((SYNTHETIC / "manifest.json").read_text())
    return Dataset(
        name="synthetic",
        title=(
            f"synthetic archive (b): {manifest['n_runs']} runs x {manifest['n_queries']} "
            f"queries x {manifest['depth']} docs (`benchmarks/generate.py`, seed "
            f"{manifest['seed']})"
        ),
        qrels=SYNTHETIC / "qrels.txt",
        runs=SYNTHETIC / "runs",
        parquet=SYNTHETIC / "runs.parquet",
        plain_qrels=SYNTHETIC / "qrels.txt",
        plain_runs=SYNTHETIC / "runs",
    )


def _gunzip(src: Path, dst: Path) -> None:
    with gzip.open(src, "rb") as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g, 1 << 20)


def prepare_trec8(scratch: Path, need_plain: bool, need_parquet: bool) -> Dataset:
    root = SHARED / "trec8_adhoc"
    qrels, runs = root / "qrels.trec8.adhoc.gz", root / "runs"
    if not qrels.exists() or not runs.is_dir():
        msg = f"TREC-8 data not found under {root} (set FASTEVAL_SHARED_DATA)"
        raise SystemExit(msg)
    ds = Dataset(
        name="trec8",
        title=(
            "TREC-8 ad hoc (a): all 129 submitted runs, gzipped "
            "(`../shared/data/trec8_adhoc`), official qrels"
        ),
        qrels=qrels,
        runs=runs,
    )
    # Derived copies of the real data live in a temporary folder outside the repository.
    if need_parquet:
        ds.parquet = scratch / "trec8_runs.parquet"
        log("[trec8] packing the runs into a Parquet archive (fasteval ingest; not timed)")
        cmd = [sys.executable, "-m", "fasteval.cli", "ingest", str(runs), "-o", str(ds.parquet)]
        subprocess.run(cmd, check=True, env=child_env(scratch / "numba" / "ingest"))
        ds.notes.append(
            "fasteval's Parquet archive was made with `fasteval ingest` into a temporary "
            "folder before timing."
        )
    if need_plain:
        plain = scratch / "trec8_plain"
        (plain / "runs").mkdir(parents=True, exist_ok=True)
        ds.plain_qrels = plain / "qrels.trec8.adhoc"
        _gunzip(qrels, ds.plain_qrels)
        for f in run_files(str(runs)):
            _gunzip(f, plain / "runs" / f.name.removesuffix(".gz"))
        ds.plain_runs = plain / "runs"
        ds.notes.append(
            "trec_eval cannot read gzip: it read uncompressed copies (decompressed into a "
            "temporary folder before timing; the other tools read the .gz files)."
        )
    return ds


# --- jobs and measurements ---------------------------------------------------------------


@dataclass
class Job:
    tool: str
    mode: str  # "text" or "parquet"
    peer: str  # peers.py tool name, or "trec_eval"
    jit: bool  # compiles with numba: measured cold and warm
    qrels: Path
    runs: Path
    reference: bool = False  # a floor (reading only), not a peer

    @property
    def key(self) -> str:
        return f"{self.tool}-{self.mode}"


@dataclass
class Sample:
    wall: float
    maxrss_mb: float
    ok: bool
    error: str = ""
    inner: float | None = None  # child's own time from first Python line to done
    imported: float | None = None
    n_values: int | None = None
    maps: dict[str, float] = field(default_factory=dict)
    load: float = 0.0
    compiled: bool = False  # the run wrote to its numba cache


def cache_state(d: Path) -> list[tuple[str, int]]:
    """Files of a numba cache folder with their modification times."""
    if not d.is_dir():
        return []
    return sorted((str(p), p.stat().st_mtime_ns) for p in d.rglob("*") if p.is_file())


def source_hash(root: Path = REPO) -> str:
    """A short hash of fasteval's source under ``root``, to tell versions apart."""
    h = hashlib.sha1()
    for p in sorted((root / "fasteval").rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:10]


def snapshot_fasteval(scratch: Path) -> Path:
    """Copy the working tree's ``fasteval/`` (no caches) to ``scratch``; its parent folder."""
    commit = _git("rev-parse", "--short", "HEAD") or "?"
    dirty = _git("status", "--porcelain", "--", "fasteval")
    dst = scratch / "src"
    shutil.copytree(
        REPO / "fasteval",
        dst / "fasteval",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"),
    )
    FASTEVAL_VERSION[0] = (
        f"fasteval @ {commit}"
        + (" + uncommitted changes in fasteval/" if dirty else "")
        + f" (source hash {source_hash(dst)}, a snapshot taken at the start)"
    )
    return dst


_RUNNING: set[subprocess.Popen[bytes]] = set()  # children to stop if we are interrupted


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, float]:
    """Reap ``proc`` with os.wait4: (exit code, peak RSS in MB of it and its children)."""
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    _RUNNING.add(proc)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    _RUNNING.discard(proc)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss / 1024.0  # Linux: kilobytes


def measure_python(job: Job, cache_dir: Path, logs: Path, timeout: float) -> Sample:
    logs.mkdir(parents=True, exist_ok=True)
    out_json = logs / f"{job.key}.json"
    out_json.unlink(missing_ok=True)
    log_file = logs / f"{job.key}.log"
    cmd = [sys.executable, str(HERE / "peers.py"), job.peer, str(job.qrels), str(job.runs)]
    cmd.append(str(out_json))
    env = child_env(cache_dir)
    with open(log_file, "wb") as lf:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT, env=env)
        code, rss = _wait(proc, timeout)
        wall = time.perf_counter() - t0
    if code != 0 or not out_json.exists():
        tail = log_file.read_text(errors="replace").strip().splitlines()[-3:]
        return Sample(wall, rss, False, f"exit {code}: " + " | ".join(tail))
    res = json.loads(out_json.read_text())
    return Sample(
        wall,
        rss,
        True,
        inner=res["done"],
        imported=res["marks"].get("imported"),
        n_values=res["n_values"],
        maps=res["map"],
    )


def measure_cli(job: Job, cache_dir: Path, logs: Path, timeout: float) -> Sample:
    """``fasteval eval`` as a user runs it from the shell: per-query values to a Parquet file."""
    logs.mkdir(parents=True, exist_ok=True)
    out = logs / f"{job.key.replace(' ', '_')}.parquet"
    out.unlink(missing_ok=True)
    log_file = logs / f"{job.key.replace(' ', '_')}.log"
    cmd = [sys.executable, "-m", "fasteval.cli", "eval", str(job.qrels), str(job.runs), "-q"]
    for m in MEASURES["trec"]:
        cmd += ["-m", m]
    cmd += ["--format", "parquet", "-o", str(out)]
    with open(log_file, "wb") as lf:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT, env=child_env(cache_dir))
        code, rss = _wait(proc, timeout)
        wall = time.perf_counter() - t0
    if code != 0 or not out.exists():
        tail = log_file.read_text(errors="replace").strip().splitlines()[-3:]
        return Sample(wall, rss, False, f"exit {code}: " + " | ".join(tail))
    import polars as pl  # the output is checked after the clock stopped

    df = pl.read_parquet(out)
    agg = df.filter((pl.col("query_id") == "all") & (pl.col("measure") == "map"))
    return Sample(
        wall,
        rss,
        True,
        n_values=int((df["query_id"] != "all").sum()),
        maps=dict(zip(agg["run_id"].to_list(), agg["value"].to_list(), strict=True)),
    )


def measure_trec_eval(job: Job, binary: str, logs: Path, timeout: float) -> Sample:
    logs.mkdir(parents=True, exist_ok=True)
    args = [binary, "-q", "-m", "runid"]
    for m in MEASURES["trec_eval"]:
        args += ["-m", m]
    wanted = set(MEASURES["trec"])
    maps: dict[str, float] = {}
    n_values = 0
    peak = 0.0
    with open(logs / f"{job.key}.log", "wb") as lf, tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        for path in run_files(str(job.runs)):
            out.seek(0)
            out.truncate()
            proc = subprocess.Popen([*args, str(job.qrels), str(path)], stdout=out, stderr=lf)
            code, rss = _wait(proc, timeout)
            peak = max(peak, rss)
            if code != 0:
                return Sample(time.perf_counter() - t0, peak, False, f"exit {code} on {path.name}")
            out.seek(0)
            text = out.read().decode()
            run_id, value = path.name, float("nan")
            for meas, q, v in parse_trec_eval_output(text):
                if q == "all":
                    if meas == "runid":
                        run_id = v
                    elif meas == "map":
                        value = float(v)
                elif meas in wanted:
                    n_values += 1
            maps[run_id] = value
        wall = time.perf_counter() - t0
    return Sample(wall, peak, True, n_values=n_values, maps=maps)


def find_trec_eval() -> tuple[str | None, str]:
    """A trec_eval binary from $TREC_EVAL or PATH, and how it was (not) found."""
    env = os.environ.get("TREC_EVAL")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env, "from $TREC_EVAL"
        return None, f"$TREC_EVAL is set but is not an executable file: {env}"
    found = shutil.which("trec_eval")
    if found:
        return found, "found on PATH"
    return None, (
        "trec_eval not found: no $TREC_EVAL and no `trec_eval` on PATH "
        "(put a binary on PATH or set TREC_EVAL=/path/to/trec_eval; this harness never builds it)"
    )


def trec_eval_version(binary: str) -> str:
    try:
        p = subprocess.run([binary, "-v"], check=False, capture_output=True, text=True, timeout=30)
    except OSError:
        return "?"
    text = (p.stdout + p.stderr).strip().splitlines()
    return text[0].removeprefix("trec_eval version ").strip() if text else "?"


# --- the benchmark -----------------------------------------------------------------------


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


# --- reporting ---------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_gb() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024**2:.0f} GB RAM"
    except OSError:
        pass
    return "? RAM"


def _git(*args: str) -> str:
    try:
        p = subprocess.run(
            ["git", "-C", str(REPO), *args], check=False, capture_output=True, text=True
        )
    except OSError:
        return ""
    return p.stdout.strip() if p.returncode == 0 else ""


def machine_info(te: tuple[str | None, str]) -> list[str]:
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = []
    for pkg in PACKAGES:
        try:
            versions.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{pkg} (absent)")
    fe = FASTEVAL_VERSION[0]
    binary, how = te
    te_text = f"trec_eval {trec_eval_version(binary)} ({how})" if binary else how
    return [
        f"- Machine: {ncpu} CPUs ({_cpu_model()}), {_mem_gb()}, {platform.system()} "
        f"{platform.release()}",
        f"- Python {platform.python_version()}; " + ", ".join(versions),
        f"- {fe}; {te_text}",
    ]


def _fmt_s(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def table(series: dict[str, Series]) -> tuple[list[str], float | None]:
    base = series.get("pytrec_eval-text-warm")
    base_med = statistics.median(s.wall for s in base.good) if base and base.good else None
    rows = [
        "| tool | input | numba cache | median s | min–max s | in-process s | × pytrec_eval "
        "| peak RSS MB | reps |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    order = {
        "fasteval": 0,
        "fasteval CLI": 1,
        "pytrec_eval": 2,
        "trec_eval": 3,
        "ir_measures": 4,
        "ranx": 5,
    }
    for ser in sorted(
        series.values(),
        key=lambda s: (order.get(s.job.tool, 9), s.job.mode != "text", s.cache == "cold"),
    ):
        j = ser.job
        good = ser.good
        name = f"*{j.tool}*" if j.reference else j.tool
        if not good:
            err = ser.samples[-1].error.replace("|", "/")[:120]
            rows.append(f"| {name} | {j.mode} | {ser.cache} | failed: {err} | | | | | 0 |")
            continue
        walls = [s.wall for s in good]
        med = statistics.median(walls)
        inner = [s.inner for s in good if s.inner is not None]
        inner_txt = _fmt_s(statistics.median(inner)) if inner else "–"
        ratio = f"{base_med / med:.2f}" if base_med else "n/a"
        peak = max(s.maxrss_mb for s in good)
        n = f"{len(good)}" + (
            f" ({len(ser.samples) - len(good)} failed)" if len(good) < len(ser.samples) else ""
        )
        rows.append(
            f"| {name} | {j.mode} | {ser.cache} | {_fmt_s(med)} | {_fmt_s(min(walls))}–"
            f"{_fmt_s(max(walls))} | {inner_txt} | {ratio} | {peak:.0f} | {n} |"
        )
    return rows, base_med


def agreement(series: dict[str, Series]) -> tuple[list[str], bool]:
    """MAP per run of every tool vs pytrec_eval; False when fasteval disagrees."""
    ref_ser = series.get("pytrec_eval-text-warm")
    ref = ref_ser.good[-1].maps if ref_ser and ref_ser.good else None
    rows = [
        "| tool | input | runs compared | max abs diff of MAP per run vs pytrec_eval "
        "| per-query values computed |",
        "|---|---|---:|---:|---:|",
    ]
    ok = True
    for key, ser in series.items():
        if not key.endswith("-warm") or ser.job.reference or not ser.good:
            continue
        s = ser.good[-1]
        if ref is None:
            rows.append(
                f"| {ser.job.tool} | {ser.job.mode} | – | no pytrec_eval reference "
                f"| {s.n_values:,} |"
            )
            continue
        common = sorted(set(ref) & set(s.maps))
        missing = len(set(ref) ^ set(s.maps))
        diff = max((abs(ref[r] - s.maps[r]) for r in common), default=float("nan"))
        verdict = ""
        if ser.job.tool.startswith("fasteval"):
            bad = missing > 0 or not (diff <= EXACT_TOL)
            ok = ok and not bad
            verdict = " **MISMATCH**" if bad else " (exact)"
        miss = f" ({missing} runs unmatched)" if missing else ""
        rows.append(
            f"| {ser.job.tool} | {ser.job.mode} | {len(common)}{miss} | {diff:.3g}{verdict} "
            f"| {s.n_values:,} |"
        )
    return rows, ok


def targets(series: dict[str, Series], base_med: float | None) -> list[str]:
    def med(key: str) -> float | None:
        ser = series.get(key)
        return statistics.median(s.wall for s in ser.good) if ser and ser.good else None

    def peak() -> float | None:
        peaks = [
            s.maxrss_mb for k, ser in series.items() if k.startswith("fasteval") for s in ser.good
        ]
        return max(peaks) if peaks else None

    def line(label: str, value: float | None, limit: float, unit: str, higher: bool = False) -> str:
        if value is None:
            return f"- {label}: not measured"
        met = value >= limit if higher else value <= limit
        sign = ">=" if higher else "<="
        return (
            f"- {label}: {value:.2f}{unit} (target {sign} {limit:g}{unit}): "
            f"{'met' if met else 'NOT met'}"
        )

    text_warm = med("fasteval-text-warm")
    speedup = base_med / text_warm if base_med and text_warm else None
    rss = peak()
    return [
        line("fasteval from text, warm", text_warm, 1.5, " s"),
        line("speed-up over pytrec_eval (text, warm)", speedup, 4.0, "x", higher=True),
        line("fasteval from Parquet, warm", med("fasteval-parquet-warm"), 0.8, " s"),
        line("`fasteval eval` (CLI) from text, warm", med("fasteval CLI-text-warm"), 1.5, " s"),
        line(
            "`fasteval eval` (CLI) from Parquet, warm", med("fasteval CLI-parquet-warm"), 0.8, " s"
        ),
        line("fasteval from text, cold numba cache", med("fasteval-text-cold"), 15.0, " s"),
        line("fasteval peak RSS (any mode)", rss / 1024 if rss else None, 1.5, " GB"),
    ]


def data_line(ds: Dataset) -> str:
    files = run_files(str(ds.runs))
    size = sum(f.stat().st_size for f in files) / 1e6
    opener = gzip.open if ds.qrels.suffix == ".gz" else open
    with opener(ds.qrels, "rb") as f:
        n_qrels = sum(1 for _ in f)
    text = f"- Data: qrels {n_qrels:,} judgments; {len(files)} run files ({size:.0f} MB on disk)"
    if ds.parquet is not None and ds.name == "synthetic":
        text += f"; Parquet archive {ds.parquet.stat().st_size / 1e6:.0f} MB"
    return text


def section(
    ds: Dataset,
    series: dict[str, Series],
    command: str,
    started: dt.datetime,
    loads: tuple[float, float],
    te: tuple[str | None, str],
) -> tuple[str, bool]:
    rows, base_med = table(series)
    agree, ok = agreement(series)
    measures = ", ".join(
        f"{a} = {b} = {c} = {d}"
        for a, b, c, d in zip(
            MEASURES["trec"],
            MEASURES["trec_eval"],
            MEASURES["ranx"],
            MEASURES["ir_measures"],
            strict=True,
        )
    )
    lines = [
        f"<!-- results:{ds.name} -->",
        f"## {ds.title}",
        "",
        f"Command (from the repository root): `{command}`",
        "",
        f"- Date: {started:%Y-%m-%d %H:%M} UTC; 1-min load average {loads[0]:.1f} at the start, "
        f"{loads[1]:.1f} at the end",
        *machine_info(te),
        data_line(ds),
        f"- Measures (trec_eval / pytrec_eval = trec_eval -m = ranx = ir_measures): {measures}",
        "",
        *rows,
        "",
        "*median s*: wall time of the whole child process (interpreter start, imports, "
        "reading the files, all per-query values), median over the repetitions; "
        "*in-process s*: the same measured inside the child from its first line "
        "(excludes interpreter start-up); *× pytrec_eval*: pytrec_eval's median / this "
        "median (higher is faster); *peak RSS*: the largest over the repetitions "
        "(`os.wait4`, includes the child's own children); numba cache *cold*: a fresh "
        "empty `NUMBA_CACHE_DIR` (every kernel compiles), *warm*: a cache filled by the "
        "first cold run.",
        "",
        "MAP agreement (last warm repetition of each tool):",
        "",
        *agree,
        "",
    ]
    if ds.name == "synthetic":
        lines += [TARGETS, "", *targets(series, base_med), ""]
    notes = list(ds.notes)
    if not ok:
        notes.append("**fasteval's MAP differs from pytrec_eval's: its speed means nothing.**")
    tools = {ser.job.tool for ser in series.values()}
    if "ranx" in tools:
        notes.append(
            "ranx's MAP differs where scores tie: it keeps tied documents in file order "
            "instead of breaking ties by document id as trec_eval does."
        )
    if "trec_eval" in tools:
        notes.append(
            "trec_eval prints 4 decimals, and version 10 ranks by float64 scores where "
            "pytrec_eval (trec_eval 9.0.8) and fasteval's default `compat=9` round them to "
            "float32 (TREC-8's uwmt8a0 depends on it): hence its small MAP differences."
        )
    if any(ser.job.reference for ser in series.values()):
        notes.append(
            "*polars read only*: a floor, reading the run files into one table and "
            "computing nothing."
        )
    lines += [f"Notes: {' '.join(notes)}", f"<!-- /results:{ds.name} -->"]
    return "\n".join(lines), ok


HEADER = """\
# fasteval benchmark results

Written by `benchmarks/run.py` (see `benchmarks/README.md`): every tool runs in its
own fresh process on the same files, end to end from files on disk, seven per-query
measures. Speeds come from a shared machine and are noisy: read the medians and the
ratios, not single runs. Speed is never asserted in the tests.
"""


def write_results(ds_name: str, text: str) -> None:
    old = RESULTS.read_text() if RESULTS.exists() else HEADER
    start, end = f"<!-- results:{ds_name} -->", f"<!-- /results:{ds_name} -->"
    if start in old and end in old:
        a = old.index(start)
        b = old.index(end) + len(end)
        new = old[:a] + text + old[b:]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    if ds_name == "synthetic" and "<!-- results:trec8 -->" in new:
        # keep the synthetic archive (the targets) first
        a = new.index("<!-- results:synthetic -->")
        b = new.index("<!-- /results:synthetic -->") + len("<!-- /results:synthetic -->")
        t = new.index("<!-- results:trec8 -->")
        if t < a:
            block = new[a:b]
            new = new[:a].rstrip("\n") + "\n" + new[b:]
            t = new.index("<!-- results:trec8 -->")
            new = new[:t] + block + "\n\n" + new[t:]
    RESULTS.write_text(new.rstrip("\n") + "\n")


def raw_json(ds: Dataset, series: dict[str, Series], command: str, started: dt.datetime) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{ds.name}-{started:%Y%m%d-%H%M%S}.json"
    data: dict[str, Any] = {
        "dataset": ds.name,
        "command": command,
        "started_utc": started.isoformat(),
        "series": {
            k: {
                "tool": s.job.tool,
                "mode": s.job.mode,
                "cache": s.cache,
                "samples": [
                    {
                        "wall": x.wall,
                        "maxrss_mb": x.maxrss_mb,
                        "ok": x.ok,
                        "error": x.error,
                        "inner": x.inner,
                        "imported": x.imported,
                        "n_values": x.n_values,
                        "load": x.load,
                    }
                    for x in s.samples
                ],
            }
            for k, s in series.items()
        },
    }
    path.write_text(json.dumps(data, indent=1))
    return path


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
        for proc in list(_RUNNING):
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
