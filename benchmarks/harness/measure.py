"""One measurement: a tool run in a fresh process, timed from launch to exit, with its peak RSS."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from peers import MEASURES, parse_trec_eval_output, run_files

from harness.common import FASTEVAL_VERSION, HERE, REPO, git
from harness.datasets import child_env


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
    commit = git("rev-parse", "--short", "HEAD") or "?"
    dirty = git("status", "--porcelain", "--", "fasteval")
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


RUNNING: set[subprocess.Popen[bytes]] = set()  # children to stop if we are interrupted


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, float]:
    """Reap ``proc`` with os.wait4: (exit code, peak RSS in MB of it and its children)."""
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    RUNNING.add(proc)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    RUNNING.discard(proc)
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
