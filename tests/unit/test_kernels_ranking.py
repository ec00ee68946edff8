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


def _judged_frame(n_q: int, seed: int) -> tuple[pl.DataFrame, dict[tuple[str, str], int]]:
    rng = np.random.default_rng(seed)
    judged = {
        (f"q{q}", f"DOC-{d:06d}"): int(rng.integers(-1, 4))
        for q in range(n_q)
        for d in rng.choice(10**6, int(rng.integers(1, 300)), replace=False)
    }
    qrels = pl.DataFrame(
        {
            "query_id": [q for q, _ in judged],
            "doc_id": [d for _, d in judged],
            "relevance": list(judged.values()),
        },
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
    )
    return qrels, judged


def _one_run(qrels: pl.DataFrame) -> pl.DataFrame:
    return qrels.select("query_id", "doc_id").with_columns(run_id=pl.lit("r"), score=pl.lit(1.0))


@settings(max_examples=10, deadline=None)
@given(n_q=st.integers(1, 6), seed=st.integers(0, 999))
def test_table_entries_lie_in_slot_order_with_their_fingerprints(n_q, seed) -> None:
    from fasteval.kernels.hashing import hash_bytes

    qrels, judged = _judged_frame(n_q, seed)
    pq = prepare(qrels, _one_run(qrels)).enc.prepared
    assert pq is not None
    t = pq.table
    buf, ts, te = t.ids
    for q, qid in enumerate(pq.qids):
        lo, hi = int(pq.qr_off[q]), int(pq.qr_off[q + 1])
        slots = t.slots[t.t_off[q] : t.t_off[q + 1]]
        full = slots[slots != 0]
        entries = (full & np.uint64(0xFFFFFFFF)).astype(np.int64) - 1
        assert entries.tolist() == list(range(lo, hi))  # every judgment, in slot order
        for e, k in zip(full, entries, strict=True):
            doc = bytes(buf[ts[k] : te[k]]).decode()
            assert e >> np.uint64(32) == hash_bytes(buf, ts[k], te[k]) >> np.uint64(32)
            assert pq.docs.value(int(t.jud[k])) == doc
            grade = judged[(qid, doc)]
            assert t.rel[k] == (grade if grade >= 0 else families.UNJUDGED)


def test_a_matching_hash_with_other_bytes_is_not_a_judgment() -> None:
    from fasteval.kernels.hashing import hash_bytes, judge_ranking

    qrels, judged = _judged_frame(1, 7)
    pq = prepare(qrels, _one_run(qrels)).enc.prepared
    assert pq is not None
    buf, ts, te = pq.table.ids
    # a ranked id whose hash is made equal to the first judged id's, bytes differing
    other = np.frombuffer(b"NOT-JUDGED" + bytes(buf[ts[0] : te[0]]), np.uint8)
    n_o = len(other) - int(te[0] - ts[0])
    d_s = np.array([0, n_o], np.int64)
    d_e = np.array([n_o, len(other)], np.int64)
    h = hash_bytes(buf, ts[0], te[0])
    hs = np.array([h, h], np.uint64)
    grade = np.empty(2, np.int32)
    jud = np.empty(2, np.int64)
    judge_ranking(other, d_s, d_e, np.arange(2), hs, 0, pq.table, grade, jud)
    assert grade[0] == families.NONPOOL and jud[0] == -1
    g = judged[("q0", bytes(buf[ts[0] : te[0]]).decode())]
    assert grade[1] == (g if g >= 0 else families.UNJUDGED) and jud[1] == pq.table.jud[0]


# ----------------------------------------------------------------------------- the id hash


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=40), st.integers(0, 15), st.integers(0, 15))
def test_hash_depends_on_the_bytes_not_where_they_lie(word: bytes, pad_a: int, pad_b: int) -> None:
    """A run's id and a judged id are hashed from different buffers at different offsets."""
    from fasteval.kernels.hashing import hash_bytes

    a = np.frombuffer(b"x" * pad_a + word + b"y" * 7, np.uint8)
    b = np.frombuffer(b"\x00" * pad_b + word + b"\xff" * 3, np.uint8)
    assert hash_bytes(a, pad_a, pad_a + len(word)) == hash_bytes(b, pad_b, pad_b + len(word))


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=40), st.data())
def test_hash_sees_every_byte_and_the_length(word: bytes, data: st.DataObject) -> None:
    from fasteval.kernels.hashing import hash_bytes

    k = data.draw(st.integers(0, len(word) - 1))
    flipped = bytearray(word)
    flipped[k] ^= data.draw(st.integers(1, 255))
    h = lambda w: int(hash_bytes(np.frombuffer(bytes(w), np.uint8), 0, len(w)))  # noqa: E731
    assert h(word) != h(flipped)
    assert h(word) != h(word + b"\x00")  # a trailing zero byte is not padding


def test_hash_spreads_real_ids_over_the_low_bits() -> None:
    """TREC-style ids (long shared prefixes, few differing digits) fill a table's low
    bits evenly: the tables index by ``h & mask``."""
    from fasteval.kernels.hashing import hash_bytes

    ids = [f"FBIS{3 + i % 2}-{10000 + i}" for i in range(4096)] + [
        f"LA0{i % 9 + 1}0189-{i:04d}" for i in range(4096)
    ]
    blob = "".join(ids).encode()
    buf = np.frombuffer(blob, np.uint8)
    starts = np.cumsum([0] + [len(s) for s in ids[:-1]])
    pairs = zip(starts, ids, strict=True)
    hs = np.array([hash_bytes(buf, s, s + len(w)) for s, w in pairs], np.uint64)
    assert len(set(hs.tolist())) == len(ids)
    for bits in (8, 12):
        counts = np.bincount(
            (hs & np.uint64((1 << bits) - 1)).astype(np.int64), minlength=1 << bits
        )
        expected = len(ids) / (1 << bits)
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        # chi-square with 2^bits - 1 degrees of freedom: mean 2^bits, sd about sqrt(2^(bits+1))
        assert chi2 < (1 << bits) + 6 * np.sqrt(2.0 * (1 << bits)), (bits, chi2)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40), st.binary(max_size=40), st.integers(0, 7), st.integers(0, 7))
def test_equal_bytes_word_by_word_is_byte_equality(a: bytes, b: bytes, pa_: int, pb: int) -> None:
    """Compared eight bytes at a time (at any alignment), then byte by byte: equal
    exactly when the slices are; also for a slice against a copy of itself."""
    from fasteval.kernels.hashing import equal_bytes

    buf = np.frombuffer(b"\xff" * pa_ + a + b"\xee" * pb + b + a, np.uint8)
    sa, sb, sc = pa_, pa_ + len(a) + pb, pa_ + len(a) + pb + len(b)
    assert equal_bytes(buf, sa, sa + len(a), buf, sb, sb + len(b)) == (a == b)
    assert equal_bytes(buf, sa, sa + len(a), buf, sc, sc + len(a))
