"""Generate the synthetic benchmark archive: 100 runs x 50 queries x 1000 documents.

Deterministic from the seed it prints (``--seed`` to change it). Writes, under
``benchmarks/data/synthetic/`` (git-ignored):

* ``qrels.txt``: graded 0-2 judgments for 50 queries, built like a TREC pool:
  the union of the top 100 per query of two runs per group of five (40 runs),
  judged with the documents' latent grades, plus about half of the relevant
  documents the pool missed (as if found by manual runs); everything else a run
  retrieves is unjudged.
* ``runs/runNNN.txt``: 100 run files in TREC format (``qid Q0 docno rank score tag``),
  50 queries x 1000 documents each (5,000,000 lines).
* ``runs.parquet``: the same runs as one columnar archive, written by
  ``fasteval ingest`` (run ids from the tag column).
* ``manifest.json``: the seed and parameters, so ``run.py`` can tell a stale archive.

How the runs are made: each query has a candidate set of 20,000 documents from a
collection of 500,000 (TREC-like document ids of varying length), a latent grade
per document (5-600 relevant per query, about a third of them grade 2) and a
difficulty. A run scores every candidate as ``quality * difficulty * grade`` plus
a query-level prior shared by all runs, noise shared within its group of five
runs (like one site's variants) and its own noise; it returns its top 1000.
Scores are written with 4 decimals (every 10th run with 2, giving ties).

Usage (from anywhere): ``python benchmarks/generate.py [--seed N] [--force]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

DEFAULT_SEED = 20251122
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "data" / "synthetic"

PARAMS = {
    "n_runs": 100,
    "n_queries": 50,
    "depth": 1000,
    "collection": 500_000,
    "candidates": 20_000,
    "pool_depth": 100,
    "group_size": 5,
    "pooled_per_group": 2,
    "first_qid": 551,
    "version": 3,
}

PREFIXES = np.array(["FBIS3-", "FBIS4-", "FT911-", "FT923-", "LA010189-", "FR940104-0-"])


def doc_names(ids: np.ndarray) -> np.ndarray:
    """TREC-like document ids (varying length) for global document numbers."""
    prefix = PREFIXES[ids % len(PREFIXES)]
    num = (ids // len(PREFIXES)).astype(str)
    return np.char.add(prefix, num)


def manifest(seed: int) -> dict[str, object]:
    return {"seed": seed, **PARAMS}


def is_current(out: Path, seed: int) -> bool:
    """True when ``out`` holds a complete archive generated with these parameters."""
    m = out / "manifest.json"
    if not m.exists() or not (out / "runs.parquet").exists():
        return False
    try:
        return json.loads(m.read_text()) == manifest(seed)
    except ValueError:
        return False


def generate(out: Path, seed: int) -> None:
    p = PARAMS
    rng = np.random.default_rng(seed)
    n_runs, n_q, depth = p["n_runs"], p["n_queries"], p["depth"]
    n_cand, pool_depth = p["candidates"], p["pool_depth"]
    n_groups = n_runs // p["group_size"]

    quality = rng.uniform(0.5, 3.5, n_runs)
    group = np.arange(n_runs) // p["group_size"]
    decimals = np.where(np.arange(n_runs) % 10 == 9, 2, 4)
    run_names = [f"run{r + 1:03d}" for r in range(n_runs)]

    # per query: candidates, latent grades, scores of every run
    qids: list[str] = []
    top_docs = np.empty((n_runs, n_q, depth), dtype=np.int64)
    top_scores = np.empty((n_runs, n_q, depth), dtype=np.float64)
    qrels_parts = []
    for q in range(n_q):
        qid = str(p["first_qid"] + q)
        qids.append(qid)
        cand = np.sort(rng.choice(p["collection"], n_cand, replace=False))
        n_rel = int(np.clip(np.round(rng.lognormal(np.log(80), 0.9)), 5, 600))
        grade = np.zeros(n_cand, np.int32)
        rel_idx = rng.choice(n_cand, n_rel, replace=False)
        grade[rel_idx] = np.where(rng.random(n_rel) < 0.35, 2, 1)
        difficulty = rng.uniform(0.4, 1.4)
        prior = rng.normal(0.0, 1.0, n_cand) + 0.6 * grade
        group_noise = rng.normal(0.0, 0.8, (n_groups, n_cand))
        pooled = np.zeros(n_cand, bool)
        for r in range(n_runs):
            s = (
                quality[r] * difficulty * grade
                + prior
                + group_noise[group[r]]
                + rng.normal(0.0, 1.0, n_cand)
            )
            top = np.argpartition(-s, depth)[:depth]
            top = top[np.argsort(-s[top], kind="stable")]
            top_docs[r, q] = cand[top]
            top_scores[r, q] = np.round(10.0 + 2.5 * s[top], decimals[r])
            if r % p["group_size"] < p["pooled_per_group"]:
                pooled[top[:pool_depth]] = True
        extra = (grade > 0) & ~pooled & (rng.random(n_cand) < 0.5)
        judged = pooled | extra
        qrels_parts.append(
            pl.DataFrame(
                {
                    "query_id": qid,
                    "docno": doc_names(cand[judged]),
                    "relevance": grade[judged],
                }
            )
        )

    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)
    qrels = pl.concat(qrels_parts).sort(["query_id", "docno"])
    qrels.select("query_id", pl.lit("0").alias("iter"), "docno", "relevance").write_csv(
        out / "qrels.txt", separator=" ", include_header=False
    )

    runs_dir = out / "runs"
    runs_dir.mkdir(exist_ok=True)
    for f in runs_dir.glob("*.txt"):
        f.unlink()
    qid_col = np.repeat(np.array(qids), depth)
    rank_col = np.tile(np.arange(1, depth + 1), n_q)
    for r, name in enumerate(run_names):
        df = pl.DataFrame(
            {
                "query_id": qid_col,
                "q0": "Q0",
                "docno": doc_names(top_docs[r].ravel()),
                "rank": rank_col,
                "score": top_scores[r].ravel(),
                "tag": name,
            }
        )
        df.write_csv(
            runs_dir / f"{name}.txt",
            separator=" ",
            include_header=False,
            float_precision=int(decimals[r]),
        )
    n_rel_total = int((qrels["relevance"] > 0).sum())
    print(
        f"wrote {out}: qrels {qrels.height:,} judgments ({n_rel_total:,} relevant), "
        f"{n_runs} runs x {n_q} queries x {depth} docs",
        file=sys.stderr,
    )


def ingest(out: Path) -> None:
    """Pack the run files into ``runs.parquet`` with ``fasteval ingest``."""
    env = dict(os.environ)
    # run.py points PYTHONPATH at its snapshot of fasteval; the checkout comes after
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    # keep numba's cache out of the source tree
    env.setdefault("NUMBA_CACHE_DIR", str(HERE / "data" / ".numba_cache"))
    target = out / "runs.parquet"
    target.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "fasteval.cli", "ingest", str(out / "runs"), "-o", str(target)]
    subprocess.run(cmd, check=True, env=env)


# --- the MS MARCO passage dev shape ---------------------------------------------------------

MSMARCO = HERE / "data" / "msmarco"
MSMARCO_PARAMS = {
    "n_queries": 6980,
    "depth": 1000,
    "collection": 8_841_823,
    "version": 2,
}


def generate_msmarco(out: Path, seed: int, n_runs: int) -> None:
    """An MS MARCO passage dev-shaped archive: 6,980 queries, binary qrels with about
    1.07 relevant passages per query, integer passage ids, runs of depth 1000.

    Run ``r`` depends only on ``(seed, r)``, so the 4-run archive is the first four runs
    of the 50-run one (``runs4/`` holds hard links to them). Each run finds a query's
    relevant passage with a run-specific probability at a geometric rank, fills the rest
    with random passages, and writes BM25-like scores with 6 decimals (some ties).
    """
    p = MSMARCO_PARAMS
    n_q, depth = p["n_queries"], p["depth"]
    rng = np.random.default_rng([seed, 0])
    qids = np.sort(rng.choice(1_102_400, n_q, replace=False))
    n_rel = np.where(rng.random(n_q) < 0.97, 1, rng.integers(2, 5, n_q))  # ~1.07 per query
    rel_q = np.repeat(np.arange(n_q), n_rel)
    rel_pid = rng.integers(0, p["collection"], rel_q.size)
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)
    pl.DataFrame({"qid": qids[rel_q], "iter": 0, "pid": rel_pid, "rel": 1}).write_csv(
        out / "qrels.txt", separator=" ", include_header=False
    )
    runs_dir = out / "runs50"
    runs_dir.mkdir(exist_ok=True)
    first_rel = np.searchsorted(rel_q, np.arange(n_q))  # one relevant passage per query
    qid_col = np.repeat(qids, depth)
    rank_col = np.tile(np.arange(1, depth + 1), n_q)
    for r in range(n_runs):
        path = runs_dir / f"run{r + 1:02d}.txt"
        rr = np.random.default_rng([seed, 1, r])
        # distinct passages per query (a run file never repeats a document): increasing
        # offsets whose total stays below the collection size, wrapped, then shuffled
        step = rr.integers(1, p["collection"] // depth, (n_q, depth))
        start = rr.integers(0, p["collection"], (n_q, 1))
        pid = rr.permuted((start + np.cumsum(step, axis=1)) % p["collection"], axis=1)
        found = rr.random(n_q) < rr.uniform(0.55, 0.95)
        rank = np.minimum(rr.geometric(rr.uniform(0.05, 0.4), n_q) - 1, depth - 1)
        for q in np.flatnonzero(found):
            rel = rel_pid[first_rel[q]]
            row = pid[q]
            row[row == rel] = row[rank[q]]  # the relevant passage once, at its rank
            row[rank[q]] = rel
        score = 25.0 - np.cumsum(rr.exponential(0.02, (n_q, depth)), axis=1)
        score = np.round(score + rr.normal(0, 3, (n_q, 1)), 6 if r % 5 else 2)
        pl.DataFrame(
            {
                "qid": qid_col,
                "q0": "Q0",
                "pid": pid.ravel(),
                "rank": rank_col,
                "score": score.ravel(),
                "tag": f"msm{r + 1:02d}",
            }
        ).write_csv(path, separator=" ", include_header=False, float_precision=6)
    four = out / "runs4"
    four.mkdir(exist_ok=True)
    for f in sorted(runs_dir.glob("*.txt"))[:4]:
        (four / f.name).unlink(missing_ok=True)
        os.link(f, four / f.name)
    print(
        f"wrote {out}: {rel_q.size:,} relevant judgments for {n_q:,} queries, "
        f"{n_runs} runs x {n_q} queries x {depth} passages",
        file=sys.stderr,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="RNG seed (printed)")
    ap.add_argument("--out", type=Path, default=None, help="output folder")
    ap.add_argument("--force", action="store_true", help="regenerate even if up to date")
    ap.add_argument(
        "--shape",
        choices=["synthetic", "msmarco"],
        default="synthetic",
        help="synthetic: 100 runs x 50 queries x 1000; msmarco: the MS MARCO passage dev shape",
    )
    ap.add_argument("--runs", type=int, default=50, help="msmarco: number of runs")
    args = ap.parse_args(argv)
    if args.shape == "msmarco":
        out = args.out or MSMARCO
        want = {"seed": args.seed, "runs": args.runs, **MSMARCO_PARAMS}
        m = out / "manifest.json"
        if not args.force and m.exists() and json.loads(m.read_text()) == want:
            print(f"{out} is up to date (same seed and parameters)", file=sys.stderr)
            return 0
        t0 = time.perf_counter()
        generate_msmarco(out, args.seed, args.runs)
        m.write_text(json.dumps(want, indent=1) + "\n")
        print(f"done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        return 0
    args.out = args.out or OUT
    print(f"synthetic archive: seed {args.seed}", file=sys.stderr)
    if not args.force and is_current(args.out, args.seed):
        print(f"{args.out} is up to date (same seed and parameters)", file=sys.stderr)
        return 0
    t0 = time.perf_counter()
    generate(args.out, args.seed)
    ingest(args.out)
    (args.out / "manifest.json").write_text(json.dumps(manifest(args.seed), indent=1) + "\n")
    print(f"done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
