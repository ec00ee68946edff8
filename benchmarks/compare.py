"""Time `fasteval compare` and the ir_measures provider against the usual peer pipelines.

Each task runs in a fresh process (wall, CPU = user + sys, peak RSS from ``os.wait4``);
medians over ``--reps``. Tasks, on TREC-8 (a baseline and 5 runs, map / ndcg_cut_10 / P_10):

* ``fasteval compare`` (CLI), paired t-test + Holm; and with the randomization test (B = 9999);
* peers: pytrec_eval per-query values + ``scipy.stats.ttest_rel`` + statsmodels' Holm, the
  pipeline people write by hand; and ``ir_measures.calc_aggregate`` (default providers) against
  the fasteval provider over the six runs for the measures the provider claims.

Usage (from the repository root)::

    python benchmarks/compare.py --data ../shared/data/trec8_adhoc --reps 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = ["INQ603", "CL99XT", "ok8alx", "Flab8as", "fub99a", "weaver1"]

PEER_T = """
import gzip, sys, numpy as np, pytrec_eval, scipy.stats
from statsmodels.stats.multitest import multipletests
qrels_path, *runs = sys.argv[1:]
with gzip.open(qrels_path, "rt") as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut", "P"})
per = []
for r in runs:
    with gzip.open(r, "rt") as f:
        per.append(ev.evaluate(pytrec_eval.parse_run(f)))
for m in ("map", "ndcg_cut_10", "P_10"):
    base = per[0]
    ps = []
    for other in per[1:]:
        qs = sorted(set(base) & set(other))
        ps.append(scipy.stats.ttest_rel([other[q][m] for q in qs], [base[q][m] for q in qs]).pvalue)
    print(m, multipletests(ps, method="holm")[1])
"""

IRM = """
import sys, ir_measures as irm
use_fasteval = sys.argv[1] == "fasteval"
qrels_path, *runs = sys.argv[2:]
ms = [irm.AP, irm.nDCG@10, irm.P@10, irm.R@100, irm.RR, irm.Bpref, irm.nDCG]
qrels = list(irm.read_trec_qrels(qrels_path))
if use_fasteval:
    from fasteval.ir_measures_provider import provider as calc
else:
    calc = irm
for r in runs:
    print(calc.calc_aggregate(ms, qrels, list(irm.read_trec_run(r)))[irm.AP])
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS MB of one fresh process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode() if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/trec8_adhoc"))
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    qrels = args.data / "qrels.trec8.adhoc.gz"
    runs = [str(args.data / "runs" / f"input.{r}.gz") for r in RUNS]
    env = dict(os.environ, PYTHONPATH=str(Path.cwd()))
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        peer_t = Path(tmp) / "peer_t.py"
        peer_t.write_text(PEER_T)
        irm = Path(tmp) / "irm.py"
        irm.write_text(IRM)
        cli = [py, "-m", "fasteval.cli", "compare", str(qrels), *runs, "-b", RUNS[0]]
        cli += ["-m", "map", "-m", "ndcg_cut_10", "-m", "P_10"]
        tasks = {
            "fasteval compare (t + Holm)": cli,
            "fasteval compare (randomization, B=9999)": [*cli, "--test", "randomization"],
            "pytrec_eval + scipy ttest_rel + statsmodels Holm": [
                py,
                str(peer_t),
                str(qrels),
                *runs,
            ],
            "ir_measures.calc_aggregate, default providers (7 measures x 6 runs)": [
                py,
                str(irm),
                "default",
                str(qrels),
                *runs,
            ],
            "ir_measures API, fasteval provider (7 measures x 6 runs)": [
                py,
                str(irm),
                "fasteval",
                str(qrels),
                *runs,
            ],
        }
        for cmd in tasks.values():  # warm the numba cache and the file cache
            timed(cmd, env)
        print("| task | median wall s | min-max wall s | median CPU s | peak RSS MB | reps |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, cmd in tasks.items():
            res = [timed(cmd, env) for _ in range(args.reps)]
            walls = [r[0] for r in res]
            print(
                f"| {name} | {statistics.median(walls):.2f} | {min(walls):.2f}-{max(walls):.2f} "
                f"| {statistics.median(r[1] for r in res):.2f} | {max(r[2] for r in res):.0f} "
                f"| {args.reps} |"
            )


if __name__ == "__main__":
    main()
