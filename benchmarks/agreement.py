"""Time ``fasteval.agreement`` against a pytrec_eval + scipy loop (issue 46).

Ten judgment sets derived from TREC-8's official qrels (the simulated assessors of
``tests/oracle/test_agreement_trec8.py``), all 129 runs, map / ndcg_cut_10 / P_10,
B = 1000 bootstrap resamples. Each task runs in a fresh process that loads the inputs,
warms up with one unmeasured call and then times ``--calls`` calls in the same (warm)
process: wall (perf_counter) and CPU (process_time) per call, medians; peak RSS of the
process (``ru_maxrss``, inputs included).

* ``fasteval files``: ``fasteval.agreement(ref, sets, runs=<129 .gz files>)``, the runs
  read in every call;
* ``fasteval frame``: the same with the runs already loaded (``fasteval.load_runs``);
* ``pytrec_eval + scipy``: the runs parsed once into pytrec_eval's dicts (not timed);
  per set a ``RelevanceEvaluator`` over the 129 runs, then the same statistics with the
  usual tools: scikit-learn's ``cohen_kappa_score``, ``krippendorff.alpha``, scipy's
  ``kendalltau`` on each of the B resamples, naive tau_AP and RBO, ``ttest_rel``.

Usage (from the repository root)::

    python benchmarks/agreement.py [--data ../shared/data/trec8_adhoc] [--calls 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SETUP = r"""
import sys, time, gzip, resource, json
from pathlib import Path
sys.path.insert(0, REPO)
import numpy as np, polars as pl
import fasteval
from fasteval.analysis.agreement import simulate_assessor
from tests.oracle.test_agreement_trec8 import RATES
data = Path(DATA)
runs = sorted((data / "runs").iterdir())
ref = fasteval.load_qrels(data / "qrels.trec8.adhoc.gz")
sets = {f"a{i}": simulate_assessor(ref, flip_relevant=fr, flip_nonrelevant=fn, drop=d, seed=i)
        for i, (fr, fn, d) in enumerate(RATES)}
MEASURES = ["map", "ndcg_cut_10", "P_10"]
B = 1000


def measure(fn, calls):
    fn()  # warm-up: compiles, fills caches
    walls, cpus = [], []
    for _ in range(calls):
        t, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": walls, "cpu": cpus, "peak_mb": peak}))
"""

FASTEVAL = r"""
source = runs if MODE == "files" else fasteval.load_runs(runs)
measure(lambda: fasteval.agreement(ref, sets, runs=source, measures=MEASURES, B=B), CALLS)
"""

PEER = r"""
import pytrec_eval, scipy.stats, krippendorff
from sklearn.metrics import cohen_kappa_score
from tests.reference import agreement_naive as naive

def as_dict(q):
    out = {}
    for qid, doc, rel in q.iter_rows():
        out.setdefault(qid, {})[doc] = int(rel)
    return out

qrels = {"": as_dict(ref), **{k: as_dict(v) for k, v in sets.items()}}
frames = {"": ref, **sets}
run_dicts = []
for r in runs:
    with gzip.open(r, "rt") as f:
        run_dicts.append(pytrec_eval.parse_run(f))
names = [r.name for r in runs]
PT = {"map": "map", "ndcg_cut_10": "ndcg_cut_10", "P_10": "P_10"}

def evaluate(q):
    ev = pytrec_eval.RelevanceEvaluator(q, {"map", "ndcg_cut.10", "P.10"})
    per = [ev.evaluate(r) for r in run_dicts]
    qs = sorted(set().union(*per))
    return {
        m: (np.array([[p.get(x, {}).get(PT[m], 0.0) for x in qs] for p in per]), qs)
        for m in MEASURES
    }

def labels(a, b):
    with np.errstate(all="ignore"):
        k = cohen_kappa_score(a >= 1, b >= 1)
        lab = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
        w = cohen_kappa_score(a, b, weights="quadratic", labels=lab)
    try:
        al = krippendorff.alpha(
            reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal"
        )
    except ValueError:
        al = float("nan")
    return k, w, al

def run():
    scores = {k: evaluate(q) for k, q in qrels.items()}
    out = []
    for name in sets:
        both = ref.join(sets[name], on=["query_id", "doc_id"], suffix="_o")
        out.append(labels(both["relevance"].to_numpy(), both["relevance_o"].to_numpy()))
        for part in both.partition_by("query_id"):
            out.append(labels(part["relevance"].to_numpy(), part["relevance_o"].to_numpy()))
        for m in MEASURES:
            (Xr, qr), (Xo, qo) = scores[""][m], scores[name][m]
            shared = sorted(set(qr) & set(qo))
            Xr = Xr[:, [qr.index(x) for x in shared]]
            Xo = Xo[:, [qo.index(x) for x in shared]]
            mr, mo = Xr.mean(1), Xo.mean(1)
            tau = scipy.stats.kendalltau(mr, mo).statistic
            idx = np.random.default_rng(0).integers(0, len(shared), (B, len(shared)))
            taus = [
                scipy.stats.kendalltau(Xr[:, i].mean(1), Xo[:, i].mean(1)).statistic for i in idx
            ]
            lo, hi = np.quantile(taus, [0.025, 0.975])
            tr, to = naive.ranking(mr.tolist(), names), naive.ranking(mo.tolist(), names)
            out.append((tau, lo, hi, naive.tau_ap(tr, to), naive.rbo_ext(tr, to)))
            i, j = np.triu_indices(len(names), 1)
            with np.errstate(all="ignore"):
                pr = scipy.stats.ttest_rel(Xr[i], Xr[j], axis=1).pvalue
                po = scipy.stats.ttest_rel(Xo[i], Xo[j], axis=1).pvalue
            out.append(((pr < 0.05).sum(), (po < 0.05).sum()))
    return out

measure(run, CALLS)
"""


def task(body: str, data: Path, calls: int, **consts: str) -> dict[str, object]:
    head = f"REPO = {str(REPO)!r}\nDATA = {str(data)!r}\nCALLS = {calls}\n"
    head += "".join(f"{k} = {v!r}\n" for k, v in consts.items())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run(
        [sys.executable, "-c", head + SETUP + body],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    if res.returncode != 0:
        sys.exit(res.stderr)
    out: dict[str, object] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "trec8_adhoc")
    ap.add_argument("--calls", type=int, default=3, help="timed calls per task (after a warm-up)")
    ap.add_argument("--peer-calls", type=int, default=1)
    args = ap.parse_args()
    rows = [
        (
            "fasteval.agreement, runs from files",
            task(FASTEVAL, args.data, args.calls, MODE="files"),
        ),
        (
            "fasteval.agreement, runs as a frame",
            task(FASTEVAL, args.data, args.calls, MODE="frame"),
        ),
        ("pytrec_eval + scipy loop", task(PEER, args.data, args.peer_calls)),
    ]
    print("| task | median wall s | min-max wall s | median CPU s | peak RSS MB | calls |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows:
        w, c = r["wall"], r["cpu"]
        assert isinstance(w, list) and isinstance(c, list)
        print(
            f"| {name} | {statistics.median(w):.2f} | {min(w):.2f}-{max(w):.2f} | "
            f"{statistics.median(c):.2f} | {r['peak_mb']:.0f} | {len(w)} |"
        )


if __name__ == "__main__":
    main()
