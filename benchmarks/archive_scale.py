"""Archive scale: fasteval, pytrec_eval and trec_eval side by side, whole processes.

Every row is one workload and one tool, run as a user runs it from the shell (a fresh
process; trec_eval one process per run file, as it takes one run), with the page cache
warmed first. Reported: median wall time, median CPU time (user + system of the process
and its children), median peak RSS and RSS per input line, over ``--reps`` runs; ratios
are the peers' median over fasteval's. The seven measures are those of every benchmark
here (``tests/comparisons.py``).

Workloads (``--workloads``, comma separated):

- ``trec8-text``, ``trec8-gz``, ``trec8-parquet``: all 129 TREC-8 ad hoc runs (6.3M lines)
  from ``../shared/data/trec8_adhoc``, uncompressed into ``benchmarks/data/trec8_plain``,
  as distributed (gzip), and as a ``fasteval ingest`` archive (fasteval only);
- ``trec8-one``: the trec_eval drop-in use, one run (``input.INQ603``), ``-m map -m P_10``;
- ``msmarco4``, ``msmarco50``: the MS MARCO passage dev shape (``generate.py --shape msmarco``);
- ``synthetic100``, ``synthetic400``, ``synthetic2000``: copies of the synthetic archive
  (``scaling.py``), 5M to 100M lines.

Usage::

    python benchmarks/archive_scale.py --workloads trec8-text,trec8-gz --reps 3
    TREC_EVAL=/path/to/trec_eval python benchmarks/archive_scale.py --reps 3 --write

``--write`` replaces the "Archive scale" section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from peers import MEASURES, run_files  # noqa: E402

SHARED = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
DATA = HERE / "data"
RESULTS = HERE / "RESULTS.md"
SECTION = "## Archive scale"


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mb: float


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ) | (extra or {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def measure(
    cmd: list[str], stdout: int | None = subprocess.DEVNULL, env: dict[str, str] | None = None
) -> Sample:
    """Wall and CPU seconds and peak RSS (MB) of one child process; raises if it fails."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=err, env=_env(env))
        _, status, use = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            msg = f"{' '.join(cmd[:5])} ... failed: {tail}"
            raise RuntimeError(msg)
    return Sample(wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024.0)


def warm(paths: list[Path]) -> None:
    """Read the inputs once so that every tool finds them in the page cache."""
    for p in paths:
        for f in [p] if p.is_file() else run_files(str(p)):
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def count_lines(runs: Path) -> int:
    n = 0
    for f in [runs] if runs.is_file() else run_files(str(runs)):
        if f.suffix == ".parquet":
            import pyarrow.parquet as pq

            n += pq.ParquetFile(f).metadata.num_rows
            continue
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rb") as fh:
            n += sum(block.count(b"\n") for block in iter(lambda fh=fh: fh.read(1 << 24), b""))
    return n


# --- workloads -------------------------------------------------------------------------


def trec8_plain() -> Path:
    src = SHARED / "trec8_adhoc" / "runs"
    dst = DATA / "trec8_plain"
    files = run_files(str(src))
    if dst.exists() and len(list(dst.iterdir())) == len(files):
        return dst
    dst.mkdir(parents=True, exist_ok=True)
    for f in files:
        with gzip.open(f, "rb") as a, open(dst / f.name.removesuffix(".gz"), "wb") as b:
            shutil.copyfileobj(a, b)
    return dst


def ingest(runs: Path, target: Path) -> Path:
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)  # fasteval creates no parent folders
        cmd = [sys.executable, "-m", "fasteval.cli", "ingest", str(runs), "-o", str(target)]
        subprocess.run(cmd, check=True, env=_env(), stdout=subprocess.DEVNULL)
    return target


def workload(name: str) -> tuple[Path, Path, list[str]]:
    """(qrels, runs, fasteval measures) of a workload."""
    t8 = SHARED / "trec8_adhoc"
    if name == "trec8-text":
        return t8 / "qrels.trec8.adhoc.gz", trec8_plain(), MEASURES["trec"]
    if name == "trec8-gz":
        return t8 / "qrels.trec8.adhoc.gz", t8 / "runs", MEASURES["trec"]
    if name == "trec8-parquet":
        return (
            t8 / "qrels.trec8.adhoc.gz",
            ingest(t8 / "runs", DATA / "trec8_runs.parquet"),
            MEASURES["trec"],
        )
    if name == "trec8-one":
        return t8 / "qrels.trec8.adhoc.gz", trec8_plain() / "input.INQ603", ["map", "P_10"]
    if name.startswith("msmarco"):
        n = name.removeprefix("msmarco")
        root = DATA / "msmarco"
        if not (root / f"runs{n}").exists():
            subprocess.run(
                [sys.executable, str(HERE / "generate.py"), "--shape", "msmarco"], check=True
            )
        return root / "qrels.txt", root / f"runs{n}", MEASURES["trec"]
    if name.startswith("synthetic"):
        from scaling import SYNTHETIC, make_archive

        k = int(name.removeprefix("synthetic")) // 100
        if not (SYNTHETIC / "runs").exists():
            subprocess.run([sys.executable, str(HERE / "generate.py")], check=True)
        runs, _ = make_archive(k, parquet=False)
        return SYNTHETIC / "qrels.txt", runs, MEASURES["trec"]
    msg = f"unknown workload {name!r}"
    raise SystemExit(msg)


# --- tools -----------------------------------------------------------------------------


def fasteval(qrels: Path, runs: Path, measures: list[str], out: Path) -> Sample:
    cmd = [sys.executable, "-m", "fasteval.cli", "eval", str(qrels), str(runs), "-q"]
    for m in measures:
        cmd += ["-m", m]
    return measure([*cmd, "--format", "parquet", "-o", str(out)])


def pytrec(qrels: Path, runs: Path, measures: list[str], out: Path) -> Sample:
    cmd = [sys.executable, str(HERE / "peers.py"), "pytrec_eval", str(qrels), str(runs), str(out)]
    return measure(cmd, env={"PEERS_MEASURES": ",".join(measures)})


def trec_eval(binary: str, qrels: Path, runs: Path, measures: list[str]) -> Sample:
    names = MEASURES["trec_eval"] if measures == MEASURES["trec"] else [
        m.replace("_", ".", 1) if m.startswith(("P_", "recall_")) else m for m in measures
    ]  # fmt: skip
    args = [binary, "-q"]
    for m in names:
        args += ["-m", m]
    total = Sample(0.0, 0.0, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        plain_qrels = qrels
        if qrels.suffix == ".gz":  # trec_eval reads plain text only
            plain_qrels = Path(tmp) / "qrels.txt"
            with gzip.open(qrels, "rb") as a, open(plain_qrels, "wb") as b:
                shutil.copyfileobj(a, b)
        with open(os.devnull, "wb") as null:
            for f in [runs] if runs.is_file() else run_files(str(runs)):
                s = measure([*args, str(plain_qrels), str(f)], stdout=null.fileno())
                total = Sample(total.wall + s.wall, total.cpu + s.cpu, max(total.rss_mb, s.rss_mb))
    return total


def check_same_map(out: Path, peer_json: Path) -> float:
    """Largest |MAP difference| between fasteval's Parquet output and pytrec_eval's summary."""
    import polars as pl

    df = pl.read_parquet(out).filter((pl.col("query_id") == "all") & (pl.col("measure") == "map"))
    mine = dict(zip(df["run_id"].to_list(), df["value"].to_list(), strict=True))
    theirs = json.loads(peer_json.read_text())["map"]
    return max(abs(mine[k] - v) for k, v in theirs.items()) if theirs else float("nan")


def run(names: list[str], reps: int, tools: list[str], binary: str | None) -> list[dict]:
    rows = []
    for name in names:
        qrels, runs, measures = workload(name)
        lines = count_lines(runs)
        warm([qrels, runs])
        print(f"{name}: {lines:,} lines", file=sys.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            out, peer = Path(tmp) / "fe.parquet", Path(tmp) / "pytrec.json"
            samples: dict[str, list[Sample]] = {}
            for _ in range(reps):
                for tool in tools:
                    if tool == "pytrec_eval" and name == "trec8-parquet":
                        continue
                    if tool == "trec_eval" and (
                        binary is None or name in ("trec8-gz", "trec8-parquet")
                    ):
                        continue
                    if tool == "fasteval":
                        s = fasteval(qrels, runs, measures, out)
                    elif tool == "pytrec_eval":
                        s = pytrec(qrels, runs, measures, peer)
                    else:
                        assert binary is not None
                        s = trec_eval(binary, qrels, runs, measures)
                    samples.setdefault(tool, []).append(s)
                    print(f"  {tool}: {s.wall:.2f} s, {s.rss_mb:.0f} MB", file=sys.stderr)
            diff = (
                check_same_map(out, peer)
                if "pytrec_eval" in samples and "fasteval" in samples
                else float("nan")
            )
        rows += summarise(name, lines, samples, map_diff=diff)
    return rows


def summarise(name: str, lines: int, samples: dict[str, list[Sample]], **extra: Any) -> list[dict]:
    """One row per tool: the medians of its samples (wall, CPU, peak RSS)."""
    return [
        {
            "workload": name,
            "lines": lines,
            "tool": tool,
            "wall": statistics.median(s.wall for s in ss),
            "cpu": statistics.median(s.cpu for s in ss),
            "rss": statistics.median(s.rss_mb for s in ss),
            "n": len(ss),
            **extra,
        }
        for tool, ss in samples.items()
    ]


def table(rows: list[dict]) -> str:
    fe = {r["workload"]: r for r in rows if r["tool"] == "fasteval"}
    out = [
        "| workload | lines | tool | wall (s) | CPU (s) | peak RSS (MB) | RSS B/line "
        "| wall vs fasteval |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        base = fe.get(r["workload"])
        ratio = f"{r['wall'] / base['wall']:.2f}x" if base and r is not base else ""
        out.append(
            f"| {r['workload']} | {r['lines']:,} | {r['tool']} | {r['wall']:.2f} | "
            f"{r['cpu']:.2f} | {r['rss']:.0f} | {r['rss'] * 2**20 / r['lines']:.0f} | {ratio} |"
        )
    return "\n".join(out)


def commit() -> str:
    git = ["git", "-C", str(REPO)]
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True
    )
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", "fasteval"], check=False, capture_output=True
    )
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def write_section(body: str) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Results\n"
    start = text.find(SECTION)
    if start >= 0:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + body + (text[end:] if end >= 0 else "\n")
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    tmp = RESULTS.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, RESULTS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--workloads",
        default="trec8-text,trec8-gz,trec8-parquet,trec8-one,msmarco4",
        help="comma separated (see the module docstring)",
    )
    ap.add_argument("--reps", type=int, default=3, help="fresh processes per tool (median)")
    ap.add_argument("--tools", default="fasteval,pytrec_eval,trec_eval")
    ap.add_argument("--write", action="store_true", help="replace the section in RESULTS.md")
    ap.add_argument("--note", default="", help="a sentence for the section")
    ap.add_argument("--save", type=Path, help="also write the rows to this JSON file")
    ap.add_argument(
        "--add",
        type=Path,
        action="append",
        default=[],
        help="rows saved by an earlier --save (e.g. the peers, measured once) to show beside",
    )
    args = ap.parse_args(argv)
    binary = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")
    names = args.workloads.split(",")
    load0 = os.getloadavg()
    rows = run(names, args.reps, args.tools.split(","), binary) if args.tools else []
    rows_measured = bool(rows)
    load1 = os.getloadavg()
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1))
    for extra in args.add:
        rows += json.loads(extra.read_text())
    order = {n: i for i, n in enumerate(names)}
    rows.sort(key=lambda r: (order.get(r["workload"], len(order)), r["tool"] != "fasteval"))
    measured = (
        f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end"
        if rows_measured
        else "no new measurement"
    )
    added = f"; rows added from {', '.join(p.name for p in args.add)}" if args.add else ""
    body = "\n".join(
        [
            SECTION,
            "",
            f"`python benchmarks/archive_scale.py --workloads {args.workloads} "
            f"--reps {args.reps}` at {commit()}, {time.strftime('%Y-%m-%d')}; {measured}"
            f"{added}. Medians of {args.reps} fresh processes. {args.note}",
            "",
            table(rows),
            "",
        ]
    )
    print(body)
    if args.write:
        write_section(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
