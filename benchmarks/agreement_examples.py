"""The worked examples of docs/agreement.md on real data (issue 46).

1. CF (Shaw, Wood, Wood & Tibbo 1991): four judges graded every listed (query,
   document) pair 0/1/2. Each judge's grades become one qrels; the runs are the
   content layer's retrieval models (``benchmarks/content_runs.py --only cf``). The
   first judge (REW, an author) is the reference; the other three are compared with it.
2. TREC-8 ad hoc: the official qrels against simulated second assessors, judgments
   flipped and dropped at controlled rates (``simulate_assessor``), all 129 runs.

Run from the repository root (the data stays in ../shared/data)::

    python benchmarks/content_runs.py --data ../shared/data --only cf
    python benchmarks/agreement_examples.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fasteval  # noqa: E402
from fasteval.analysis.agreement import simulate_assessor  # noqa: E402

JUDGES = ("REW", "colleagues", "postdoc", "JBW")  # the order of the digits in cfquery


def cf_judges(cfquery: Path) -> dict[str, pl.DataFrame]:
    """One qrels per CF judge: every listed (query, document) pair with that judge's grade."""
    rows: list[tuple[str, str, tuple[int, ...]]] = []
    for blk in re.split(r"^QN ", cfquery.read_text(encoding="latin-1"), flags=re.M)[1:]:
        fields = re.split(r"^([A-Z]{2}) ", "QN " + blk, flags=re.M)
        f = {fields[i]: fields[i + 1] for i in range(1, len(fields) - 1, 2)}
        q = str(int(f["QN"].split()[0]))
        toks = f["RD"].split()
        for doc, code in zip(toks[::2], toks[1::2], strict=True):
            rows.append((q, str(int(doc)), tuple(int(c) for c in code)))
    return {
        judge: pl.DataFrame(
            {
                "query_id": [r[0] for r in rows],
                "doc_id": [r[1] for r in rows],
                "relevance": [r[2][k] for r in rows],
            }
        )
        for k, judge in enumerate(JUDGES)
    }


def show(title: str, df: pl.DataFrame) -> None:
    print(f"## {title}")
    with pl.Config(tbl_rows=40, tbl_cols=20, tbl_width_chars=200, float_precision=3):
        print(df)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("-B", type=int, default=1000)
    args = ap.parse_args()

    judges = cf_judges(args.data / "classic" / "cf" / "cfquery")
    runs = REPO / "benchmarks" / "data" / "content" / "cf" / "runs"
    ref = judges["REW"]
    others = {k: v for k, v in judges.items() if k != "REW"}
    res = fasteval.agreement(
        ref, others, runs=runs, measures=["map", "P_10", "ndcg_cut_10"], B=args.B
    )
    show("CF labels (overall)", res.labels.filter(pl.col("query_id").is_null()).drop("query_id"))
    show("CF rankings", res.rankings.drop("n_systems"))
    show("CF significance", res.significance)
    show("CF rank intervals (map, REW)", fasteval.rank_intervals(ref, runs, "map", B=args.B))

    trec8 = args.data / "trec8_adhoc"
    qrels = fasteval.load_qrels(trec8 / "qrels.trec8.adhoc.gz")
    sets = {
        f"flip{int(100 * fr)}_drop{int(100 * d)}": simulate_assessor(
            qrels, flip_relevant=fr, flip_nonrelevant=fr / 10, drop=d, seed=i
        )
        for i, (fr, d) in enumerate([(0.1, 0.0), (0.3, 0.0), (0.0, 0.5), (0.3, 0.5)])
    }
    res = fasteval.agreement(qrels, sets, runs=sorted((trec8 / "runs").iterdir()), B=args.B)
    show(
        "TREC-8 labels (overall)", res.labels.filter(pl.col("query_id").is_null()).drop("query_id")
    )
    show("TREC-8 rankings", res.rankings.drop("n_systems", "n_queries"))
    show("TREC-8 significance", res.significance)


if __name__ == "__main__":
    main()
