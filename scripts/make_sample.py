"""Generate the small synthetic sample archive shipped in fasteval/data.

It is made up (no TREC data may be shipped): 8 runs x 25 queries x 100
documents, graded qrels 0-2 with some documents left unjudged, and runs of
varying quality built by adding noise to the relevance grades. Run from the
repository root: ``python scripts/make_sample.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

SEED = 20261122
OUT = Path(__file__).resolve().parents[1] / "fasteval" / "data"


def main() -> None:
    rng = np.random.default_rng(SEED)
    n_q, n_docs, depth = 25, 400, 100
    qrels_rows = []
    grades = {}
    for q in range(1, n_q + 1):
        qid = str(100 + q)
        g = rng.choice([0, 1, 2], size=n_docs, p=[0.8, 0.14, 0.06])
        judged = rng.random(n_docs) < 0.6
        for d in range(n_docs):
            doc = f"DOC-{q:03d}-{d:04d}"
            grades[(qid, doc)] = int(g[d])
            if judged[d] or g[d] > 0:
                qrels_rows.append(f"{qid} 0 {doc} {int(g[d])}")
    (OUT / "sample.qrels").write_text("\n".join(qrels_rows) + "\n")
    runs = []
    for r, noise in enumerate([0.3, 0.5, 0.8, 1.0, 1.3, 1.8, 2.5, 4.0]):
        run_id = f"sample{r + 1}"
        for q in range(1, n_q + 1):
            qid = str(100 + q)
            docs = [f"DOC-{q:03d}-{d:04d}" for d in range(n_docs)]
            s = np.array([grades[(qid, d)] for d in docs]) + rng.normal(0, noise, n_docs)
            s = np.round(s, 4)
            top = np.argsort(-s, kind="stable")[:depth]
            for rank, i in enumerate(top, start=1):
                runs.append((run_id, qid, docs[i], rank, float(s[i])))
    df = pl.DataFrame(
        runs, schema=["run_id", "query_id", "doc_id", "rank", "score"], orient="row"
    ).with_columns(pl.col("rank").cast(pl.Int64))
    df.write_parquet(OUT / "sample_runs.parquet", compression="zstd")
    print(f"wrote {len(qrels_rows)} judgments and {df.height} run rows to {OUT}")


if __name__ == "__main__":
    main()
