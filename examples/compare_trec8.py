"""Tutorial: TREC-8 runs from files to a comparison table and two figures.

Run from the repository root (the TREC-8 data lives next to the checkout)::

    python examples/compare_trec8.py ../shared/data/trec8_adhoc docs/img
"""

from __future__ import annotations

import sys
from pathlib import Path

import fasteval
from fasteval.plots.compare import per_query_differences, precision_recall

data = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/trec8_adhoc")
out = Path(sys.argv[2] if len(sys.argv) > 2 else ".")
out.mkdir(parents=True, exist_ok=True)
qrels = data / "qrels.trec8.adhoc.gz"
names = ["INQ603", "CL99XT", "ok8alx", "Flab8as", "fub99a", "weaver1"]
runs = [data / "runs" / f"input.{n}.gz" for n in names]

# 1. the table: every run against the baseline, paired t-test, Holm over each measure's 5 tests
cmp = fasteval.compare(qrels, runs, ["map", "ndcg_cut_10", "P_10"], baseline="INQ603")
print(cmp.to_markdown())
cmp.table.write_csv(out / "compare_trec8.csv")  # every number, full precision

# 2. per-query differences against the baseline, and the precision-recall curves
table = fasteval.evaluate(qrels, runs, ["map", "iprec_at_recall"])
per_query_differences(table, "INQ603", "map", out / "compare_diff.png", runs=names[:4])
precision_recall(table, out / "compare_pr.png")
print(f"wrote {out / 'compare_diff.png'} and {out / 'compare_pr.png'}")
