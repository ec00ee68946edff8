"""HSA and DO from normalised ranks vs MAP / P@10 / NDCG on submitted TREC runs.

For TREC-8 ad hoc (129 runs) and Robust 2003 (17 runs): DO and HSA of every
run from the normalised ranks of its judged documents (SPEC section 4,
defaults: 20 bins, pooled over queries), trec_eval's MAP, P_10 and ndcg of
the same runs, their Pearson and Spearman correlations over all runs and
their distribution over many random 7-run subsets; and the time of the
histogram step (cold = first call in the process, numba cache as found; warm =
median of the following calls) next to reading + joining the runs.

Run from the repository root::

    python benchmarks/hsa_ranked.py [--data ../shared/data] [--subsets 1000] [--reps 7]

Prints Markdown for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fasteval.analysis.correlation import pearson, spearman  # noqa: E402
from fasteval.analysis.hsa import histogram_analysis_prepared  # noqa: E402
from fasteval.engine import compute, prepare  # noqa: E402
from fasteval.measures.parser import parse_measures  # noqa: E402

MEASURES = ["map", "P_10", "ndcg"]


def collections(data: Path) -> list[tuple[str, Path, Path]]:
    return [
        (
            "TREC-8 ad hoc",
            data / "trec8_adhoc" / "qrels.trec8.adhoc.gz",
            data / "trec8_adhoc" / "runs",
        ),
        (
            "Robust 2003",
            data / "robust03_trectools" / "qrels.robust03.txt.gz",
            data / "robust03_trectools" / "runs",
        ),
    ]


def one(name: str, qrels: Path, runs: Path, subsets: int, reps: int, seed: int) -> str:
    t0 = time.perf_counter()
    prep = prepare(qrels, runs)
    t_prep = time.perf_counter() - t0
    mset = parse_measures(MEASURES)
    ev = compute(prep.enc, mset)
    t0 = time.perf_counter()
    df = histogram_analysis_prepared(prep)
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(reps):
        t0 = time.perf_counter()
        df = histogram_analysis_prepared(prep)
        warm.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    compute(prep.enc, mset)
    t_eval = time.perf_counter() - t0
    hsa = df["hsa"].to_numpy()
    do = df["do"].to_numpy()
    ok = np.isfinite(hsa) & np.isfinite(do)
    n = int(ok.sum())
    lines = [
        f"### {name}: {len(prep.enc.run_names)} runs, {len(np.unique(prep.enc.group_q))} queries",
        "",
        f"- read + join the runs (`prepare`, gzipped text): {t_prep:.2f} s; "
        f"histogram step for all runs: cold {cold:.3f} s, "
        f"warm median {statistics.median(warm):.4f} s (min {min(warm):.4f}, {reps} reps); "
        f"map + P_10 + ndcg for all runs (`compute`): {t_eval:.3f} s",
        f"- runs with defined HSA and DO: {n} of {len(hsa)}",
        "",
        "| pair | Pearson (all runs) | Spearman (all runs) | Spearman over random 7-run subsets: "
        "median [5%, 95%] | share of subsets with Spearman < 0 |",
        "|---|---:|---:|---|---:|",
    ]
    rng = np.random.default_rng(seed)
    idx = np.flatnonzero(ok)
    picks = [rng.choice(idx, size=7, replace=False) for _ in range(subsets)] if n >= 7 else []
    for j, m in enumerate(MEASURES):
        y = ev.summary[:, j]
        for label, x in (("HSA", hsa), ("DO", do)):
            p = pearson(x[ok], y[ok])
            s = spearman(x[ok], y[ok])
            sub = np.array([spearman(x[k], y[k]) for k in picks])
            sub = sub[np.isfinite(sub)]
            q = np.percentile(sub, [50, 5, 95]) if sub.size else [np.nan] * 3
            neg = float((sub < 0).mean()) if sub.size else np.nan
            lines.append(
                f"| {label} vs {m} | {p:.3f} | {s:.3f} | {q[0]:.3f} [{q[1]:.3f}, {q[2]:.3f}] | "
                f"{neg:.3f} |"
            )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data")),
    )
    ap.add_argument("--subsets", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--seed", type=int, default=20251122)
    a = ap.parse_args()
    print(f"random 7-run subsets: {a.subsets}, seed {a.seed}\n")
    for name, q, r in collections(a.data):
        if not q.exists():
            print(f"(skipped {name}: {q} not found)\n")
            continue
        print(one(name, q, r, a.subsets, a.reps, a.seed), flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
