"""The ranking kernels' own contracts: exact lookups and repeats, large tables judge right."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval.engine import prepare
from fasteval.kernels import families


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
            assert e >> np.uint64(32) == hash_bytes(buf.ctypes.data, ts[k], te[k]) >> np.uint64(32)
            assert pq.cols.doc.value(int(pq.qr_rows[t.jud[k]])) == doc
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
    h = hash_bytes(buf.ctypes.data, ts[0], te[0])
    hs = np.array([h, h], np.uint64)
    grade = np.empty(2, np.int32)
    jud = np.empty(2, np.int64)
    dup = np.zeros(2, np.bool_)
    seen = np.empty(16, np.int64)  # a set of at least seen_slots(n) slots: 16 for n <= 4
    judge_ranking(other, d_s, d_e, np.arange(2), hs, 0, pq.table, grade, jud, dup, seen)
    assert not dup.any()  # equal hashes, other bytes: no repeat either
    assert grade[0] == families.NONPOOL and jud[0] == -1
    g = judged[("q0", bytes(buf[ts[0] : te[0]]).decode())]
    assert grade[1] == (g if g >= 0 else families.UNJUDGED) and jud[1] == pq.table.jud[0]


@settings(max_examples=25, deadline=None)
@given(
    n_ranked=st.integers(0, 2500),
    n_distinct=st.integers(1, 600),
    seed=st.integers(0, 999),
)
def test_repeated_ids_are_flagged_after_their_first_row_and_judged_alike(
    n_ranked, n_distinct, seed
) -> None:
    """Repeats found in the ranking's own set equal a Python set's answer, judged or not."""
    from fasteval.kernels.hashing import hash_ranking, judge_ranking

    qrels, judged = _judged_frame(1, seed)
    pq = prepare(qrels, _one_run(qrels)).enc.prepared
    assert pq is not None
    rng = np.random.default_rng(seed)
    names = [d for _, d in judged] + [f"NEW-{i}" for i in range(600)]
    pick = rng.choice(len(names), n_distinct, replace=False)
    docs = [names[int(i)] for i in pick[rng.integers(0, n_distinct, n_ranked)]]
    raw = "".join(docs).encode()
    ends = np.cumsum([len(d) for d in docs], dtype=np.int64)
    starts = ends - np.array([len(d) for d in docs], dtype=np.int64)
    buf = np.frombuffer(raw + b"\0", np.uint8)
    rows = rng.permutation(n_ranked).astype(np.int64)  # input order is not buffer order
    hs = np.empty(n_ranked, np.uint64)
    grade = np.empty(n_ranked, np.int32)
    jud = np.empty(n_ranked, np.int64)
    dup = np.zeros(n_ranked, np.bool_)
    hash_ranking(buf, starts, ends, rows, hs)
    seen = np.empty(16 + 8 * n_ranked, np.int64)  # at least seen_slots(n_ranked)
    judge_ranking(buf, starts, ends, rows, hs, 0, pq.table, grade, jud, dup, seen)
    seen: set[str] = set()
    for i, r in enumerate(rows.tolist()):
        doc = docs[r]
        assert dup[i] == (doc in seen)
        seen.add(doc)
        g = judged.get(("q0", doc))
        assert grade[i] == (families.NONPOOL if g is None else g if g >= 0 else families.UNJUDGED)
        assert (jud[i] >= 0) == (g is not None)
        if g is not None:
            assert pq.cols.doc.value(int(pq.qr_rows[jud[i]])) == doc


_STEMS = ["", "D", "DOC", "DOC-1", "DOC-12", "DOC-1234", "DOC-12345", "LA010189-0001", "X" * 17]


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n_judged=st.integers(0, 40),
    n_other=st.integers(1, 40),
    n_ranked=st.integers(0, 300),
    n_hashes=st.integers(1, 4),
)
def test_judged_and_repeats_match_a_dict_when_hashes_collide(
    data, n_judged, n_other, n_ranked, n_hashes
) -> None:
    """Ids alike but for a byte or their length, some of the unjudged ones given one of a
    few hashes (judged ids' among them): every row is judged as a dict judges it, and a
    repeat is flagged exactly when its bytes came before, taking its first row's answer."""
    from fasteval.kernels.hashing import hash_bytes, hash_ranking, judge_ranking

    names = sorted({f"{s}{t}" for s in _STEMS for t in ("", "a", "b", "ab", "\xe9")})
    judged_names = data.draw(st.permutations(names))[:n_judged]
    others = [n for n in names if n not in judged_names][:n_other]
    grades = data.draw(st.lists(st.integers(-1, 3), min_size=n_judged, max_size=n_judged))
    judged = dict(zip(judged_names, grades, strict=True))
    universe = judged_names + others
    picks = data.draw(
        st.lists(st.integers(0, len(universe) - 1), min_size=n_ranked, max_size=n_ranked)
    )
    docs = [universe[i] for i in picks]
    assume(len(set(docs)) < len(docs) or n_ranked < 2)  # repeats, unless too short for any
    stray = data.draw(st.lists(st.booleans(), min_size=len(others), max_size=len(others)))
    qrels = pl.DataFrame(
        {"query_id": "q0", "doc_id": judged_names or ["unused"], "relevance": grades or [0]},
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
    )
    if not judged_names:
        judged = {}
        qrels = qrels.with_columns(query_id=pl.lit("other"))
    pq = prepare(qrels, _one_run(qrels)).enc.prepared
    assert pq is not None
    q = pq.qids.index("q0") if "q0" in pq.qids else len(pq.qids)
    blobs = [d.encode() for d in docs]
    lens = np.array([len(b) for b in blobs], np.int64)
    ends = np.cumsum(lens)
    starts = ends - lens
    buf = np.frombuffer(b"".join(blobs) + b"\0", np.uint8)
    rows = np.arange(n_ranked, dtype=np.int64)
    hs = np.empty(n_ranked, np.uint64)
    hash_ranking(buf, starts, ends, rows, hs)
    pool = [hash_bytes(buf.ctypes.data, int(starts[i]), int(ends[i])) for i in range(n_ranked)]
    forced = pool[:n_hashes]
    for i, d in enumerate(docs):  # unjudged ids may take another id's hash: a collision
        if d in others and stray[others.index(d)] and forced:
            hs[i] = forced[others.index(d) % len(forced)]
    grade = np.empty(n_ranked, np.int32)
    jud = np.empty(n_ranked, np.int64)
    dup = np.empty(n_ranked, np.bool_)
    seen = np.empty(16 + 8 * n_ranked, np.int64)
    judge_ranking(buf, starts, ends, rows, hs, q, pq.table, grade, jud, dup, seen)
    first: dict[str, int] = {}
    for i, d in enumerate(docs):
        g = judged.get(d)
        want = families.NONPOOL if g is None else g if g >= 0 else families.UNJUDGED
        assert dup[i] == (d in first), (i, d)
        assert grade[i] == want, (i, d)
        assert (jud[i] >= 0) == (g is not None)
        if g is not None:
            assert pq.cols.doc.value(int(pq.qr_rows[jud[i]])) == d
        if d in first:
            assert jud[i] == jud[first[d]]
        first.setdefault(d, i)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    n=st.integers(0, 120),
    layout=st.sampled_from(["random", "doc_up", "doc_down"]),
    f32=st.booleans(),
)
def test_trec_order_is_a_stable_sort_by_score_then_doc_id_descending(data, n, layout, f32) -> None:
    """Ties (short and long runs, ids listed ascending, descending or mixed, repeated
    ids, scores equal only as float32) in trec_eval's order: a stable sort's answer."""
    import functools

    from fasteval.kernels.order import trec_order

    names = sorted({f"{s}{t}".encode() for s in _STEMS for t in ("", "a", "b", "ab")})
    values = [2.0, 1.0, 1.0 + 1e-9, 0.5, -0.0, 0.0]
    docs = [
        names[i]
        for i in data.draw(st.lists(st.integers(0, len(names) - 1), min_size=n, max_size=n))
    ]
    scores = [
        values[i]
        for i in data.draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
    ]
    if layout != "random":  # score descending, ties' ids one way (as runs often list them)
        up = 1 if layout == "doc_up" else -1
        pairs = sorted(zip(scores, docs, strict=True), key=lambda p: (-p[0], p[1]))
        if up < 0:
            pairs = sorted(
                pairs, key=functools.cmp_to_key(lambda x, y: (x[1] < y[1]) - (x[1] > y[1]))
            )
            pairs = sorted(pairs, key=lambda p: -p[0])
        scores = [p[0] for p in pairs]
        docs = [p[1] for p in pairs]
    lens = np.array([len(d) for d in docs], np.int64)
    ends = np.cumsum(lens)
    starts = ends - lens
    buf = np.frombuffer(b"".join(docs) + b"\0", np.uint8)
    score = np.array(scores, np.float64)
    rows = np.arange(n, dtype=np.int64)
    got = trec_order(rows, score, f32, buf, starts, ends).tolist()
    keys = score.astype(np.float32).astype(np.float64) if f32 else score

    def before(i: int, j: int) -> int:  # score descending, then id bytes descending
        if keys[i] != keys[j]:
            return -1 if keys[i] > keys[j] else 1
        return (docs[i] < docs[j]) - (docs[i] > docs[j])

    assert got == sorted(range(n), key=functools.cmp_to_key(before))


# ----------------------------------------------------------------------------- the id hash


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=30), st.binary(max_size=30), st.binary(max_size=20), st.integers(0, 9))
def test_compare_bytes_orders_as_python_bytes_do(a: bytes, b: bytes, prefix: bytes, pad: int):
    """trec_eval's tie order (strcmp) at any alignment, with long shared prefixes."""
    from fasteval.kernels.hashing import compare_bytes

    a, b = prefix + a, prefix + b
    buf = np.frombuffer(b"\x00" * pad + a + b + b"\xff" * 8, np.uint8)
    s1, s2 = pad, pad + len(a)
    got = int(compare_bytes(buf.ctypes.data, s1, s1 + len(a), s2, s2 + len(b)))
    assert got == (a > b) - (a < b)


def _hash_reference(word: bytes) -> int:
    """hash_bytes written out in Python: the words below the last eight bytes, then
    those eight bytes (4-7 bytes: the first four and the last four; fewer: the bytes)."""
    m = (1 << 64) - 1
    k0, k1, k2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
    n = len(word)
    h = k0 ^ n
    if n >= 8:
        for k in range(0, n - 8, 8):  # the words that start more than 8 bytes from the end
            h = ((h ^ int.from_bytes(word[k : k + 8], "little")) * k1) & m
            h ^= h >> 31
        last = int.from_bytes(word[n - 8 :], "little")
    elif n >= 4:
        last = int.from_bytes(word[:4], "little") | int.from_bytes(word[n - 4 :], "little") << 32
    else:
        last = int.from_bytes(word, "little")
    h = ((h ^ last) * k1) & m
    h ^= h >> 30
    h = (h * k2) & m
    return h ^ (h >> 31)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=40), st.integers(0, 9))
def test_hash_reads_short_tails_as_the_bytes_they_are(word: bytes, pad: int) -> None:
    """The overlapping reads give the value the bytes do, read one by one."""
    from fasteval.kernels.hashing import hash_bytes

    buf = np.frombuffer(b"\xaa" * pad + word + b"\x55" * 9, np.uint8)
    assert int(hash_bytes(buf.ctypes.data, pad, pad + len(word))) == _hash_reference(word)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=40), st.integers(0, 15), st.integers(0, 15))
def test_hash_depends_on_the_bytes_not_where_they_lie(word: bytes, pad_a: int, pad_b: int) -> None:
    """A run's id and a judged id are hashed from different buffers at different offsets."""
    from fasteval.kernels.hashing import hash_bytes

    a = np.frombuffer(b"x" * pad_a + word + b"y" * 7, np.uint8)
    b = np.frombuffer(b"\x00" * pad_b + word + b"\xff" * 3, np.uint8)
    assert hash_bytes(a.ctypes.data, pad_a, pad_a + len(word)) == hash_bytes(
        b.ctypes.data, pad_b, pad_b + len(word)
    )


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=40), st.data())
def test_hash_sees_every_byte_and_the_length(word: bytes, data: st.DataObject) -> None:
    from fasteval.kernels.hashing import hash_bytes

    k = data.draw(st.integers(0, len(word) - 1))
    flipped = bytearray(word)
    flipped[k] ^= data.draw(st.integers(1, 255))

    def h(w: bytes) -> int:
        arr = np.frombuffer(bytes(w), np.uint8)
        return int(hash_bytes(arr.ctypes.data, 0, len(w)))

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
    hs = np.array([hash_bytes(buf.ctypes.data, s, s + len(w)) for s, w in pairs], np.uint64)
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
    p = buf.ctypes.data
    sa, sb, sc = pa_, pa_ + len(a) + pb, pa_ + len(a) + pb + len(b)
    assert equal_bytes(p, sa, sa + len(a), p, sb, sb + len(b)) == (a == b)
    assert equal_bytes(p, sa, sa + len(a), p, sc, sc + len(a))
