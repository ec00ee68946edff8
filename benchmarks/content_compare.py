"""Side-by-side timing of two code versions of the content layer (issue 18), one process each.

``python benchmarks/content_compare.py CODE_DIR gen`` writes the synthetic speed data
(``benchmarks/content.py``'s generator: 500,000 documents, 100,000 terms, 1,000 runs x 50
queries) once to ``--syn``; then ``speed`` times ``content_evaluate(..., "LMJS@20")`` (first
call, then the median of 5 warm calls) and ``study`` times the CF content study (map and
LMJS@20, all rates, 30 repetitions; after a small warm-up study) with the code in CODE_DIR.
An earlier commit is compared by exporting it, e.g.::

    git archive 5c30590 | tar -x -C /tmp/old && ln -s $PWD/benchmarks/data /tmp/old/benchmarks/
    python benchmarks/content_compare.py . gen
    for c in /tmp/old .; do python benchmarks/content_compare.py $c study; done
    for c in /tmp/old .; do python benchmarks/content_compare.py $c speed; done

Prints one JSON line (wall and CPU seconds, 1-minute load before and after, peak RSS) and
writes the results to ``--out`` so the versions' values can be compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("code", help="Repository root of the version to time.")
    ap.add_argument("what", choices=["gen", "speed", "study"])
    ap.add_argument("--syn", default="/tmp/fasteval_content_syn", help="Synthetic data folder.")
    ap.add_argument("--out", default="/tmp/fasteval_content_compare", help="Results folder.")
    args = ap.parse_args()
    code = str(Path(args.code).resolve())
    sys.path[:0] = [code, code + "/benchmarks"]
    import numpy as np
    import polars as pl

    syn, out_dir = Path(args.syn), Path(args.out)
    tag = Path(code).name
    if args.what == "gen":
        import content as bc  # benchmarks/content.py

        coll, qrels, runs = bc.synthetic(500_000, 100_000, 1000, 50, 100, 0)
        syn.mkdir(parents=True, exist_ok=True)
        for name in ("doc_off", "terms", "counts"):
            np.save(syn / f"{name}.npy", getattr(coll, name))
        qrels.write_parquet(syn / "qrels.parquet")
        runs.write_parquet(syn / "runs.parquet")
        return
    from fasteval.analysis import content as ac

    out_dir.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"code": code, "what": args.what, "load0": os.getloadavg()[0]}
    if args.what == "study":
        from fasteval.analysis.content_study import content_study

        d = Path(code) / "benchmarks/data/content/cf"
        src = (d / "qrels.txt", d / "runs", d / "collection.parquet")
        warm = ac.prepare_content(*src)
        content_study(None, None, None, ["map", "LMJS@20"], rates=[0.5], reps=2, data=warm)
        data = ac.prepare_content(*src)
        t0, c0 = time.perf_counter(), _cpu()
        r = content_study(None, None, None, ["map", "LMJS@20"], reps=30, data=data)
        res["study"] = (time.perf_counter() - t0, _cpu() - c0)
        r.summary.write_parquet(out_dir / f"study_{tag}.parquet")
    else:
        import pyarrow as pa

        from fasteval.io.collection import Collection

        ids = pa.array([f"D{i}" for i in range(500_000)], pa.large_string())
        arrays = [np.load(syn / f"{n}.npy") for n in ("doc_off", "terms", "counts")]
        coll = Collection(ids, *arrays, [f"t{i}" for i in range(100_000)])
        qrels = pl.read_parquet(syn / "qrels.parquet")
        runs = pl.read_parquet(syn / "runs.parquet")
        t0, c0 = time.perf_counter(), _cpu()
        ac.content_evaluate(qrels, runs, coll, "LMJS@20", per_query=False)
        res["first_call"] = (time.perf_counter() - t0, _cpu() - c0)
        warm_runs = []
        for _ in range(5):
            t0, c0 = time.perf_counter(), _cpu()
            table = ac.content_evaluate(qrels, runs, coll, "LMJS@20", per_query=False)
            warm_runs.append((time.perf_counter() - t0, _cpu() - c0))
        res["warm_median"] = (
            statistics.median(w for w, _ in warm_runs),
            statistics.median(c for _, c in warm_runs),
        )
        res["warm_all"] = warm_runs
        table.write_parquet(out_dir / f"speed_{tag}.parquet")
    res["load1"] = os.getloadavg()[0]
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(res))


if __name__ == "__main__":
    main()
