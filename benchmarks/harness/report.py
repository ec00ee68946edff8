"""RESULTS.md: the tables, the agreement check, the targets and the raw samples."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import platform
import statistics
from importlib import metadata
from pathlib import Path
from typing import Any

from peers import MEASURES, run_files

from harness.bench import Series
from harness.common import (
    EXACT_TOL,
    FASTEVAL_VERSION,
    OUT,
    PACKAGES,
    RESULTS,
    TARGETS,
)
from harness.datasets import Dataset
from harness.measure import trec_eval_version


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
