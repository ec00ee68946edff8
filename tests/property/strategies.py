"""Hypothesis strategies shared by the property tests.

Every strategy here draws only *usable* cases: qrels with at least one judged
query, and runs that each retrieve at least one judged query. The property
tests then spend their whole example budget checking something, instead of
returning early on draws that evaluate nothing; the few conditions a strategy
cannot express are filtered with ``hypothesis.assume`` in the test itself.
"""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# document ids with byte-order traps for the tie-break: upper before lower case,
# prefixes ("a" < "ab"), and zero-padded numbers
DOCS = [f"d{i:02d}" for i in range(30)] + ["D1", "d1", "a", "ab", "b"]
# few distinct scores -> many ties; large values exercise float32 rounding (compat 9)
SCORES = [0.0, 1.0, 1.5, -2.0, 100000.15461, 100000.1546, 3.25]

AdhocQrels = dict[str, dict[str, int]]
AdhocRuns = dict[str, dict[str, dict[str, float]]]


def examples(n: int) -> settings:
    """Settings for a property test that checks ``n`` generated cases."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def adhoc_collections(draw: st.DrawFn) -> tuple[AdhocQrels, AdhocRuns]:
    """Ad hoc qrels and runs with ties, unjudged documents, negative grades and
    queries missing on either side; every run shares a query with the qrels."""
    n_q = draw(st.integers(1, 4))
    qids = [str(100 + q) for q in range(n_q)]
    qrels: AdhocQrels = {}
    for i, qid in enumerate(qids):
        # the first query is always judged, the others may be absent from the qrels
        judged = draw(
            st.lists(st.sampled_from(DOCS), unique=True, min_size=int(i == 0), max_size=20)
        )
        if judged:
            qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
    judged_qids = sorted(qrels)
    runs: AdhocRuns = {}
    for r in range(draw(st.integers(1, 3))):
        # one judged query the run must retrieve; any other query (one of them
        # absent from the qrels) is retrieved or not at random
        must = draw(st.sampled_from(judged_qids))
        run: dict[str, dict[str, float]] = {}
        for qid in [*qids, str(100 + n_q)]:
            if qid == must or draw(st.booleans()):
                docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=25))
                scores = draw(
                    st.lists(st.sampled_from(SCORES), min_size=len(docs), max_size=len(docs))
                )
                run[qid] = dict(zip(docs, scores, strict=True))
        runs[f"run{r}"] = run
    return qrels, runs


def adhoc_frames(qrels: AdhocQrels, runs: AdhocRuns) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The dicts of :func:`adhoc_collections` as fasteval's qrels and run frames."""
    q = pl.DataFrame(
        [(qid, d, g) for qid, docs in qrels.items() for d, g in docs.items()],
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
        orient="row",
    )
    r = pl.DataFrame(
        [
            (rid, qid, d, s)
            for rid, run in runs.items()
            for qid, docs in run.items()
            for d, s in docs.items()
        ],
        schema={
            "run_id": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "score": pl.Float64,
        },
        orient="row",
    )
    return q, r


@st.composite
def diversity_archives(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Diversity qrels and runs: many subtopics, grades -2..4, ties, unjudged
    documents, a query no qrels know; every run retrieves a judged query."""
    n_topics = draw(st.integers(1, 4))
    qrows: list[tuple[str, int, str, int]] = []
    docs_of: dict[str, list[str]] = {}
    for t in range(n_topics):
        qid = str(100 + t)
        docs = sorted({f"d{draw(st.integers(0, 60)):02d}" for _ in range(draw(st.integers(1, 25)))})
        docs_of[qid] = docs
        subs = sorted(set(draw(st.lists(st.integers(0, 12), min_size=1, max_size=9))))
        for s in subs:
            for d in docs:
                # the first (subtopic, doc) of the first topic is always judged
                if (t == 0 and s == subs[0] and d == docs[0]) or draw(st.integers(0, 2)):
                    qrows.append((qid, s, d, draw(st.integers(-2, 4))))
    judged_qids = sorted({q for q, *_ in qrows})
    qrels = pl.DataFrame(
        qrows,
        schema={
            "query_id": pl.String,
            "subtopic": pl.Int32,
            "doc_id": pl.String,
            "relevance": pl.Int32,
        },
        orient="row",
    )
    rrows: list[tuple[str, str, str, float, int]] = []
    for r in range(draw(st.integers(1, 3))):
        must = draw(st.sampled_from(judged_qids))
        for qid in [*docs_of, "999"]:
            pool = [*docs_of.get(qid, []), *(f"u{i}" for i in range(8))]
            picked = draw(
                st.lists(st.sampled_from(pool), min_size=int(qid == must), max_size=30, unique=True)
            )
            ranks = draw(st.permutations(list(range(1, len(picked) + 1))))
            for d, rk in zip(picked, ranks, strict=True):
                rrows.append((f"run{r}", qid, d, float(draw(st.integers(0, 4))) / 2, rk))
    runs = pl.DataFrame(
        rrows,
        schema={
            "run_id": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "score": pl.Float64,
            "rank": pl.Int64,
        },
        orient="row",
    )
    return qrels, runs


def shares_query(qrels: pl.DataFrame, runs: pl.DataFrame) -> bool:
    """Whether every run retrieves a query the (possibly reduced) qrels judge."""
    qs = set(qrels["query_id"])
    return all(set(g["query_id"]) & qs for _, g in runs.group_by("run_id"))
