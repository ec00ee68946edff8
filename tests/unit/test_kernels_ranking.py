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
