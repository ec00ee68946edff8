"""Diversity benchmark: fasteval vs pyndeval (ndeval 4.5) end to end, fresh processes.

Generates (seeded, printed) a synthetic Web-track-like archive under
``benchmarks/data/diversity/`` (git-ignored): 50 topics with 3-8 subtopics
(about 5), diversity qrels ``topic subtopic docno judgment`` over a pool of
judged documents per topic, and 100 TREC run files x 50 topics x 1000
documents (every 10th run with 2-decimal scores, i.e. many ties; the rank
column follows the scores). Then runs, each in its own fresh Python process
timed from outside (wall time and peak RSS via ``os.wait4``):

* ``fasteval``: ``diversity_evaluate(qrels, run_files)``, all 21 ndeval
  columns, numba cache cold (a fresh ``NUMBA_CACHE_DIR``) and warm;
* ``pyndeval``: the files parsed in Python, one ``RelevanceEvaluator``, each
  run evaluated (the documents handed over as ``-rank``, so pyndeval follows
  the rank column as ndeval does by default).

Both write their per-run ``amean`` values; the script reports the largest
difference. With ``--write-results`` it replaces its own section of
``benchmarks/RESULTS.md``.

Usage: ``python benchmarks/diversity.py [--seed N] [--reps 3] [--pyndeval-reps 1]
[--write-results]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "data" / "diversity"
DEFAULT_SEED = 20251123
N_RUNS, N_TOPICS, DEPTH = 100, 50, 1000


def generate(out: Path, seed: int) -> None:
    """Write qrels.txt and runs/runNNN.txt (deterministic from ``seed``)."""
    print(f"generating {out} with seed {seed}", file=sys.stderr)
    rng = np.random.default_rng(seed)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    n_cand = 4000
    qlines: list[str] = []
    topic_docs = []
    quality = rng.uniform(0.2, 1.5, N_RUNS)
    for t in range(N_TOPICS):
        qid = 201 + t
        m = int(rng.integers(3, 9))
        docs = np.array([f"clueweb12-{rng.integers(0, 2000):04d}wb-{i:05d}" for i in range(n_cand)])
        # latent relevance: each candidate is relevant to each subtopic with a small probability
        rel = rng.random((n_cand, m)) < rng.uniform(0.005, 0.04, m)
        grade = rel * rng.integers(1, 4, (n_cand, m))
        signal = rel.sum(axis=1)
        pool = np.flatnonzero((signal > 0) | (rng.random(n_cand) < 0.1))
        for i in pool:
            for s in range(m):
                qlines.append(f"{qid} {s + 1} {docs[i]} {int(grade[i, s])}\n")
        topic_docs.append((qid, docs, signal))
    (out / "qrels.txt").write_text("".join(qlines))
    for r in range(N_RUNS):
        lines = []
        for qid, docs, signal in topic_docs:
            score = quality[r] * signal + rng.normal(0, 1, docs.shape[0])
            score = np.round(score, 2 if r % 10 == 0 else 4)
            order = np.lexsort((-np.arange(docs.shape[0]), -score))[:DEPTH]
            tag = f"run{r:03d}"
            lines.extend(
                f"{qid} Q0 {docs[i]} {k + 1} {score[i]:.4f} {tag}\n" for k, i in enumerate(order)
            )
        (out / "runs" / f"run{r:03d}.txt").write_text("".join(lines))
    (out / "manifest.json").write_text(json.dumps({"seed": seed, "version": 1}))


# --------------------------------------------------------------------------- children


def child_fasteval(data: Path, result: Path) -> None:
    t0 = time.perf_counter()
    from fasteval.engine.diversity import diversity_evaluate

    runs = sorted(str(p) for p in (data / "runs").iterdir())
    df = diversity_evaluate(data / "qrels.txt", runs, per_query=True)
    allrows = df.filter(df["query_id"] == "all")
    vals = {f"{r}|{m}": v for r, _, m, v in allrows.iter_rows()}
    n_pq = df.height - allrows.height
    result.write_text(json.dumps({"t": time.perf_counter() - t0, "amean": vals, "n": n_pq}))


def child_pyndeval(data: Path, result: Path) -> None:
    t0 = time.perf_counter()
    import pyndeval

    qrels = []
    with open(data / "qrels.txt") as fh:
        for line in fh:
            q, s, d, g = line.split()
            qrels.append((q, s, d, int(g)))
    ev = pyndeval.RelevanceEvaluator(qrels)
    vals: dict[str, float] = {}
    n_pq = 0
    for p in sorted((data / "runs").iterdir()):
        recs = []
        run_id = None
        with open(p) as fh:
            for line in fh:
                q, _, d, rank, _score, run_id = line.split()
                recs.append((q, d, -float(rank)))
        res = ev.evaluate(recs)
        n_pq += sum(len(v) for v in res.values())
        for m in pyndeval.DEFAULT_MEASURES:
            name = m.replace("-IA", "_IA").replace("alpha-", "alpha_")
            vals[f"{run_id}|{name}"] = float(np.mean([v[m] for v in res.values()]))
    result.write_text(json.dumps({"t": time.perf_counter() - t0, "amean": vals, "n": n_pq}))


# --------------------------------------------------------------------------- parent


def run_child(tool: str, data: Path, cache: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        res = Path(tmp) / "out.json"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
        cmd = [sys.executable, __file__, "--child", tool, "--data", str(data), "--result", str(res)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            msg = f"{tool} child failed with status {status}"
            raise RuntimeError(msg)
        out = json.loads(res.read_text())
    out.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime, maxrss_mb=usage.ru_maxrss / 1024.0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--data", type=Path, default=OUT)
    ap.add_argument("--reps", type=int, default=3, help="warm fasteval repetitions")
    ap.add_argument("--pyndeval-reps", type=int, default=1)
    ap.add_argument("--write-results", action="store_true")
    ap.add_argument("--note", default="", help="a paragraph to add to the RESULTS.md section")
    ap.add_argument("--child", choices=["fasteval", "pyndeval"], help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        (child_fasteval if args.child == "fasteval" else child_pyndeval)(args.data, args.result)
        return 0
    man = args.data / "manifest.json"
    if not man.exists() or json.loads(man.read_text()).get("seed") != args.seed:
        shutil.rmtree(args.data, ignore_errors=True)
        generate(args.data, args.seed)
    print(f"seed {args.seed}; data {args.data}", file=sys.stderr)
    scratch = Path(tempfile.mkdtemp(prefix="fasteval-div-"))
    try:
        cold = run_child("fasteval", args.data, scratch / "cold")
        print(f"fasteval cold: {cold['wall']:.2f} s, {cold['maxrss_mb']:.0f} MB", file=sys.stderr)
        warm = []
        for i in range(args.reps):
            warm.append(run_child("fasteval", args.data, scratch / "cold"))
            print(f"fasteval warm #{i + 1}: {warm[-1]['wall']:.2f} s", file=sys.stderr)
        ref = []
        for i in range(args.pyndeval_reps):
            ref.append(run_child("pyndeval", args.data, scratch / "unused"))
            print(f"pyndeval #{i + 1}: {ref[-1]['wall']:.2f} s", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    a, b = warm[-1]["amean"], ref[-1]["amean"]
    diff = max(abs(a[k] - b[k]) for k in b)  # type: ignore[index]
    med = statistics.median(w["wall"] for w in warm)  # type: ignore[misc]
    pmed = statistics.median(r["wall"] for r in ref)  # type: ignore[misc]

    def cpu(xs: list[dict[str, object]]) -> float:
        return statistics.median(float(x["cpu"]) for x in xs)  # type: ignore[arg-type]

    pcpu = cpu(ref)
    rows = [
        ("fasteval", "warm", med, [w["wall"] for w in warm], cpu(warm), warm),
        ("fasteval", "cold", cold["wall"], [cold["wall"]], cpu([cold]), [cold]),
        ("pyndeval", "-", pmed, [r["wall"] for r in ref], pcpu, ref),
    ]
    with open(args.data / "qrels.txt") as fh:
        n_lines = sum(1 for _ in fh)
    table = [
        "| tool | numba cache | median s | min–max s | × pyndeval | CPU s | × pyndeval (CPU) "
        "| peak RSS MB | reps |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tool, cache, m, samples, c, xs in rows:
        rss = max(float(x["maxrss_mb"]) for x in xs)  # type: ignore[arg-type]
        table.append(
            f"| {tool} | {cache} | {m:.2f} | {min(samples):.2f}–{max(samples):.2f} | "
            f"{pmed / m:.1f} | {c:.2f} | {pcpu / c:.1f} | {rss:.0f} | {len(samples)} |"
        )
    import numba
    import polars

    text = "\n".join(
        [
            "<!-- results:diversity -->",
            f"## diversity: fasteval vs pyndeval ({N_RUNS} runs x {N_TOPICS} topics x "
            f"{DEPTH} docs, 3-8 subtopics per topic)",
            "",
            "Command (from the repository root): `python benchmarks/diversity.py --reps "
            f"{args.reps} --pyndeval-reps {args.pyndeval_reps} --write-results --note ...` "
            f"(seed {args.seed})",
            "",
            f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average at "
            f"the end {os.getloadavg()[0]:.1f}",
            f"- Machine: {os.cpu_count()} CPUs; Python {platform.python_version()}, numba "
            f"{numba.__version__}, polars {polars.__version__}",
            f"- Data: {n_lines:,} diversity qrels lines; {N_RUNS} TREC run files "
            f"({N_RUNS * N_TOPICS * DEPTH:,} lines); all 21 ndeval columns per (run, topic) "
            f"({int(warm[-1]['n']):,} values); ordering by the rank column (ndeval's default)",
            f"- Agreement: max abs difference of the per-run amean values = {diff:.3g}",
            "",
            *table,
            "",
            "*median s*: wall time of the whole child process (interpreter start, imports, reading "
            "the files, every value); fasteval *cold*: a fresh empty `NUMBA_CACHE_DIR` (every "
            "kernel compiles); *warm*: the cache the cold run filled; *× pyndeval*: pyndeval's "
            "median / this median; *CPU s*: user + system time of the child (median; fasteval "
            "runs on all cores, so on an idle machine its wall time is lower than its CPU time); "
            "*peak RSS*: `os.wait4` of the child.",
            *(["", args.note] if args.note else []),
            "<!-- /results:diversity -->",
        ]
    )
    print(text)
    if args.write_results:
        res = HERE / "RESULTS.md"
        cur = res.read_text()
        if "<!-- results:diversity -->" in cur:
            head, rest = cur.split("<!-- results:diversity -->", 1)
            tail = rest.split("<!-- /results:diversity -->", 1)[1]
            cur = head + text + tail
        else:
            cur = cur.rstrip("\n") + "\n\n" + text + "\n"
        res.write_text(cur)
    return 0


if __name__ == "__main__":
    sys.exit(main())
