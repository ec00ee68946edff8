"""How end-to-end time grows with the archive: 100, 200, 400, ... runs of the synthetic set.

``run.py`` measures one archive size, where a fresh fasteval process spends about a second
on fixed costs (start-up, imports, numba's first dispatch; see RESULTS.md). This script
makes archives of ``k`` copies of the synthetic archive (b) (each copy's run tags get a
``_k`` suffix: same qrels, ``100 * k`` runs, ``5M * k`` lines) and times, each in a fresh
process with the page cache warmed, interleaved over the repetitions:

* ``fasteval eval QRELS RUNS -q -m ... --format parquet -o OUT`` from the text files and
  from a Parquet archive (made by ``fasteval ingest``, not timed), warm numba cache;
* pytrec_eval, done the usual way (``peers.py pytrec_eval``);
* the trec_eval binary, one process per run file, where one is found (``$TREC_EVAL`` or
  ``PATH``).

All tools compute the seven per-query measures of ``peers.MEASURES``; the MAP of every run
is checked against pytrec_eval. Prints a Markdown table (medians, ratios, peak RSS) and,
with ``--write-results``, puts it into ``benchmarks/RESULTS.md``.

Run from the repository root: ``python benchmarks/scaling.py --factors 1,2,4 --reps 3``
(needs ``python benchmarks/generate.py`` first; the copies go to
``benchmarks/data/scaling/``, git-ignored).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from harness.report import write_results  # noqa: E402
from peers import MEASURES, parse_trec_eval_output, run_files  # noqa: E402

SYNTHETIC = HERE / "data" / "synthetic"
SCALED = HERE / "data" / "scaling"


def make_archive(k: int, *, parquet: bool = True) -> tuple[Path, Path]:
    """``k`` copies of the synthetic runs (text folder; with ``parquet``, also a
    ``fasteval ingest`` archive of them); each built once."""
    root = SCALED / f"x{k}"
    runs, archive = root / "runs", root / "runs.parquet"
    src = run_files(str(SYNTHETIC / "runs"))
    done = root / "done"
    if not (done.exists() and done.read_text() == str(len(src) * k)):
        shutil.rmtree(root, ignore_errors=True)
        runs.mkdir(parents=True)
        for c in range(1, k + 1):
            for f in src:
                if c == 1:
                    os.link(f, runs / f.name)  # the originals, unchanged
                    continue
                with open(f) as fh, open(runs / f"{f.stem}_{c}{f.suffix}", "w") as out:
                    for line in fh:
                        head, tag = line.rstrip("\n").rsplit(None, 1)
                        out.write(f"{head} {tag}_{c}\n")
        done.write_text(str(len(src) * k))
    if parquet and not archive.exists():
        cmd = [sys.executable, "-m", "fasteval.cli", "ingest", str(runs), "-o", str(archive)]
        subprocess.run(cmd, check=True, env=_env(), stdout=subprocess.DEVNULL)
    return runs, archive


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _warm_cache(paths: list[Path]) -> None:
    """Read the inputs once so that every tool finds them in the page cache."""
    for p in paths:
        for f in [p] if p.is_file() else run_files(str(p)):
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def _timed(cmd: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process; raises if it fails."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=_env())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        msg = f"{' '.join(cmd[:4])} ... failed: {err.strip().splitlines()[-1:]}"
        raise RuntimeError(msg)
    return wall, usage.ru_maxrss / 1024.0


def fasteval_cli(qrels: Path, runs: Path, out: Path) -> tuple[float, float, dict[str, float]]:
    import polars as pl

    cmd = [sys.executable, "-m", "fasteval.cli", "eval", str(qrels), str(runs), "-q"]
    for m in MEASURES["trec"]:
        cmd += ["-m", m]
    wall, rss = _timed([*cmd, "--format", "parquet", "-o", str(out)])
    df = pl.read_parquet(out).filter((pl.col("query_id") == "all") & (pl.col("measure") == "map"))
    return wall, rss, dict(zip(df["run_id"].to_list(), df["value"].to_list(), strict=True))


def pytrec(qrels: Path, runs: Path, out: Path) -> tuple[float, float, dict[str, float]]:
    import json

    cmd = [sys.executable, str(HERE / "peers.py"), "pytrec_eval", str(qrels), str(runs), str(out)]
    wall, rss = _timed(cmd)
    return wall, rss, json.loads(out.read_text())["map"]


def trec_eval(binary: str, qrels: Path, runs: Path) -> tuple[float, float, dict[str, float]]:
    args = [binary, "-q", "-m", "runid"]
    for m in MEASURES["trec_eval"]:
        args += ["-m", m]
    maps: dict[str, float] = {}
    wall = peak = 0.0
    with tempfile.TemporaryFile() as out:
        for path in run_files(str(runs)):
            out.seek(0)
            out.truncate()
            w, rss = _timed([*args, str(qrels), str(path)], stdout=out.fileno())
            wall += w
            peak = max(peak, rss)
            out.seek(0)
            run_id, value = path.name, float("nan")
            for meas, q, v in parse_trec_eval_output(out.read().decode()):
                if q == "all" and meas == "runid":
                    run_id = v
                elif q == "all" and meas == "map":
                    value = float(v)
            maps[run_id] = value
    return wall, peak, maps


def _commit() -> str:
    """The checked-out commit (and whether fasteval/ has uncommitted changes)."""
    git = ["git", "-C", str(REPO)]
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True
    )
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", "fasteval"], check=False, capture_output=True
    )
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factors", default="1,2,4", help="copies of the 100-run archive")
    ap.add_argument("--reps", type=int, default=3, help="fresh processes per tool and size")
    ap.add_argument("--no-trec-eval", action="store_true", help="skip the trec_eval binary")
    ap.add_argument("--write-results", action="store_true", help="update RESULTS.md")
    args = ap.parse_args()
    factors = [int(x) for x in args.factors.split(",")]
    qrels = SYNTHETIC / "qrels.txt"
    if not qrels.exists():
        sys.exit("no synthetic archive: run `python benchmarks/generate.py` first")
    binary = None if args.no_trec_eval else os.environ.get("TREC_EVAL") or shutil.which("trec_eval")
    started = dt.datetime.now(dt.timezone.utc)
    load0 = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for k in factors:
            runs, parquet = make_archive(k)
            # one untimed call fills the numba cache and imports for this tree
            fasteval_cli(qrels, SYNTHETIC / "runs.parquet", scratch / "warm.parquet")
            tools = {
                "fasteval CLI, text": lambda r=runs: fasteval_cli(qrels, r, scratch / "o.parquet"),
                "fasteval CLI, Parquet": lambda p=parquet: fasteval_cli(
                    qrels, p, scratch / "o.parquet"
                ),
                "pytrec_eval": lambda r=runs: pytrec(qrels, r, scratch / "p.json"),
            }
            if binary:
                tools["trec_eval"] = lambda r=runs: trec_eval(binary, qrels, r)
            got: dict[str, list[tuple[float, float, dict[str, float]]]] = {t: [] for t in tools}
            for i in range(args.reps):
                names = list(tools)
                names = names[i % len(names) :] + names[: i % len(names)]
                for name in names:
                    _warm_cache([qrels, runs, parquet])
                    got[name].append(tools[name]())
                    print(f"x{k} {name}: {got[name][-1][0]:.2f} s", file=sys.stderr)
            ref = got["pytrec_eval"][-1][2]
            for name, samples in got.items():
                maps = samples[-1][2]
                diff = max(abs(maps[r] - ref[r]) for r in ref) if set(maps) == set(ref) else None
                rows.append((k, name, samples, diff))
    n_runs = len(run_files(str(SYNTHETIC / "runs")))
    table = [
        "| runs | lines | tool | median s | min–max s | × pytrec_eval | peak RSS MB "
        "| max abs diff of MAP vs pytrec_eval |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for k in factors:
        base = statistics.median(
            s[0] for s in next(r[2] for r in rows if r[:2] == (k, "pytrec_eval"))
        )
        for kk, name, samples, diff in rows:
            if kk != k:
                continue
            walls = [s[0] for s in samples]
            med = statistics.median(walls)
            d = "runs differ" if diff is None else f"{diff:.3g}"
            table.append(
                f"| {n_runs * k} | {5 * k}M | {name} | {med:.2f} "
                f"| {min(walls):.2f}–{max(walls):.2f} | {base / med:.2f} "
                f"| {max(s[1] for s in samples):.0f} | {d} |"
            )
    cmd = "python benchmarks/scaling.py " + " ".join(sys.argv[1:])
    text = "\n".join(
        [
            "<!-- results:scaling -->",
            "## Scaling with the archive: 100 to "
            f"{n_runs * max(factors)} runs of the synthetic set (`benchmarks/scaling.py`)",
            "",
            f"Command (from the repository root): `{cmd}`",
            "",
            f"- Date: {started:%Y-%m-%d %H:%M} UTC; 1-min load average {load0:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end",
            f"- fasteval @ {_commit()}",
            f"- {args.reps} fresh processes per tool and size, interleaved, page cache warmed "
            "before each; fasteval's numba cache warm",
            "- Archives: k copies of the synthetic archive (b), run tags suffixed `_k`, the same "
            "qrels; Parquet archives made by `fasteval ingest` (not timed)",
            "",
            *table,
            "",
            "*× pytrec_eval*: pytrec_eval's median / this median at the same size. trec_eval "
            "prints 4 decimals and ranks by float64 scores, hence its small MAP differences.",
            "<!-- /results:scaling -->",
        ]
    )
    print(text)
    if args.write_results:
        write_results("scaling", text)


if __name__ == "__main__":
    main()
