"""Cost of the whole ``all_trec`` set against the core measures, on already-joined data.

Issue target: ``all_trec`` for all of TREC-8 within 2x of the core measure set — one
pass over each ranking, not one pass per measure. Reading and joining are done
once (``engine.prepare``) and excluded; the timed part is ``engine.compute`` (the
measure kernel plus aggregation), median of ``--reps`` calls after a warm-up,
the two sets interleaved so that a change in the machine's load hits both.

Run from the repository root: ``python benchmarks/all_trec.py --reps 7``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import warnings  # noqa: E402

from fasteval.engine import compute, prepare  # noqa: E402
from fasteval.measures.parser import parse_measures  # noqa: E402
from fasteval.options import EvalOptions  # noqa: E402

CORE = ["map", "P_10", "ndcg_cut_10", "recall_100", "recip_rank", "bpref", "ndcg"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--compat", type=int, default=10)
    args = ap.parse_args()
    shared = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
    t8 = shared / "trec8_adhoc"
    prep = prepare(t8 / "qrels.trec8.adhoc.gz", [t8 / "runs"], compat=args.compat)
    sets = []
    for label, names in [("core (7 measures)", CORE), ("all_trec", ["all_trec"])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # all_trec: relstring is left out (documented)
            mset = parse_measures(names, compat=args.compat)
        compute(prep.enc, mset, EvalOptions(compat=args.compat))  # warm-up (loads the numba cache)
        sets.append((label, mset, []))
    # interleaved (core, all_trec, core, ...) so that load drifts hit both alike
    for _ in range(args.reps):
        for _, mset, times in sets:
            t0 = time.perf_counter()
            compute(prep.enc, mset, EvalOptions(compat=args.compat))
            times.append(time.perf_counter() - t0)
    core_t = sets[0][2]
    print(f"load average {os.getloadavg()[0]:.1f}; {args.reps} interleaved repetitions")
    print("| measure set | columns | median compute (s) | vs core (ratio of medians) |")
    print("|---|---|---|---|")
    for label, mset, times in sets:
        med = statistics.median(times)
        print(f"| {label} | {len(mset)} | {med:.3f} | {med / statistics.median(core_t):.2f}x |")
    pair = [a / c for a, c in zip(sets[1][2], core_t, strict=True)]
    print(f"\nmedian of the per-repetition ratios all_trec / core: {statistics.median(pair):.2f}x")


if __name__ == "__main__":
    main()
