"""The joined representation every analysis starts from (``engine.prepare``)."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from fasteval.engine import prepare
from fasteval.kernels.families import NONPOOL, UNJUDGED


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


def _encoded_or_error(pq, cols, keep_rows=True, **options):  # type: ignore[no-untyped-def]
    """``encode(pq, cols, EvalOptions(**options))``, or the message of the error it raises."""
    from fasteval.engine.encode import encode
    from fasteval.errors import FastevalError
    from fasteval.options import EvalOptions

    try:
        return encode(pq, cols, EvalOptions(**options), keep_rows=keep_rows)
    except FastevalError as e:
        return str(e)


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
    assert enc.starts.shape[0] > 0 and enc.ends[-1] > enc.starts[0]
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


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 120),
    n_scores=st.integers(1, 6),
    presorted=st.booleans(),
    compat=st.sampled_from([9, 10]),
    seed=st.integers(0, 2**32 - 1),
)
def test_rankings_follow_trec_eval_order(n, n_scores, presorted, compat, seed):
    """Score descending, then doc id descending byte-wise; long tie runs, any input order.

    The kernel sorts by score only when the input is out of score order and
    compares ids only within runs of equal scores (insertion sort when short,
    merge sort when longer than 16): this covers both paths against ``sorted``.
    """
    rng = np.random.default_rng(seed)
    values = rng.choice([0.5, 1.0, 100000.15461, 100000.1546, -3.0, 7.25], n_scores, replace=False)
    docs = [f"d{int(x)}" for x in rng.choice(10_000, n, replace=False)]
    scores = rng.choice(values, n).astype(float)
    if presorted:
        scores = np.sort(scores)[::-1]
    ranked = [("r", "1", d, float(s)) for d, s in zip(docs, scores, strict=True)]
    qrels, runs = _frames([("1", docs[0], 1)], ranked)
    p = prepare(qrels, runs, compat=compat)
    got = [p.runs.doc.value(int(r)) for r in p.enc.row[p.enc.starts[0] : p.enc.ends[0]]]

    def score(t):
        return float(np.float32(t[3])) if compat == 9 else t[3]

    want = [t[2] for t in sorted(ranked, key=lambda t: (-score(t), _desc(t[2])))]
    assert got == want


def _desc(doc: str) -> tuple[int, ...]:
    # byte-wise descending order, with a shorter prefix after its extensions
    return (*(255 - b for b in doc.encode()), 256)


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.text(max_size=6), min_size=1, max_size=8),
    picks=st.lists(st.integers(0, 7), min_size=1, max_size=40),
)
def test_long_table_columns_from_lists_and_gathers_agree(words, picks) -> None:
    """A small table's string columns (Python lists) and a large one's (polars' gather)
    hold the words picked."""
    from fasteval.engine import table

    idx = np.array([p % len(words) for p in picks], np.int64)
    big = np.tile(idx, table.SMALL_TABLE // len(idx) + 1)
    assert len(idx) <= table.SMALL_TABLE < len(big)
    for rows in (idx, big):
        col = table._strings("c", words, rows)
        assert col.name == "c" and col.dtype == pl.String
        assert col.to_list() == [words[i] for i in rows]


@settings(max_examples=60, deadline=None)
@given(
    judg=st.dictionaries(st.tuples(queries, docs), st.integers(-1, 3), min_size=1),
    ranked=st.lists(
        st.tuples(st.sampled_from(["r1", "r2"]), queries, docs, st.floats(-5, 5, allow_nan=False)),
        min_size=1,
        max_size=40,
    ),
    on_duplicate=st.sampled_from(["error", "first"]),
)
def test_an_encoding_without_rows_has_the_grades_and_groups_of_one_with(judg, ranked, on_duplicate):
    """keep_rows=False leaves out the rows and judgments only; a repeated document is
    still dropped, or named with its row (documents repeat in these rankings)."""
    from fasteval.engine.encode import prepare_qrels
    from fasteval.io.tables import qrels_columns, run_columns

    qrels, runs = _frames([(q, d, g) for (q, d), g in judg.items()], ranked)
    pq = prepare_qrels(qrels_columns(qrels))
    cols = run_columns([runs])
    full, slim = (
        _encoded_or_error(pq, cols, on_duplicate=on_duplicate, keep_rows=keep)
        for keep in (True, False)
    )
    if isinstance(full, str):
        assert slim == full  # the same error, naming the same row
        return
    assert not isinstance(slim, str)
    for name in ("rel", "starts", "ends", "group_run", "group_q"):
        np.testing.assert_array_equal(getattr(slim, name), getattr(full, name))
    assert slim.row.shape[0] == slim.jdx.shape[0] == 0
    assert full.row.shape[0] == full.rel.shape[0]


long_queries = st.sampled_from(["1", "2", "query-number-three", "query-number-four"])


@settings(max_examples=100, deadline=None)
@given(
    stretches=st.lists(
        st.tuples(st.sampled_from(["r1", "r2", "r3"]), long_queries, st.integers(1, 24)),
        min_size=1,
        max_size=8,
    ),
    shuffle=st.randoms(use_true_random=False),
    shuffled=st.booleans(),
    as_views=st.booleans(),
    known=st.sets(long_queries, min_size=1),
)
@example(  # a long id stored twice: two heads, one (run, query)
    stretches=[("r1", "1", 24), ("r1", "query-number-three", 2)],
    shuffle=random.Random(0),
    shuffled=False,
    as_views=True,
    known={"1"},
)
def test_grouping_from_the_heads_is_the_counting_sort_of_every_row(
    stretches, shuffle, shuffled, as_views, known
) -> None:
    """The rows grouped by (run, query) from the heads of the runs of equal ids
    (``encode._group``) are those of ``group_rows`` over every row's codes; rows in
    order are never sorted. Query ids longer than a string view's 12 inline bytes
    make equal ids with unequal views (two heads, one code)."""
    import pyarrow as pa

    from fasteval.columns import dict_encode, encode_heads
    from fasteval.engine import encode as enc
    from fasteval.io.tables import runs_from_table
    from fasteval.kernels import ranking as kr

    ranked = [(r, q, f"d{i}") for r, q, k in stretches for i in range(k)]
    if shuffled:
        shuffle.shuffle(ranked)
    runs_seen = list(dict.fromkeys(r for r, _, _ in ranked))
    queries_seen = list(dict.fromkeys(q for _, q, _ in ranked))
    typ = pa.string_view() if as_views else pa.large_string()
    table = pa.table(
        {
            "run_id": pa.array([r for r, _, _ in ranked], typ),
            "query_id": pa.array([q for _, q, _ in ranked], typ),
            "doc_id": pa.array([d for _, _, d in ranked], typ),
            "score": pa.array([1.0] * len(ranked)),
        }
    )
    cols = runs_from_table(table, "t")
    assert (cols.qid.in_place() is not None) == as_views
    # the queries' numbers: the known ones first (byte order), then the others
    order = sorted(known) + sorted(set(queries_seen) - known)
    q_lut = np.array([order.index(q) for q in queries_seen], np.int32)
    n_q, n_runs = len(order), len(runs_seen)
    codes, _ = dict_encode(cols.qid)
    want_perm, want_starts = kr.group_rows(cols.run, codes, q_lut, n_q, n_runs)
    heads = encode_heads(cols.qid)
    calls = []
    sort = kr.group_rows
    kr.group_rows = lambda *a: calls.append(a) or sort(*a)
    try:
        perm, starts = enc._group(cols, heads, q_lut, n_q, n_runs)
    finally:
        kr.group_rows = sort
    np.testing.assert_array_equal(starts, want_starts)
    # (an empty permutation: the rows in their own order, none written)
    assert (perm.shape[0] == 0) == (calls == [])
    np.testing.assert_array_equal(perm if calls else np.arange(len(ranked)), want_perm)
    keys = [(runs_seen.index(r), order.index(q)) for r, q, _ in ranked]
    in_order = keys == sorted(keys)
    # sorted only when out of order, or with stretches of fewer than 8 rows on average
    assert (calls == []) == (in_order and heads.rows.shape[0] * 8 <= len(ranked))


def test_a_frame_of_long_run_and_query_ids_is_grouped_from_its_heads() -> None:
    """Ids longer than a view's 12 inline bytes, stored apart on every row as files and
    frames store them: the frame is still seen as grouped (no counting sort), and
    scores as the same frame with short ids does."""
    import fasteval
    from fasteval.kernels import ranking as kr

    rng = np.random.default_rng(7)
    qs = [f"{q:03d}" for q in range(1, 31)]  # in byte order, as trec_eval orders queries
    qrels = pl.DataFrame(
        {
            "query_id": [q for q in qs for _ in range(20)],
            "doc_id": [f"d{i}" for _ in qs for i in range(20)],
            "relevance": rng.integers(0, 3, 20 * len(qs)).tolist(),
        }
    )
    run = pl.DataFrame(
        {
            "run_id": ["r"] * (40 * len(qs)),
            "query_id": [q for q in qs for _ in range(40)],
            "doc_id": [f"d{i}" for _ in qs for i in range(40)],
            "score": rng.random(40 * len(qs)).tolist(),
        }
    )
    longer = pl.concat_str([pl.lit("a-query-id-"), pl.col("query_id")])
    long_qrels = qrels.with_columns(longer.alias("query_id"))
    long_run = run.with_columns(
        longer.alias("query_id"), (pl.col("run_id") + "-reranked-by-a-model").alias("run_id")
    )
    short = fasteval.Evaluator(qrels, ["map", "P_10"]).evaluate(run)
    calls = []
    sort = kr.group_rows
    kr.group_rows = lambda *a: calls.append(a) or sort(*a)
    try:
        long = fasteval.Evaluator(long_qrels, ["map", "P_10"]).evaluate(long_run)
    finally:
        kr.group_rows = sort
    assert calls == []
    assert long["run_id"].unique().to_list() == ["r-reranked-by-a-model"]
    assert long["value"].to_list() == short["value"].to_list()


# document ids of every length a view stores apart or inline: 0-12 bytes in the view,
# 13-24 in the first guess of a ranking's buffer, longer ones grow it
view_docs = st.builds(
    lambda stem, n: (stem * 10)[:n],
    st.sampled_from(["d", "LA0101", "FBIS3-", "é"]),
    st.integers(0, 40),
)


@settings(max_examples=120, deadline=None)
@given(
    judged=st.lists(st.tuples(queries, view_docs, st.integers(-1, 3)), min_size=1, max_size=30),
    ranked=st.lists(
        st.tuples(queries, view_docs, st.sampled_from([0.5, 1.0, 2.0, 1.0000001])),
        min_size=1,
        max_size=60,
    ),
    chunks=st.integers(1, 3),
    skip=st.integers(0, 3),
    on_duplicate=st.sampled_from(["error", "first"]),
    compat=st.sampled_from([9, 10]),
)
def test_document_ids_read_in_place_rank_as_from_their_buffer(
    judged, ranked, chunks, skip, on_duplicate, compat
) -> None:
    """A frame's document ids, read in place ranking by ranking
    (``ranking.rank_view_groups``), give the grades, rows, judgments, groups and
    errors of the same ids in one buffer (``rank_groups``): ids inline in their
    views and apart, of any length, in several data buffers, in a sliced column,
    repeated, and tied in score."""
    import pyarrow as pa

    from fasteval.engine.encode import prepare_qrels
    from fasteval.io.tables import qrels_columns, runs_from_table

    pq = prepare_qrels(
        qrels_columns(_frames(list({(q, d): (q, d, g) for q, d, g in judged}.values()), [])[0])
    )
    rows = [("r", q, d, s) for q, d, s in ranked]
    assume(len(rows) > skip)

    def table(typ: pa.DataType) -> pa.Table:
        cols = list(zip(*rows, strict=True))
        step = -(-len(rows) // chunks)
        docs = pa.chunked_array(
            [pa.array(cols[2][i : i + step], typ) for i in range(0, len(rows), step)]
        )
        if typ == pa.string_view():  # several data buffers, one per chunk
            docs = pa.chunked_array([docs.combine_chunks()]) if chunks == 1 else docs
        t = pa.table(
            {
                "run_id": pa.array(cols[0], typ),
                "query_id": pa.array(cols[1], typ),
                "doc_id": docs,
                "score": pa.array(cols[3], pa.float64()),
            }
        )
        return t.slice(skip)

    outs = []
    for typ in (pa.string_view(), pa.large_string()):
        cols = runs_from_table(table(typ), "t")
        assert (cols.doc.in_place() is not None) == (typ == pa.string_view())
        outs.append(_encoded_or_error(pq, cols, compat=compat, on_duplicate=on_duplicate))
    in_place, buffer = outs
    if isinstance(buffer, str):
        assert in_place == buffer  # the same error, naming the same row
        return
    assert not isinstance(in_place, str)
    for name in ("rel", "row", "jdx", "starts", "ends", "group_run", "group_q"):
        np.testing.assert_array_equal(getattr(in_place, name), getattr(buffer, name))
