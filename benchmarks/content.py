"""Content-based evaluation (issue 18): speed, and Hui's Figure 3 study on the classic collections.

``speed``: LMJS@20 for 1,000 runs x 50 queries (100 documents per ranking,
5M rows) over a synthetic collection of 500,000 documents with a 100,000-term
vocabulary (Zipf-distributed terms, ~60 tokens per document). Timed in one
process: the first call (cold: numba's cache load or compile, and the joins)
and then the median of ``--reps`` warm calls, end to end from in-memory
polars frames (join of runs, qrels and collection included) and for the
scoring alone (ground truth + result models + divergences on prepared data).

``study``: ``content_study`` (map and LMJS@20; rates 0.05..1, 30 repetitions)
on every classic collection whose runs ``content_runs.py`` wrote, with its
summary table, figure and timings. Timings are printed with CPU time and the
1-minute load average: the machine is shared.

Run from the repository root::

    python benchmarks/content_runs.py            # once: runs + indexed collections
    python benchmarks/content.py speed [--reps 5]
    python benchmarks/content.py study [--only cf] [--reps 30]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fasteval.analysis import content as ac  # noqa: E402
from fasteval.analysis.content_study import content_study  # noqa: E402
from fasteval.io.collection import Collection  # noqa: E402
from fasteval.io.writers import write_qrels  # noqa: E402

OUT = REPO / "benchmarks" / "out" / "content"
FIG = REPO / "benchmarks" / "figures"
DATA = REPO / "benchmarks" / "data" / "content"
COLLECTIONS = ("cf", "cranfield", "cisi", "cacm", "med", "npl", "lisa")


def _commit() -> str:
    r = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return r.stdout.strip()


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(fn: Any) -> tuple[Any, float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, _cpu() - c0


# --------------------------------------------------------------------------- speed


def synthetic(
    n_docs: int, vocab: int, n_runs: int, n_q: int, depth: int, seed: int
) -> tuple[Collection, pl.DataFrame, pl.DataFrame]:
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    lens = rng.poisson(60, n_docs).astype(np.int64) + 1
    tok = (rng.zipf(1.3, int(lens.sum())) - 1) % vocab
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), lens)
    key = np.unique(doc * vocab + tok, return_counts=True)
    d, t = np.divmod(key[0], vocab)
    off = np.searchsorted(d, np.arange(n_docs + 1)).astype(np.int64)
    ids = pa.array([f"D{i}" for i in range(n_docs)], pa.large_string())
    coll = Collection(
        ids, off, t.astype(np.int32), key[1].astype(np.int32), [f"t{i}" for i in range(vocab)]
    )
    # qrels: per query 40 relevant, 160 judged non-relevant
    qs, ds, gs = [], [], []
    topical = []
    for q in range(n_q):
        pool = rng.choice(n_docs, 400, replace=False)
        topical.append(pool)
        qs += [str(q)] * 200
        ds += [f"D{x}" for x in pool[:200]]
        gs += [1] * 40 + [0] * 160
    qrels = pl.DataFrame({"query_id": qs, "doc_id": ds, "relevance": np.array(gs, np.int32)})
    # runs: each ranking mixes the query's topical pool with random documents
    n = n_runs * n_q * depth
    run = np.repeat(np.arange(n_runs), n_q * depth)
    q = np.tile(np.repeat(np.arange(n_q), depth), n_runs)
    from_pool = rng.random(n) < 0.5
    pick = np.where(
        from_pool,
        np.stack(topical)[q, rng.integers(0, 400, n)],
        rng.integers(0, n_docs, n),
    )
    runs = pl.DataFrame(
        {
            "run_id": pl.Series(np.char.add("r", run.astype(str))),
            "query_id": pl.Series(q.astype(str)),
            "doc_id": pl.Series(np.char.add("D", pick.astype(str))),
            "score": rng.random(n),
        }
    ).unique(["run_id", "query_id", "doc_id"], keep="first", maintain_order=True)
    return coll, qrels, runs


def speed(args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    coll, qrels, runs = synthetic(500_000, 100_000, 1000, 50, 100, args.seed)
    gen = time.perf_counter() - t0
    print(
        f"synthetic: {len(coll)} docs, {len(coll.vocabulary)} terms, {coll.terms.shape[0]} "
        f"postings; {runs.height} run rows; generated in {gen:.1f} s",
        flush=True,
    )
    load0 = os.getloadavg()[0]
    res: dict[str, Any] = {"rows": runs.height, "postings": int(coll.terms.shape[0])}
    _, w, c = _timed(lambda: ac.content_evaluate(qrels, runs, coll, "LMJS@20", per_query=False))
    res["end_to_end_cold"] = (w, c)
    print(f"content_evaluate cold: {w:.2f} s wall, {c:.2f} s CPU", flush=True)
    walls, cpus = [], []
    for _ in range(args.reps):
        _, w, c = _timed(lambda: ac.content_evaluate(qrels, runs, coll, "LMJS@20", per_query=False))
        walls.append(w)
        cpus.append(c)
    res["end_to_end_warm"] = (statistics.median(walls), statistics.median(cpus))
    print(f"content_evaluate warm (median of {args.reps}): {res['end_to_end_warm'][0]:.2f} s wall, "
          f"{res['end_to_end_warm'][1]:.2f} s CPU", flush=True)  # fmt: skip
    data, w, c = _timed(lambda: ac.prepare_content(qrels, runs, coll))
    res["prepare"] = (w, c)
    ms = ac.parse_content_measures("LMJS@20")
    walls, cpus = [], []
    for _ in range(args.reps):
        data.cache.clear()
        _, w, c = _timed(lambda: ac.score_groups(data, ms))
        walls.append(w)
        cpus.append(c)
    res["scoring_warm"] = (statistics.median(walls), statistics.median(cpus))
    sw = res["scoring_warm"]
    print(f"prepare (join): {res['prepare'][0]:.2f} s; scoring warm: {sw[0]:.2f} s wall, "
          f"{sw[1]:.2f} s CPU", flush=True)  # fmt: skip
    res["load"] = (load0, os.getloadavg()[0])
    res["peak_rss_mb"] = _rss_mb()
    return res


# --------------------------------------------------------------------------- study


def pooled_qrels(d: Path, depth: int) -> Path:
    """The judgments plus every depth-``depth`` pooled document they do not list, as grade 0.

    The classic collections list relevant documents only (every other document
    is taken as non-relevant). A TREC-style pool makes those implicit
    judgments explicit, so that subsampling keeps judged non-relevant
    documents and label completion has negatives to fit its threshold on.
    """
    from fasteval.io.tables import load_qrels, load_runs

    out = d / f"qrels_pool{depth}.txt"
    q = load_qrels(d / "qrels.txt").select("query_id", "doc_id", "relevance")
    r = load_runs(d / "runs")
    top = (
        r.sort(["run_id", "query_id", "score", "doc_id"], descending=[False, False, True, True])
        .group_by(["run_id", "query_id"], maintain_order=True)
        .head(depth)
        .select("query_id", "doc_id")
        .unique()
        .join(q.select("query_id").unique(), on="query_id")
        .join(q, on=["query_id", "doc_id"], how="anti")
        .with_columns(pl.lit(0, pl.Int32).alias("relevance"))
    )
    both = pl.concat([q.with_columns(pl.col("relevance").cast(pl.Int32)), top]).sort(
        ["query_id", "doc_id"]
    )
    write_qrels(both, out)
    return out


def study(args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    for name in args.only.split(","):
        d = DATA / name
        if not (d / "runs").exists():
            print(f"{name}: no runs (run benchmarks/content_runs.py first)", file=sys.stderr)
            continue
        tag = f"{name}_pool{args.pool}" if args.pool else name
        qrels = pooled_qrels(d, args.pool) if args.pool else d / "qrels.txt"
        odir = OUT / f"study_{tag}"
        if odir.exists() and args.fresh:
            import shutil

            shutil.rmtree(odir)
        load0 = os.getloadavg()[0]
        data, wp, _ = _timed(
            lambda d=d, qrels=qrels: ac.prepare_content(qrels, d / "runs", d / "collection.parquet")
        )
        r, w, c = _timed(
            lambda data=data, odir=odir: content_study(
                None,
                None,
                None,
                ["map", "LMJS@20"],
                reps=args.reps,
                seed=args.seed,
                data=data,
                out_dir=None if args.no_save else odir,
            )
        )
        from fasteval.plots.content import plot_content_study

        pooled = f" + depth-{args.pool} pool as non-relevant" if args.pool else ""

        FIG.mkdir(parents=True, exist_ok=True)
        plot_content_study(
            r.summary,
            FIG / f"content_study_{tag}.png",
            title=f"{name.upper()}{pooled}: {len(data.enc.run_names)} runs, "
            f"{int(np.sum(np.diff(data.enc.qr_off) > 0))} queries, {args.reps} reps",
        )
        tau = r.summary.filter(pl.col("statistic") == "tau").select(
            "x", "measure", "mean", "ci_low", "ci_high", "min", "max"
        )
        tau.write_csv(FIG / f"content_study_{tag}.csv")
        rec = {
            "name": tag,
            "runs": len(data.enc.run_names),
            "queries": int(np.sum(np.diff(data.enc.qr_off) > 0)),
            "prepare_s": wp,
            "study_s": w,
            "study_cpu_s": c,
            "load": (load0, os.getloadavg()[0]),
            "tau": tau.to_dicts(),
        }
        print(
            f"{name}: prepare {wp:.1f} s, study {w:.1f} s wall / {c:.1f} s CPU "
            f"(load {load0:.1f} -> {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True):
            print(tau.filter(pl.col("x").is_in([0.05, 0.1, 0.2, 0.3, 0.5, 1.0])))
        out.append(rec)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("what", choices=["speed", "study"])
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default=",".join(COLLECTIONS))
    ap.add_argument("--fresh", action="store_true", help="Delete saved study units first.")
    ap.add_argument("--no-save", action="store_true", help="Do not save units (pure timing).")
    ap.add_argument(
        "--pool",
        type=int,
        default=0,
        help="Study on the qrels plus the depth-N pool as explicit non-relevant judgments.",
    )
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.what == "speed":
        args.reps = args.reps or 5
        res: Any = speed(args)
    else:
        args.reps = args.reps or 30
        res = study(args)
    meta = {"commit": _commit(), "argv": sys.argv, "result": res}
    suffix = f"_pool{args.pool}" if args.what == "study" and args.pool else ""
    (OUT / f"{args.what}{suffix}.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
