"""String columns read from Arrow in every layout, and runs of equal ids encoded."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval import columns
from fasteval.columns import StrColumn, dict_encode, encode_heads, first_rows

# ids short enough to sit inside a string view (<= 12 bytes) and longer ones,
# with non-ASCII text (byte lengths differ from character lengths)
ONE_ID = st.one_of(
    st.sampled_from(
        ["401", "402", "FBIS3-10082", "FBIS3-100820", "LA010189-0001", "", "é", "Ωmega-ünï-id"]
    ),
    st.text(min_size=0, max_size=30),
)
IDS = st.lists(ONE_ID, min_size=0, max_size=60)


def _values(col: StrColumn) -> list[str]:
    return [bytes(col.buf[s:e]).decode("utf-8") for s, e in zip(col.starts, col.ends, strict=True)]


@settings(max_examples=150, deadline=None)
@given(IDS, st.integers(0, 5), st.integers(0, 5))
def test_string_view_read_in_place(ids: list[str], head: int, tail: int) -> None:
    """A string_view array (whole or sliced) gives the same strings as large_string."""
    arr = pa.array(ids, pa.string_view())
    assume(head + tail <= len(ids))
    part = arr.slice(head, len(ids) - head - tail)
    col = StrColumn.from_arrow(part)
    assert col.in_place() is not None
    assert _values(col) == ids[head : len(ids) - tail]
    assert col.to_arrow().to_pylist() == ids[head : len(ids) - tail]


@settings(max_examples=60, deadline=None)
@given(st.lists(IDS, min_size=1, max_size=4))
def test_string_view_chunks_with_several_data_buffers(chunks: list[list[str]]) -> None:
    """Chunks combined: a view array whose long strings live in several data buffers."""
    arr = pa.chunked_array([pa.array(c, pa.string_view()) for c in chunks], pa.string_view())
    flat = [s for c in chunks for s in c]
    assert _values(StrColumn.from_arrow(arr)) == flat


def test_polars_frame_strings_read_as_views() -> None:
    """polars hands its strings over as views (no cast); long ids sit in its data buffers."""
    ids = ["LA010189-0001", "FT911-3", "FBIS3-10082", "FBIS3-100820", "a" * 40, "FT911-3"]
    table = pl.DataFrame({"doc_id": ids}).to_arrow(compat_level=pl.CompatLevel.newest())
    col = StrColumn.from_arrow(table.column("doc_id"))
    assert _values(col) == ids


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["q1", "q22", "long-query-id-007", "é"]), st.integers(1, 5)))
)
def test_dict_encode_views_and_bytes_agree(runs: list[tuple[str, int]]) -> None:
    """Runs of equal ids give the same codes and first rows from views as from bytes,
    and the codes number the ids by first appearance."""
    ids = [s for s, k in runs for _ in range(k)]
    by_views = dict_encode(StrColumn.from_arrow(pa.array(ids, pa.string_view())))
    by_bytes = dict_encode(StrColumn.from_arrow(pa.array(ids, pa.large_string())))
    np.testing.assert_array_equal(by_views[0], by_bytes[0])
    np.testing.assert_array_equal(by_views[1], by_bytes[1])
    order = list(dict.fromkeys(ids))
    assert by_views[0].tolist() == [order.index(s) for s in ids]
    assert by_views[1].tolist() == [ids.index(s) for s in order]


def test_equal_long_strings_with_unequal_views_share_a_code() -> None:
    """The same long id stored twice has two views: still one code."""
    a = pa.array(["long-document-id-1"], pa.string_view())
    b = pa.array(["long-document-id-1", "x"], pa.string_view())
    arr = pa.chunked_array([a, b])
    codes, first = dict_encode(StrColumn.from_arrow(arr))
    assert codes.tolist() == [0, 0, 1]
    assert first.tolist() == [0, 2]


LONG_IDS = ["q1", "long-query-id-007", "long-query-id-008", "long-query-id-0071", "é-long-id-12"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(LONG_IDS), st.integers(1, 4)), min_size=1),
    st.integers(0, 3),
    st.lists(st.integers(1, 12), max_size=3),
)
def test_heads_start_where_the_id_changes_only(
    runs: list[tuple[str, int]], cut: int, sizes: list[int]
) -> None:
    """The heads of runs of equal ids, from views as from bytes: a long id stored apart
    on every row (as files and frames store them) is compared by its bytes, in one
    data buffer or several (``sizes``: the arrays joined), in a slice or not."""
    ids = [s for s, k in runs for _ in range(k)]
    assume(len(ids) > cut)
    bounds = sorted({0, len(ids), *(min(x, len(ids)) for x in itertools.accumulate(sizes))})
    views = pa.concat_arrays(
        [pa.array(ids[a:b], pa.string_view()) for a, b in itertools.pairwise(bounds)]
    )
    sub = ids[cut:]
    want = [i for i in range(len(sub)) if i == 0 or sub[i] != sub[i - 1]]
    for arr in (views.slice(cut), pa.array(sub, pa.large_string())):
        col = StrColumn.from_arrow(arr)
        heads = encode_heads(col)
        assert heads.rows.tolist() == want
        order = list(dict.fromkeys(sub))
        assert heads.codes.tolist() == [order.index(sub[i]) for i in want]
        assert heads.first.tolist() == [sub.index(s) for s in order]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=80))
def test_first_rows_is_unique_with_first_index(codes: list[int]) -> None:
    arr = np.array(codes, np.int32)
    values, first = first_rows(arr)
    want_values, want_first = np.unique(arr, return_index=True)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(first, want_first)


@settings(max_examples=150, deadline=None)
@given(IDS, st.integers(0, 5), st.data())
def test_view_rows_read_before_the_buffer_is_made(
    ids: list[str], head: int, data: st.DataObject
) -> None:
    """A view column's chosen rows read (bytes, take, strings, value) before its
    buffer is made are copied alone, and give the strings the buffer then gives."""
    assume(head <= len(ids))
    col = StrColumn.from_arrow(pa.array(ids, pa.string_view()).slice(head))
    rest = ids[head:]
    rows = np.array(
        data.draw(st.lists(st.integers(0, max(len(rest) - 1, 0)), max_size=10 if rest else 0)),
        np.int64,
    )
    assert col.bytes_of(rows) == [rest[i].encode() for i in rows]
    assert col.take(rows).to_pylist() == [rest[i] for i in rows]
    assert col.strings(rows) == [rest[i] for i in rows]
    if rest:
        assert col.value(len(rest) - 1) == rest[-1]
    assert len(col) == len(rest)
    assert col._buf is None  # nothing made whole yet
    starts, ends = col.starts, col.ends
    assert [bytes(col.buf[s:e]).decode() for s, e in zip(starts, ends, strict=True)] == rest
    assert col.bytes_of(rows) == [rest[i].encode() for i in rows]  # now from the buffer
    assert _values(col) == rest


def test_views_in_several_data_buffers_read_from_each() -> None:
    """Long ids spread over several data buffers (concatenated views arrays) are read
    from the right buffer, in place and once made whole."""
    parts = [
        pa.array([f"long-document-{k}-{i:04d}" for i in range(50)] + ["short"], pa.string_view())
        for k in range(3)
    ]
    arr = pa.concat_arrays(parts)
    assert len(arr.buffers()) > 3  # more than one data buffer
    want = arr.to_pylist()
    col = StrColumn.from_arrow(arr.slice(7))
    rows = np.arange(len(want) - 7, dtype=np.int64)[::-1].copy()
    assert col.strings(rows) == [want[7 + int(i)] for i in rows]
    assert _values(col) == want[7:]


def _by_arrow(fn, col):  # type: ignore[no-untyped-def]
    """``fn(col)`` with every run of equal ids numbered by Arrow (no head is "few")."""
    saved = columns.FEW_HEADS
    columns.FEW_HEADS = -1
    try:
        return fn(col)
    finally:
        columns.FEW_HEADS = saved


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(ONE_ID, st.integers(1, 4)), max_size=30))
def test_dict_encode_few_values_in_python_as_arrow_numbers_them(
    runs: list[tuple[str, int]],
) -> None:
    """The Python dict used for few runs of equal ids and Arrow's dictionary give the
    same codes and first rows."""
    ids = [s for s, k in runs for _ in range(k)]
    for kind in (pa.string_view(), pa.large_string()):
        col = StrColumn.from_arrow(pa.array(ids, kind))
        few = dict_encode(col)
        many = _by_arrow(dict_encode, col)
        np.testing.assert_array_equal(few[0], many[0])
        np.testing.assert_array_equal(few[1], many[1])
        assert few[0].dtype == np.int32
        assert few[0].shape == (len(ids),)


def test_strings_not_utf8_fail_as_take_fails() -> None:
    """A few strings decoded in Python meet bytes that are not UTF-8 as Arrow does."""
    col = StrColumn(np.frombuffer(b"ok\xff\xfe", np.uint8), np.array([0, 2]), np.array([2, 4]))
    assert col.strings(np.array([0])) == ["ok"]
    with pytest.raises(pa.ArrowInvalid):
        col.take(np.array([1]))
    with pytest.raises(pa.ArrowInvalid):
        col.strings(np.array([0, 1]))


def test_heads_strings_are_the_columns_strings_of_each_codes_first_row() -> None:
    """The heads' strings, decoded from the bytes they were numbered by, are the
    column's strings at each code's first row, for few heads and many; bytes that
    are not UTF-8 fail as the column's strings fail."""
    ids = ["q2", "q2", "q10", "q-" * 9, "q2", "q10", "q-" * 9]
    for kind in (pa.string_view(), pa.large_string()):
        col = StrColumn.from_arrow(pa.array(ids, kind))
        few = encode_heads(col)
        assert few.first_bytes is not None
        assert few.strings(col) == col.strings(few.first) == ["q2", "q10", "q-" * 9]
        many = _by_arrow(encode_heads, col)
        assert many.first_bytes is None
        assert many.strings(col) == few.strings(col)
    bad = StrColumn(np.frombuffer(b"ok\xff\xfe", np.uint8), np.array([0, 2]), np.array([2, 4]))
    with pytest.raises(pa.ArrowInvalid):
        encode_heads(bad).strings(bad)


def test_a_large_view_column_is_made_once_on_first_use() -> None:
    """A view column's buffer and offsets are made when first read (chosen rows need
    none), once, and hold every string (short ones in their views, long ones in the
    data buffer)."""
    n = 30_000
    ids = [f"DOC-{i:08d}" if i % 3 else f"d{i}" for i in range(n)]  # long and short
    col = StrColumn.from_arrow(pa.array(ids, pa.string_view()))
    assert col._buf is None
    assert col.value(5) == "DOC-00000005"  # chosen rows need no buffer
    assert col._buf is None
    assert _values(col) == ids
    buf = col.buf
    assert col.buf is buf and not buf.flags.writeable


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["401", "402", "FBIS3-1008", "", "é"]), st.integers(1, 5))),
)
def test_runs_of_equal_ids_are_found_by_their_bytes(runs: list[tuple[str, int]]) -> None:
    """The heads are the rows whose id differs from the row before's (empty and non-ASCII
    ids among them), as a large_string column and as string views."""
    ids = [s for s, k in runs for _ in range(k)]
    assume(len(ids) >= 2)
    want = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    for kind in (pa.large_string(), pa.string_view()):
        col = StrColumn.from_arrow(pa.array(ids, kind))
        assert encode_heads(col).rows.tolist() == want
