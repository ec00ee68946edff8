"""The joined representation every analysis starts from (``engine.prepare``)."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval.engine import prepare
from fasteval.kernels.ranking import NONPOOL, UNJUDGED


def _frames(judg: list[tuple[str, str, int]], ranked: list[tuple[str, str, str, float]]):
    s = pl.String
    qrels = pl.DataFrame(
        judg, schema={"query_id": s, "doc_id": s, "relevance": pl.Int32}, orient="row"
    )
    runs = pl.DataFrame(
        ranked,
        schema={"run_id": s, "query_id": s, "doc_id": s, "score": pl.Float64},
        orient="row",
    )
    return qrels, runs


docs = st.sampled_from(list("abcdefgh"))
queries = st.sampled_from(["1", "2", "3"])


@settings(max_examples=60, deadline=None)
@given(
    judg=st.dictionaries(st.tuples(queries, docs), st.integers(-1, 3), min_size=1),
    ranked=st.dictionaries(
        st.tuples(st.sampled_from(["r1", "r2"]), queries, docs),
        st.floats(-5, 5, allow_nan=False),
        min_size=1,
    ),
)
def test_judgment_index_points_at_the_judgment_of_the_ranked_document(judg, ranked):
    qrels, runs = _frames(
        [(q, d, g) for (q, d), g in judg.items()],
        [(r, q, d, s) for (r, q, d), s in ranked.items()],
    )
    qrel_q = set(qrels["query_id"])
    assume(all(set(g["query_id"]) & qrel_q for g in runs.partition_by("run_id")))
    prep = prepare(qrels, runs)
    enc = prep.enc
    qid_of = np.repeat(np.arange(len(enc.qids)), np.diff(enc.qr_off))
    for g in range(enc.starts.shape[0]):
        q = enc.qids[enc.group_q[g]]
        for i in range(enc.starts[g], enc.ends[g]):
            doc = prep.runs.doc.value(int(enc.row[i]))
            j = int(enc.jdx[i])
            grade = judg.get((q, doc))
            if grade is None:
                assert j == -1
                assert enc.rel[i] == NONPOOL
                continue
            assert enc.qids[qid_of[j]] == q
            assert prep.qrels.doc.value(int(enc.qr_rows[j])) == doc
            assert enc.qr_rel[j] == grade
            assert enc.rel[i] == (grade if grade >= 0 else UNJUDGED)
