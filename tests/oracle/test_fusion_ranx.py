"""Fusion against ranx's implementations on real TREC-8 runs.

CombSUM/MNZ/ANZ: every fused score agrees (same normalisation, ranx's 1e-9
denominator floor); only the order of equal fused scores can differ, because
ranx sorts with an unstable ``argsort`` while fasteval puts the larger doc id
first (trec_eval's rule); so scores are compared per document and our order is
checked to be (score desc, doc id desc).

CondorcetFuse: ranx's comparator counts a run that retrieved neither document
as a vote for the second argument, and it sorts a Python ``set`` of candidates
(order depends on string hashing) with ``functools.cmp_to_key`` and Timsort; a
majority cycle therefore gives a different, run-to-run varying order. We feed
both implementations the documents all three runs retrieved (no abstentions,
an odd number of voters: no tied votes) and whose scores are not tied within a
run (ranx orders equal scores arbitrarily), and require the same order on every
query whose majority tournament is transitive (there every correct sort
agrees); on the others we check that our order is still a Hamiltonian path of
the tournament.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from fasteval.analysis import fusion as fu

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

RUNS = ["CL99XT", "ok8alx", "INQ603", "Flab8as"]


@pytest.fixture(scope="module")
def trec8(trec8_dir):
    base = trec8_dir / "runs"
    return fu.prepare_fusion([base / f"input.{r}.gz" for r in RUNS])


def ranx_run(df: pl.DataFrame, name: str):
    from ranx import Run

    d: dict[str, dict[str, float]] = {}
    for q, doc, s in (
        df.filter(pl.col("run_id") == name).select("query_id", "doc_id", "score").iter_rows()
    ):
        d.setdefault(q, {})[doc] = s
    return Run(d, name=name)


@pytest.mark.parametrize(
    ("method", "norm"),
    [
        ("combsum", "min-max"),
        ("combmnz", "min-max"),
        ("combanz", "min-max"),
        ("combsum", "zscore"),
        ("combsum", "sum"),
    ],
)
def test_comb_methods_match_ranx(trec8, method, norm):
    from ranx import fuse as ranx_fuse

    src = trec8.runs
    frame = pl.DataFrame(
        {
            "run_id": np.asarray(src.run_names)[src.run],
            "query_id": src.qid.to_arrow(),
            "doc_id": src.doc.to_arrow(),
            "score": src.score,
        }
    )
    ours = fu.fuse(trec8, method, depth=10**6, norm=norm)
    theirs = ranx_fuse(
        [ranx_run(frame, r) for r in RUNS],
        norm={"zscore": "zmuv"}.get(norm, norm),
        method=method[4:],
    )
    want = pl.DataFrame(
        [(q, d, s) for q, docs in theirs.run.items() for d, s in docs.items()],
        schema=["query_id", "doc_id", "want"],
        orient="row",
    )
    joined = ours.join(want, on=["query_id", "doc_id"], how="full", coalesce=True)
    assert joined.height == ours.height == want.height
    diff = (joined["score"] - joined["want"]).abs().max()
    assert diff < 1e-9, diff
    # our order: fused score descending, then doc id descending, per query
    chk = ours.with_columns(pl.col("doc_id").cast(pl.Binary).alias("b"))
    resorted = chk.sort(["query_id", "score", "b"], descending=[False, True, True])
    assert (
        resorted["doc_id"].to_list()
        == chk.sort("query_id", maintain_order=True)["doc_id"].to_list()
    )


def test_condorcet_matches_ranx_where_the_majority_is_transitive(trec8):
    from ranx import fuse as ranx_fuse

    names = RUNS[:3]
    src = trec8.runs
    frame = pl.DataFrame(
        {
            "run_id": np.asarray(src.run_names)[src.run],
            "query_id": src.qid.to_arrow(),
            "doc_id": src.doc.to_arrow(),
            "score": src.score,
        }
    ).filter(pl.col("run_id").is_in(names))
    # ranx orders equal scores within a run arbitrarily (unstable argsort): keep untied scores
    frame = frame.filter(pl.len().over("run_id", "query_id", "score") == 1)
    # documents every run retrieved, top 12 of the first run at most (cycles grow with size)
    common = frame.group_by("query_id", "doc_id").len().filter(pl.col("len") == 3).drop("len")
    frame = frame.join(common, on=["query_id", "doc_id"])
    first = (
        frame.filter(pl.col("run_id") == names[0])
        .sort("score", descending=True)
        .group_by("query_id", maintain_order=True)
        .head(12)
        .select("query_id", "doc_id")
    )
    frame = frame.join(first, on=["query_id", "doc_id"])
    ours = fu.fuse(frame, "condorcet", depth=10**6)
    theirs = ranx_fuse([ranx_run(frame, r) for r in names], norm=None, method="condorcet")
    n_transitive = 0
    for q in frame["query_id"].unique().sort().to_list():
        sub = frame.filter(pl.col("query_id") == q)
        docs = sorted(set(sub["doc_id"].to_list()))
        pos = {
            r: {
                d: i
                for i, d in enumerate(
                    sub.filter(pl.col("run_id") == r)
                    .with_columns(pl.col("doc_id").cast(pl.Binary).alias("b"))
                    .sort(["score", "b"], descending=True)["doc_id"]
                    .to_list()
                )
            }
            for r in names
        }

        def beats(a, b, pos=pos):
            return sum(pos[r][a] < pos[r][b] for r in names) >= 2

        got = ours.filter(pl.col("query_id") == q)["doc_id"].to_list()
        wins = sorted(sum(beats(a, b) for b in docs if b != a) for a in docs)
        if wins == list(range(len(docs))):
            n_transitive += 1
            assert got == list(theirs.run[q].keys()), q
        for a, b in itertools.pairwise(got):
            assert beats(a, b), (q, a, b)
    assert n_transitive >= 3, n_transitive


def _untied(trec8) -> pl.DataFrame:
    """The four runs without scores tied within a (run, query): ranx orders those arbitrarily."""
    src = trec8.runs
    frame = pl.DataFrame(
        {
            "run_id": np.asarray(src.run_names)[src.run],
            "query_id": src.qid.to_arrow(),
            "doc_id": src.doc.to_arrow(),
            "score": src.score,
        }
    )
    return frame.filter(pl.len().over("run_id", "query_id", "score") == 1)


def _scores_match(ours: pl.DataFrame, theirs: dict, tol: float) -> None:
    want = pl.DataFrame(
        [(q, d, s) for q, docs in theirs.items() for d, s in docs.items()],
        schema=["query_id", "doc_id", "want"],
        orient="row",
    )
    joined = ours.join(want, on=["query_id", "doc_id"], how="full", coalesce=True)
    assert joined.height == ours.height == want.height
    diff = (joined["score"] - joined["want"]).abs().max()
    assert diff <= tol, diff


@pytest.mark.parametrize("method", ["rrf", "borda"])
def test_rrf_and_borda_match_ranx(trec8, method):
    from ranx import fuse as ranx_fuse

    frame = _untied(trec8)
    if method == "borda":
        # ranx's BordaFuse is quadratic per query in Python-level typed lists (160 s on the
        # whole runs): 10 queries, each run's top 200
        queries = frame["query_id"].unique().sort().head(10)
        frame = (
            frame.filter(pl.col("query_id").is_in(queries.implode()))
            .sort("score", descending=True)
            .group_by("run_id", "query_id", maintain_order=True)
            .head(200)
        )
    ours = fu.fuse(frame, method, depth=10**6)
    theirs = ranx_fuse(
        [ranx_run(frame, r) for r in RUNS],
        norm=None,
        method={"borda": "bordafuse"}.get(method, method),
    )
    _scores_match(ours, theirs.run, 1e-12 if method == "rrf" else 0.0)


def test_weighted_combsum_matches_ranx_wsum(trec8):
    from ranx import fuse as ranx_fuse

    src = trec8.runs
    frame = pl.DataFrame(
        {
            "run_id": np.asarray(src.run_names)[src.run],
            "query_id": src.qid.to_arrow(),
            "doc_id": src.doc.to_arrow(),
            "score": src.score,
        }
    )
    w = [0.4, 0.3, 0.2, 0.1]
    ours = fu.fuse(trec8, "combsum", RUNS, depth=10**6, weights=w)
    theirs = ranx_fuse(
        [ranx_run(frame, r) for r in RUNS], norm="min-max", method="wsum", params={"weights": w}
    )
    _scores_match(ours, theirs.run, 1e-9)


def test_weighted_rrf_matches_ranx_wsum_of_reciprocal_ranks(trec8):
    """ranx has no weighted RRF; it is ranx's wsum over 1/(k + rank) scores."""
    from ranx import Run
    from ranx import fuse as ranx_fuse

    frame = _untied(trec8)
    w, k = [2.0, 1.0, 0.5, 1.5], 60
    rr = []
    for r in RUNS:
        d: dict[str, dict[str, float]] = {}
        sub = frame.filter(pl.col("run_id") == r).sort(
            ["query_id", "score"], descending=[False, True]
        )
        for q, docs in sub.group_by("query_id", maintain_order=True):
            d[q[0]] = {doc: 1.0 / (k + i + 1) for i, doc in enumerate(docs["doc_id"].to_list())}
        rr.append(Run(d, name=r))
    theirs = ranx_fuse(rr, norm=None, method="wsum", params={"weights": w})
    ours = fu.fuse(frame, "rrf", RUNS, depth=10**6, weights=w, k=k)
    _scores_match(ours, theirs.run, 1e-12)
