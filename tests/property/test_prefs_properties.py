"""Preference measures against the slow reference, on random judgments and rankings."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval.engine.prefs import evaluate_prefs
from fasteval.options import EvalOptions
from tests.reference import prefs_naive

DOCS = [f"d{i}" for i in range(7)]
S = pl.String


@st.composite
def judgments(draw: st.DrawFn) -> list[prefs_naive.Line]:
    """1-3 groups of 1-3 sub-groups; a document keeps one level within a group (consistent)."""
    lines: list[prefs_naive.Line] = []
    for g in range(draw(st.integers(1, 3))):
        level = {d: float(draw(st.integers(0, 3))) for d in DOCS}
        for s in range(draw(st.integers(1, 3))):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
            lines += [(f"g{g}", f"s{s}", d, level[d]) for d in docs]
    return lines


@settings(max_examples=150, deadline=None)
@given(
    lines=judgments(),
    ranking=st.lists(st.sampled_from([*DOCS, "x1", "x2"]), max_size=9, unique=True),
    scores=st.lists(st.integers(0, 3), min_size=9, max_size=9),
)
def test_matches_the_naive_reference(lines, ranking, scores):
    assume(len({ln[2] for ln in lines}) >= 2)
    prefs = pl.DataFrame(
        [("q", *ln) for ln in lines],
        schema={
            "query_id": S,
            "judgment_group": S,
            "subgroup": S,
            "doc_id": S,
            "relevance": pl.Float64,
        },
        orient="row",
    )
    run = pl.DataFrame(
        [("r", "q", d, float(s)) for d, s in zip(ranking, scores, strict=False)]
        or [("r", "other", "z", 1.0)],
        schema={"run_id": S, "query_id": S, "doc_id": S, "score": pl.Float64},
        orient="row",
    )
    # trec_eval's order for preferences: score descending, ties by document id ascending
    order = sorted(zip(ranking, scores, strict=False), key=lambda x: (-x[1], x[0].encode()))
    want = prefs_naive.measures(lines, [d for d, _ in order])
    opts = EvalOptions(compat=10, complete=True, rel_format="prefs")
    df = evaluate_prefs(prefs, run, ["all_prefs"], opts)
    got = dict(df.filter(pl.col("query_id") == "q").select("measure", "value").iter_rows())
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name
