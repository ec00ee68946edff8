"""Robustness-study and discriminative-power timings on TREC-8 (129 runs, 50 topics).

1. fasteval: ``fasteval.studies.subsample`` over 10 rates x 30 repetitions with
   MAP, nDCG and P@10 (300 re-evaluations of the whole archive), in one
   process after the inputs are prepared once and the kernels are warm.
2. The usual way: pytrec_eval re-evaluates every run for each qrels variant
   (a new ``RelevanceEvaluator`` per variant). Timed on a few variants and
   extrapolated to 300 (said so in the output).
3. Discriminative power (Sakai): all 8,256 run pairs x B = 1000 bootstrap
   resamples of per-query AP; and the full pair table (t-test, 1000 sign
   flips, 1000 bootstrap resamples).

Run from the repository root:
``python benchmarks/studies.py [--data ../shared/data/trec8_adhoc] [--pytrec-variants 3]``
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fasteval import studies  # noqa: E402
from fasteval.analysis import meta  # noqa: E402
from fasteval.analysis import variants as var  # noqa: E402
from fasteval.engine import compute, prepare  # noqa: E402
from fasteval.measures.parser import parse_measures  # noqa: E402

RATES = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
MEASURES = ["map", "ndcg", "P_10"]
PYTREC = {"map", "ndcg", "P_10"}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_runs_dicts(run_dir: Path) -> dict[str, dict[str, dict[str, float]]]:
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for f in sorted(run_dir.iterdir()):
        d: dict[str, dict[str, float]] = {}
        with gzip.open(f, "rt") as fh:
            for line in fh:
                q, _, doc, _, score, tag = line.split()[:6]
                d.setdefault(q, {})[doc] = float(score)
        runs[tag] = d
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
    ap.add_argument("--data", default=str(shared / "trec8_adhoc"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3, help="times to run the whole study")
    ap.add_argument("--pytrec-variants", type=int, default=3)
    ap.add_argument("--B", type=int, default=1000)
    args = ap.parse_args()
    data = Path(args.data)
    qrels, run_dir = data / "qrels.trec8.adhoc.gz", data / "runs"

    t0 = time.perf_counter()
    prep = prepare(qrels, run_dir)
    t_prep = time.perf_counter() - t0
    n_runs = len(prep.enc.run_names)
    t0 = time.perf_counter()
    studies.subsample(prepared=prep, measures=MEASURES, rates=[0.5], reps=1)
    t_first = time.perf_counter() - t0
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = studies.subsample(prepared=prep, measures=MEASURES, rates=RATES, reps=args.reps)
        times.append(time.perf_counter() - t0)
    n_var = len(RATES) * args.reps
    print(f"# TREC-8: {n_runs} runs, prepare {t_prep:.1f} s, first variant {t_first:.1f} s")
    print(
        f"fasteval study: {n_var} variants x {n_runs} runs x {len(MEASURES)} measures: "
        f"median {statistics.median(times):.2f} s (all: {', '.join(f'{t:.2f}' for t in times)}); "
        f"{statistics.median(times) / n_var * 1000:.1f} ms per variant; peak RSS {peak_mb():.0f} MB"
    )
    tau = res.summary.filter(res.summary["statistic"] == "tau")
    print(tau.select("setting", "measure", "mean", "ci_low", "ci_high", "min", "max"))

    # the usual way: a qrels dict per variant, every run re-evaluated
    import pytrec_eval

    t0 = time.perf_counter()
    runs = read_runs_dicts(run_dir)
    t_read = time.perf_counter() - t0
    qdf = var.variant_qrels(prep.qrels, prep.enc, np.ones(prep.enc.qr_rel.shape[0], bool))
    q_all = qdf["query_id"].to_list()
    d_all = qdf["doc_id"].to_list()
    r_all = qdf["relevance"].to_list()
    per = []
    rng = np.random.default_rng(0)
    for i in range(args.pytrec_variants):
        keep = var.subsample_mask(prep.enc, RATES[i % len(RATES)], rng)
        t0 = time.perf_counter()
        qv: dict[str, dict[str, int]] = {}
        for j in np.flatnonzero(keep):
            qv.setdefault(q_all[j], {})[d_all[j]] = r_all[j]
        ev = pytrec_eval.RelevanceEvaluator(qv, PYTREC)
        scores = {name: ev.evaluate(run) for name, run in runs.items()}
        per.append(time.perf_counter() - t0)
        del scores
    med = statistics.median(per)
    print(
        f"pytrec_eval: read runs into dicts once {t_read:.1f} s; per variant median {med:.2f} s "
        f"over {len(per)} variants -> {n_var} variants extrapolated {med * n_var:.0f} s "
        f"({med * n_var / statistics.median(times):.0f}x fasteval)"
    )

    # discriminative power over all pairs
    ev = compute(prep.enc, parse_measures(["map"]))
    X, _ = var.per_query_matrix(prep.enc, ev.values, ev.has_rows)
    X = np.ascontiguousarray(X[:, :, 0])
    meta.pair_tests(X[:3], B=10, R=10)  # compile
    n_pairs = n_runs * (n_runs - 1) // 2
    tt = []
    for _ in range(3):
        t0 = time.perf_counter()
        r = meta.pair_tests(X, B=args.B, R=0, seed=0)
        tt.append(time.perf_counter() - t0)
    dp = float((r["p_bootstrap"] < 0.05).mean())
    t2 = []
    for _ in range(3):
        t0 = time.perf_counter()
        meta.pair_tests(X, B=args.B, R=args.B, seed=0)
        t2.append(time.perf_counter() - t0)
    print(
        f"discriminative power (AP): {n_pairs} pairs x B={args.B}: median "
        f"{statistics.median(tt):.2f} s; power {dp:.3f}; with {args.B} randomisation flips too: "
        f"{statistics.median(t2):.2f} s"
    )


if __name__ == "__main__":
    main()
