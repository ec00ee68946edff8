"""ndeval parity on the TREC Web track 2009-2014 diversity qrels (pyndeval as the oracle)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.engine.diversity import diversity_evaluate
from fasteval.io.diversity import load_diversity_qrels
from fasteval.io.tables import load_runs
from tests.conftest import shared_path
from tests.oracle._pyndeval import compare, oracle

pytestmark = pytest.mark.realdata

WEB = ("trec_web_2009_2014",)
QRELS = {
    "2009": "2009/qrels.diversity.gz",
    "2010": "2010/10.diversity-qrels.final.txt.gz",
    "2011": "2011/qrels-for-ndeval.txt.gz",
    "2012": "2012/qrels-for-ndeval.txt.gz",
    "2013": "2013/qrels.ndeval.txt.gz",
    "2014": "2014/qrels.ndeval.txt.gz",
    "2014-all": "2014/qrels.all.txt.gz",  # still has -2 (spam): judged, not relevant
}
TOL = 1e-9


def _baseline_runs(n: int | None = None) -> list[str]:
    d = shared_path(*WEB, "baseline_runs_2012")
    files = sorted(str(p) for p in d.iterdir() if p.name.endswith(".gz"))
    return files[:n] if n else files


@pytest.mark.parametrize(("order", "n_runs"), [("rank", None), ("traditional", 2), ("pyndeval", 2)])
def test_baseline_runs_2012(order: str, n_runs: int | None) -> None:
    qrels = shared_path(*WEB, "qrels_topics", QRELS["2012"])
    runs = _baseline_runs(n_runs)
    got = diversity_evaluate(qrels, runs, order=order, run_id_from="filename")
    want = oracle(load_diversity_qrels(qrels), load_runs(runs, run_id_from="filename"), order=order)
    assert len(want) == 21 * 50 * len(runs)
    assert compare(got, want) <= TOL


def test_baseline_alpha_beta() -> None:
    qrels = shared_path(*WEB, "qrels_topics", QRELS["2012"])
    runs = _baseline_runs(1)
    got = diversity_evaluate(qrels, runs, alpha=0.3, beta=0.8, run_id_from="filename")
    want = oracle(
        load_diversity_qrels(qrels), load_runs(runs, run_id_from="filename"), alpha=0.3, beta=0.8
    )
    assert compare(got, want) <= TOL


def _runs_from_qrels(qrels: pl.DataFrame, seed: int, n_runs: int = 3) -> pl.DataFrame:
    """Runs over each topic's judged documents plus unjudged ones, with tied scores."""
    rng = np.random.default_rng(seed)
    docs = qrels.group_by("query_id", maintain_order=True).agg(
        pl.col("doc_id").unique(maintain_order=True)
    )
    parts = []
    for r in range(n_runs):
        for qid, ds in docs.iter_rows():
            pool = [*ds, *(f"unjudged-{qid}-{i}" for i in range(20))]
            n = int(rng.integers(1, min(len(pool), 120) + 1))
            pick = rng.choice(len(pool), size=n, replace=False)
            score = np.round(rng.random(n) * 5) / 5  # few distinct values: many ties
            parts.append(
                pl.DataFrame(
                    {
                        "run_id": f"gen{r}",
                        "query_id": qid,
                        "doc_id": [pool[i] for i in pick],
                        "score": score,
                        "rank": rng.permutation(n) + 1,
                    }
                )
            )
    return pl.concat(parts)


@pytest.mark.parametrize("year", sorted(QRELS))
@pytest.mark.parametrize("order", ["rank", "traditional"])
def test_every_year_generated_runs(year: str, order: str) -> None:
    qrels = load_diversity_qrels(shared_path(*WEB, "qrels_topics", QRELS[year]))
    runs = _runs_from_qrels(qrels, seed=int(year[:4]) * 10 + len(year))
    got = diversity_evaluate(qrels, runs, order=order)
    want = oracle(qrels, runs, order=order)
    assert compare(got, want) <= TOL
