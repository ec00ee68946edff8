"""Diversity qrels variants: mask path = reading the reduced diversity qrels (generated data)."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import assume, given
from hypothesis import strategies as st

from fasteval.analysis import variants as var
from fasteval.analysis.study_scorers import DiversityScorer
from fasteval.engine.diversity import diversity_evaluate
from tests.property.strategies import diversity_archives, examples, shares_query

NAMES = ["alpha_nDCG@5", "alpha_nDCG@20", "ERR_IA@3", "nERR_IA@20", "NRBP", "nNRBP", "MAP_IA",
         "P_IA@5", "strec@10", "alpha_DCG@20"]  # fmt: skip


@examples(60)
@given(
    data=diversity_archives(),
    order=st.sampled_from(["rank", "traditional", "pyndeval"]),
    level=st.sampled_from([1, 2]),
    complete=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    share=st.sampled_from([0.2, 0.5, 0.8, 1.0]),
)
def test_mask_equals_reduced_qrels(data, order, level, complete, seed, share) -> None:
    qrels, runs = data
    sc = DiversityScorer.from_inputs(
        qrels, runs, NAMES, order=order, relevance_level=level, complete=complete
    )
    rng = np.random.default_rng(seed)
    keep = rng.random(sc.enc.qr_rel.shape[0]) < share
    reduced = sc.variant_qrels(keep)
    assume(reduced.height > 0 and shares_query(reduced, runs))
    want = diversity_evaluate(
        reduced, runs, NAMES, order=order, relevance_level=level, complete=complete, per_query=False
    )
    enc_v = var.apply_mask(sc.enc, keep)
    got = sc(enc_v)
    ri = {r: i for i, r in enumerate(sc.enc.run_names)}
    ni = {n: i for i, n in enumerate(sc.names)}
    for r, _, m, v in want.iter_rows():
        g = got[ri[r], ni[m]]
        assert (g == v) or (np.isnan(g) and np.isnan(v)), (r, m, g, v)
    # the reused-buffer path gives the same
    again = sc(var.Masker(sc.enc, with_jdx=False)(keep))
    assert np.array_equal(again, got, equal_nan=True)


def test_mask_with_nothing_relevant_at_the_level() -> None:
    """Found by hypothesis: no judgment reaches level 2, so the variant has no relevant entry."""
    qrels = pl.DataFrame(
        {"query_id": ["100"], "subtopic": [1], "doc_id": ["d00"], "relevance": [1]},
        schema_overrides={"subtopic": pl.Int32, "relevance": pl.Int32},
    )
    runs = pl.DataFrame(
        {"run_id": ["run0"], "query_id": ["100"], "doc_id": ["d00"], "score": [1.0], "rank": [1]}
    )
    sc = DiversityScorer.from_inputs(qrels, runs, NAMES, order="rank", relevance_level=2)
    keep = np.ones(sc.enc.qr_rel.shape[0], bool)
    got = sc(var.apply_mask(sc.enc, keep))
    want = diversity_evaluate(qrels, runs, NAMES, order="rank", relevance_level=2, per_query=False)
    ni = {n: i for i, n in enumerate(sc.names)}
    assert want.height == len(NAMES)
    for _, _, m, v in want.iter_rows():
        g = got[0, ni[m]]
        assert (g == v) or (np.isnan(g) and np.isnan(v)), (m, g, v)
