"""The ranking kernels' own contracts: lookups in slot order, large tables judge right."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.engine import prepare
from fasteval.kernels import families
from fasteval.kernels.hashing import slot_order


@settings(max_examples=30, deadline=None)
@given(mask_bits=st.integers(4, 14), n=st.integers(0, 3000), seed=st.integers(0, 2**32 - 1))
def test_slot_order_is_a_permutation_sorted_by_home_bucket(mask_bits, n, seed) -> None:
    rng = np.random.default_rng(seed)
    hs = rng.integers(0, 2**63, n, dtype=np.uint64)
    mask = (1 << mask_bits) - 1
    order = slot_order(hs, mask)
    assert sorted(order.tolist()) == list(range(n))
    home = (hs[order] & np.uint64(mask)).astype(np.int64)
    buckets = home >> max(0, mask_bits - 8)
    assert (np.diff(buckets) >= 0).all()


@settings(max_examples=15, deadline=None)
@given(n_judged=st.integers(100, 2500), n_ranked=st.integers(1, 1500), seed=st.integers(0, 999))
def test_large_tables_judge_every_document_as_a_dict_would(n_judged, n_ranked, seed) -> None:
    rng = np.random.default_rng(seed)
    universe = [f"DOC-{i:06d}" for i in rng.choice(10**6, 4000, replace=False)]
    judged = {
        d: int(g) for d, g in zip(universe[:n_judged], rng.integers(-1, 4, n_judged), strict=True)
    }
    ranked = rng.choice(len(universe), min(n_ranked, len(universe)), replace=False)
    qrels = pl.DataFrame(
        {"query_id": "q1", "doc_id": list(judged), "relevance": list(judged.values())},
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
    )
    docs = [universe[i] for i in ranked]
    runs = pl.DataFrame(
        {
            "run_id": "r",
            "query_id": "q1",
            "doc_id": docs,
            "score": -np.arange(len(docs), dtype=float),
        }
    )
    prep = prepare(qrels, runs)
    enc = prep.enc
    for i in range(enc.starts[0], enc.ends[0]):
        doc = prep.runs.doc.value(int(enc.row[i]))
        grade = judged.get(doc)
        expected = families.NONPOOL if grade is None else grade if grade >= 0 else families.UNJUDGED
        assert enc.rel[i] == expected
