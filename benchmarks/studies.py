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
4. With ``--scorers``: 30-variant studies with the other scorers (RIC, HSA +
   DO on TREC-8; alpha-nDCG@20 + ERR-IA@20 on the TREC Web 2012 baseline runs).

The inputs are read into the compact form studies hold
(``fasteval.engine.compact.prepare_compact``, batch by batch) or, with
``--prepare full``, into the whole ``Prepared`` (RunColumns + full-width
``Encoded``) as before issue 20. ``--study-only`` stops after the study, so
the peak RSS printed (and ``/usr/bin/time -v``'s) is the study's own.

Wall times on a shared machine depend on the other jobs, so every timing is
printed with the process CPU time (user + system, all threads) beside it and
the 1-minute load average before and after.

Run from the repository root:
``python benchmarks/studies.py [--data ../shared/data/trec8_adhoc] [--pytrec-variants 3]
[--scorers] [--prepare compact|full] [--study-only]``
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

from fasteval.analysis import studies  # noqa: E402
from fasteval.analysis import variants as var  # noqa: E402
from fasteval.analysis.statistics import pair_tests  # noqa: E402
from fasteval.engine import compute, prepare  # noqa: E402
from fasteval.engine.compact import Compact, prepare_compact  # noqa: E402
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


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def array_mb(prep) -> float:
    """MB of the prepared arrays (per position, per group, qrels; RunColumns when full)."""
    if isinstance(prep, Compact):
        return prep.nbytes / 1e6
    held = [v for v in vars(prep.enc).values() if isinstance(v, np.ndarray)]
    r = prep.runs
    held += [r.doc.buf, r.doc.starts, r.doc.ends, r.qid.buf, r.qid.starts, r.qid.ends]
    held += [r.score, r.run, np.asarray(r.rank.buffers()[1] or b"")]
    held += [a for a in (r.source.file_of_row, r.source.line_of_row) if a is not None]
    return sum(a.nbytes for a in held) / 1e6


def stages(prep, n: int = 20) -> str:
    """CPU ms per variant of each stage (mask, re-grade, score, compare), one thread's view."""
    from fasteval.analysis import studies as st

    sc = var.AdhocScorer(MEASURES)
    masker = getattr(var, "Masker", None)  # absent before the speed-up: apply_mask
    m = masker(prep.enc, with_jdx=False) if masker else (lambda k: var.apply_mask(prep.enc, k))
    full = sc(m.full() if hasattr(m, "full") else prep.enc)
    tot = dict.fromkeys(("mask", "regrade", "score", "compare"), 0.0)
    fns = st.STATISTICS
    for i in range(n):
        c = time.process_time()
        keep = var.subsample_mask(prep.enc, RATES[i % len(RATES)], np.random.default_rng(i))
        c1 = time.process_time()
        ev = m(keep)
        c2 = time.process_time()
        v = sc(ev)
        c3 = time.process_time()
        for j in range(len(MEASURES)):
            for f in fns.values():
                f(full[:, j], v[:, j])
        c4 = time.process_time()
        for k, d in zip(tot, (c1 - c, c2 - c1, c3 - c2, c4 - c3), strict=True):
            tot[k] += d
    return ", ".join(f"{k} {t / n * 1000:.1f}" for k, t in tot.items())


def scorer_studies(args: argparse.Namespace, prep) -> None:
    rates = [0.1, 0.3, 0.5]
    for label, kw in (
        ("RIC", {"prepared": prep, "measures": ["RIC"]}),
        ("HSA + DO", {"prepared": prep, "measures": ["HSA", "DO"]}),
    ):
        studies.subsample(rates=[0.5], reps=1, **kw)
        t0, c0 = time.perf_counter(), time.process_time()
        studies.subsample(rates=rates, reps=10, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"{label} study, 30 variants (TREC-8): {wall:.2f} s (CPU {cpu:.2f} s), load {load()}")
    web = Path(args.web)
    qrels = web / "qrels_topics" / "2012" / "qrels-for-ndeval.txt.gz"
    runs = sorted((web / "baseline_runs_2012").glob("*.gz"))
    if not qrels.exists():
        print(f"skipped diversity: {qrels} not found")
        return
    from fasteval.analysis.study_scorers import DiversityScorer

    sc = DiversityScorer.from_inputs(
        qrels, runs, ["alpha_nDCG@20", "ERR_IA@20"], run_id_from="filename"
    )
    studies.subsample(scorer=sc, rates=[0.5], reps=1)
    t0, c0 = time.perf_counter(), time.process_time()
    studies.subsample(scorer=sc, rates=rates, reps=10)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"diversity study (alpha_nDCG@20, ERR_IA@20), 30 variants, Web 2012, {len(runs)} runs: "
        f"{wall:.2f} s (CPU {cpu:.2f} s), load {load()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
    ap.add_argument("--data", default=str(shared / "trec8_adhoc"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3, help="times to run the whole study")
    ap.add_argument("--pytrec-variants", type=int, default=3)
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--scorers", action="store_true", help="also time RIC, HSA, diversity")
    ap.add_argument("--web", default=str(shared / "trec_web_2009_2014"))
    ap.add_argument("--prepare", choices=("compact", "full"), default="compact")
    ap.add_argument("--study-only", action="store_true", help="stop after the study")
    args = ap.parse_args()
    print(f"# load average at start {load()}; {os.cpu_count()} CPUs")
    data = Path(args.data)
    qrels, run_dir = data / "qrels.trec8.adhoc.gz", data / "runs"

    t0, c0 = time.perf_counter(), time.process_time()
    prep = prepare_compact(qrels, run_dir) if args.prepare == "compact" else prepare(qrels, run_dir)
    t_prep, c_prep = time.perf_counter() - t0, time.process_time() - c0
    rss_prep = peak_mb()
    n_runs = len(prep.enc.run_names)
    t0 = time.perf_counter()
    studies.subsample(prepared=prep, measures=MEASURES, rates=[0.5], reps=1)
    t_first = time.perf_counter() - t0
    times, cpus, loads = [], [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = studies.subsample(prepared=prep, measures=MEASURES, rates=RATES, reps=args.reps)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        loads.append(load())
    n_var = len(RATES) * args.reps
    print(
        f"# TREC-8: {n_runs} runs, prepare ({args.prepare}) {t_prep:.1f} s (CPU {c_prep:.1f} s), "
        f"arrays {array_mb(prep):.0f} MB, peak RSS after prepare {rss_prep:.0f} MB; "
        f"first variant {t_first:.1f} s"
    )
    print(
        f"fasteval study: {n_var} variants x {n_runs} runs x {len(MEASURES)} measures: "
        f"median {statistics.median(times):.2f} s (all: {', '.join(f'{t:.2f}' for t in times)}; "
        f"CPU {', '.join(f'{t:.2f}' for t in cpus)} s; load after each {', '.join(loads)}); "
        f"{statistics.median(times) / n_var * 1000:.1f} ms per variant; peak RSS {peak_mb():.0f} MB"
    )
    print(f"stages, CPU ms per variant: {stages(prep)}")
    tau = res.summary.filter(res.summary["statistic"] == "tau")
    print(tau.select("setting", "measure", "mean", "ci_low", "ci_high", "min", "max"))
    if args.study_only:
        return
    wide = prep.encoded() if isinstance(prep, Compact) else prep.enc

    # the usual way: a qrels dict per variant, every run re-evaluated
    import pytrec_eval

    t0 = time.perf_counter()
    runs = read_runs_dicts(run_dir)
    t_read = time.perf_counter() - t0
    qdf = var.variant_qrels(prep.qrels, prep.enc, np.ones(prep.enc.qr_rel.shape[0], bool))
    q_all = qdf["query_id"].to_list()
    d_all = qdf["doc_id"].to_list()
    r_all = qdf["relevance"].to_list()
    per, per_cpu = [], []
    rng = np.random.default_rng(0)
    for i in range(args.pytrec_variants):
        keep = var.subsample_mask(prep.enc, RATES[i % len(RATES)], rng)
        t0, c0 = time.perf_counter(), time.process_time()
        qv: dict[str, dict[str, int]] = {}
        for j in np.flatnonzero(keep):
            qv.setdefault(q_all[j], {})[d_all[j]] = r_all[j]
        ev = pytrec_eval.RelevanceEvaluator(qv, PYTREC)
        scores = {name: ev.evaluate(run) for name, run in runs.items()}
        per.append(time.perf_counter() - t0)
        per_cpu.append(time.process_time() - c0)
        del scores
    med = statistics.median(per) if per else float("nan")
    print(
        f"pytrec_eval: read runs into dicts once {t_read:.1f} s; per variant median {med:.2f} s "
        f"(CPU {', '.join(f'{t:.2f}' for t in per_cpu)} s) "
        f"over {len(per)} variants -> {n_var} variants extrapolated {med * n_var:.0f} s "
        f"({med * n_var / statistics.median(times):.0f}x fasteval)"
    )

    # discriminative power over all pairs
    ev = compute(wide, parse_measures(["map"]))
    X, _ = var.per_query_matrix(wide, ev.values, ev.has_rows)
    X = np.ascontiguousarray(X[:, :, 0])
    pair_tests(X[:3], B=10, R=10)  # compile
    n_pairs = n_runs * (n_runs - 1) // 2
    tt = []
    for _ in range(3):
        t0 = time.perf_counter()
        r = pair_tests(X, B=args.B, R=0, seed=0)
        tt.append(time.perf_counter() - t0)
    dp = float((r["p_bootstrap"] < 0.05).mean())
    t2 = []
    for _ in range(3):
        t0 = time.perf_counter()
        pair_tests(X, B=args.B, R=args.B, seed=0)
        t2.append(time.perf_counter() - t0)
    print(
        f"discriminative power (AP): {n_pairs} pairs x B={args.B}: median "
        f"{statistics.median(tt):.2f} s; power {dp:.3f}; with {args.B} randomisation flips too: "
        f"{statistics.median(t2):.2f} s"
    )
    if args.scorers:
        scorer_studies(args, prep)
    print(f"# load average at end {load()}")


if __name__ == "__main__":
    main()
