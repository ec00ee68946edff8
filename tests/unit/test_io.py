"""Readers: formats trec_eval accepts, and a clear error for everything else."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.errors import DataMismatchError, FastevalWarning, InputFormatError, SchemaError
from fasteval.io import tables

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 0\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 x 3 1.0 r1\n2 Q0 d 1 5 r1\n2 Q0 a 2 4 r1\n"


def test_reads_spaces_tabs_junk_columns_comments_and_blank_lines(write):
    q = write("q.txt", "# a comment\n1\t0  a 1\n\n  1 0 b 0 trailing junk\n")
    r = write("r.txt", "1 Q0 a 1 2.5 run more junk at\n#c\n1\tQ0\tb\t2\t1.5\trun\r\n")
    qr = fasteval.load_qrels(q)
    assert qr.rows() == [("1", "a", 1), ("1", "b", 0)]
    runs = fasteval.load_runs(r)
    assert runs.select("run_id", "doc_id", "rank", "score").rows() == [
        ("run", "a", 1, 2.5),
        ("run", "b", 2, 1.5),
    ]


def test_hash_inside_a_field_is_data_not_a_comment(write):
    q = write("q.txt", "1 0 CR#93E 1\n")
    assert fasteval.load_qrels(q)["doc_id"].to_list() == ["CR#93E"]


def test_gzip_input_equals_plain(tmp_path, write):
    plain = write("r.txt", RUN)
    gz = tmp_path / "r.txt.gz"
    gz.write_bytes(gzip.compress(RUN.encode()))
    assert fasteval.load_runs(gz).equals(fasteval.load_runs(plain))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("1 Q0 a 1 2.0\n", "expected at least 6 columns"),
        ("1 Q0 a 1 abc r\n", "score is not a finite number: 'abc'"),
        ("1 Q0 a 1 nan r\n", "score is not a finite number: 'nan'"),
        ("1 Q0 a 1 inf r\n", "score is not a finite number: 'inf'"),
    ],
)
def test_malformed_run_line_names_file_line_and_value(write, text, needle):
    r = write("bad.run", "1 Q0 z 1 1.0 r\n" + text)
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs(r)
    assert needle in str(e.value)
    assert "bad.run:2" in str(e.value)


def test_malformed_qrels_grade(write):
    q = write("q.txt", "1 0 a 1\n1 0 b x\n")
    with pytest.raises(InputFormatError, match=r"q.txt:2: relevance is not an integer: 'x'"):
        fasteval.load_qrels(q)


def test_lenient_skips_and_reports(write):
    r = write("r.run", "1 Q0 a 1 1.0 r\n1 Q0 b 1 oops r\n1 Q0 c\n")
    with pytest.warns(FastevalWarning, match=r"skipped 2 malformed run line\(s\)"):
        df = fasteval.load_runs(r, lenient=True)
    assert df["doc_id"].to_list() == ["a"]


def test_empty_file(write):
    with pytest.raises(InputFormatError, match="no lines found"):
        fasteval.load_runs(write("empty.run", "\n# only a comment\n"))


def test_missing_path():
    with pytest.raises(InputFormatError, match=r"no such file: .*nope\.run"):
        fasteval.load_runs("nope.run")


def test_run_tag_must_be_constant_in_a_file(write):
    r = write("two.run", "1 Q0 a 1 1.0 A\n1 Q0 b 2 0.5 B\n")
    with pytest.raises(InputFormatError, match=r"two.run:2: run tag 'B' differs from 'A'"):
        fasteval.load_runs(r)
    assert fasteval.load_runs(r, run_id_from="filename")["run_id"].unique().to_list() == ["two.run"]


def test_duplicate_document_in_ranking_is_an_error_or_first_kept(write):
    q = write("q", QRELS)
    r = write("dup.run", "1 Q0 a 1 3.0 r\n1 Q0 b 2 2.0 r\n1 Q0 a 3 1.0 r\n")
    with pytest.raises(InputFormatError, match=r"dup.run:3: document 'a' appears more than once"):
        fasteval.evaluate(q, r, ["map"])
    got = fasteval.evaluate(q, r, ["num_ret", "map"], on_duplicate="first", per_query=False)
    clean = write("clean.run", "1 Q0 a 1 3.0 r\n1 Q0 b 2 2.0 r\n")
    want = fasteval.evaluate(q, clean, ["num_ret", "map"], per_query=False)
    assert got.equals(want)


def test_duplicate_qrels_row(write):
    q = write("dq", "1 0 a 1\n1 0 b 0\n1 0 a 0\n")
    r = write("r", RUN)
    with pytest.raises(
        InputFormatError, match=r"dq:3: duplicate judgment .* 'a' \(first at .*dq:1\)"
    ):
        fasteval.evaluate(q, r, ["map"])


def test_no_query_in_common(write):
    q = write("q", "7 0 a 1\n")
    r = write("r", RUN)
    with pytest.raises(DataMismatchError, match="no query in common"):
        fasteval.evaluate(q, r, ["map"])


def test_tables_and_frames_as_input(write):
    q = write("q", QRELS)
    r = write("r", RUN)
    from_files = fasteval.evaluate(q, r, ["map", "P_5"])
    qf = fasteval.load_qrels(q)
    rf = fasteval.load_runs(r)
    assert fasteval.evaluate(qf, rf, ["map", "P_5"]).equals(from_files)
    assert fasteval.evaluate(qf.to_arrow(), rf.to_arrow(), ["map", "P_5"]).equals(from_files)


def test_table_schema_errors():
    with pytest.raises(SchemaError, match="missing column"):
        fasteval.evaluate(pl.DataFrame({"query_id": ["1"]}), pl.DataFrame(), ["map"])
    qrels = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    run = pl.DataFrame(
        {"run_id": ["r"], "query_id": ["1"], "doc_id": ["a"], "score": [float("nan")]}
    )
    with pytest.raises(InputFormatError, match="row 1: score is not a finite number"):
        fasteval.evaluate(qrels, run, ["map"])


@pytest.mark.parametrize(
    ("scores", "bad_row"),
    [
        ([1e308, 1e308, -1.0], None),
        ([1e308, 1e308, float("nan")], 3),
        ([1.0, float("-inf"), 2.0], 2),
        ([float("inf"), float("-inf"), 2.0], 1),
    ],
)
def test_a_frame_score_is_finite_or_its_row_is_named(scores: list[float], bad_row: int | None):
    qrels = pl.DataFrame({"query_id": ["1"] * 3, "doc_id": list("abc"), "relevance": [1, 0, 1]})
    run = pl.DataFrame(
        {"run_id": ["r"] * 3, "query_id": ["1"] * 3, "doc_id": list("abc"), "score": scores}
    )
    if bad_row is None:
        assert fasteval.evaluate(qrels, run, ["map"]).height > 0
    else:
        with pytest.raises(InputFormatError, match=f"row {bad_row}: score is not a finite"):
            fasteval.evaluate(qrels, run, ["map"])


def test_parquet_round_trip(tmp_path, write):
    from fasteval.io.writers import write_arrow as write_parquet

    r = write("r", RUN)
    df = fasteval.load_runs(r)
    write_parquet(df.to_arrow(), tmp_path / "a.parquet")
    back = fasteval.load_runs(tmp_path / "a.parquet")
    assert back.equals(df)


def test_float_parsing_is_exact_against_python(write):
    rng = np.random.default_rng(7)
    values = [
        "100000.1546100",
        "-5.25",
        "1e-7",
        "3.0E+2",
        "0.000",
        "-0",
        "12345678901234567890",
        "1.7976931348623157e308",
        "4.9e-324",
        ".5",
        "5.",
        "+2.5",
        "0.1",
        "123456789.123456789",
    ] + [repr(float(x)) for x in rng.normal(0, 1e6, 200)]
    text = "".join(f"1 Q0 d{i} {i} {v} r\n" for i, v in enumerate(values))
    df = fasteval.load_runs(write("f.run", text))
    assert df["score"].to_list() == [float(v) for v in values]


def test_sliced_arrow_table_is_read_at_its_offset(write):
    q = write("q", QRELS)
    r = fasteval.load_runs(write("r", RUN)).to_arrow()
    sliced = r.slice(3, 2)  # only query 2's rows
    got = fasteval.evaluate(q, sliced, ["num_ret", "map"], per_query=True)
    assert set(got["query_id"].to_list()) == {"2", "all"}
    assert got.filter(got["measure"] == "num_ret")["value"].to_list() == [2.0, 2.0]


def test_unreadable_parquet_is_a_clear_error(tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputFormatError, match=r"broken\.parquet: not a readable Parquet file"):
        fasteval.load_runs(bad)
    with pytest.raises(InputFormatError, match=r"no such file: .*gone\.parquet"):
        fasteval.load_runs(tmp_path / "gone.parquet")


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), max_size=40),
    cut=st.integers(0, 40),
    start=st.integers(0, 10),
)
def test_arrow_buffers_read_as_pyarrow_reads_them(values, cut, start):
    """numeric_numpy / null_mask / numeric_array (buffer-level, no pandas) agree with pyarrow."""
    import pyarrow as pa

    from fasteval.columns import null_mask, numeric_array, numeric_numpy

    vals = np.array([0 if v is None else v for v in values], np.int64)
    bad = np.array([v is None for v in values], np.bool_)
    arr = numeric_array(vals, bad)
    assert arr.to_pylist() == values
    as_float = numeric_array(vals, bad, np.float64)
    assert as_float.type == pa.float64()
    assert as_float.to_pylist() == [None if v is None else float(v) for v in values]
    pieces = [arr.slice(0, cut), arr.slice(min(start, len(values)))]
    for a in [arr, arr.slice(min(start, len(values))), pa.chunked_array(pieces, pa.int64())]:
        want = a.to_pylist()
        assert null_mask(a).tolist() == [v is None for v in want]
        assert numeric_numpy(a, null=-1).tolist() == [-1 if v is None else v for v in want]


@pytest.mark.parametrize("gz", [False, True])
def test_small_text_readers_name_the_file_and_byte_of_non_utf8_input(tmp_path, gz):
    from fasteval.io.qrels_jg import read_qrels_jg
    from fasteval.io.zscores import read_zscores

    data = b"401 map 0.25 0.1\n402 map 0.3\xe9 0.1\n"
    path = tmp_path / ("z.txt.gz" if gz else "z.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    for reader in (read_zscores, read_qrels_jg):
        with pytest.raises(InputFormatError, match=rf"{path.name}:2: not valid UTF-8 \(byte 28 "):
            reader(path)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["runA", "b", "a-very-long-run-name-1", "é"]), st.integers(1, 4)),
        min_size=1,
        max_size=25,
    ),
    st.booleans(),
)
def test_run_codes_from_views_as_from_strings(runs: list[tuple[str, int]], few: bool) -> None:
    """A polars frame's run ids (numbered from their views, or by the strings past
    FEW_HEADS runs of equal ids) get the codes and names a large_string table gets."""
    ids = [r for r, k in runs for _ in range(k)]
    n = len(ids)
    frame = pl.DataFrame(
        {
            "run_id": ids,
            "query_id": ["q1"] * n,
            "doc_id": [f"d{i}" for i in range(n)],
            "score": [float(-i) for i in range(n)],
        }
    )
    from fasteval import columns

    saved = columns.FEW_HEADS
    columns.FEW_HEADS = saved if few else 0
    try:
        got = tables.run_columns([frame])
    finally:
        columns.FEW_HEADS = saved
    want = tables.runs_from_table(
        frame.to_arrow(compat_level=pl.CompatLevel.oldest()), "run DataFrame"
    )
    assert got.run_names == want.run_names == list(dict.fromkeys(ids))
    np.testing.assert_array_equal(got.run, want.run)
    assert got.run.dtype == np.int32


@settings(max_examples=80, deadline=None)
@given(
    runs=st.lists(st.tuples(st.integers(-(2**40), 2**40), st.integers(1, 9)), min_size=1),
    kind=st.sampled_from(["int64", "int32", "uint64", "uint8"]),
    cut=st.integers(0, 5),
)
def test_an_integer_id_column_reads_as_its_decimal_text(runs, kind, cut):
    """Integer ids become their decimal text, whether each run of equal values is
    turned into text once (few runs) or every row is (many), in a slice or chunks."""
    import pyarrow as pa

    from fasteval.io.validate import str_column

    typ = getattr(pa, kind)()
    bounds = {"uint8": (0, 255), "uint64": (0, 2**40), "int32": (-(2**31), 2**31 - 1)}
    lo, hi = bounds.get(kind, (-(2**40), 2**40))
    values = [min(max(v, lo), hi) for v, k in runs for _ in range(k)]
    assume(len(values) > cut)
    arr = pa.array(values, typ)
    half = len(values) // 2
    for col in (arr, arr.slice(cut), pa.chunked_array([arr.slice(0, half), arr.slice(half)], typ)):
        table = pa.table({"query_id": col})
        got = str_column(table, "t", "query_id")
        want = [str(v) for v in table.column("query_id").to_pylist()]
        assert got.strings(np.arange(len(want))) == want


@settings(deadline=None)  # the first draw loads the kernels
@given(
    ids=st.lists(st.sampled_from(["a", "b", "ab", "", "q10", "\u00e9"]), min_size=1, max_size=40),
    cut=st.integers(0, 5),
)
def test_a_dictionary_id_column_knows_its_runs_of_equal_ids(ids, cut):
    """A dictionary column (an archive's, a categorical's) gives its runs of equal ids
    from its indices: the runs a scan of the strings finds, in a slice or chunks too."""
    import pyarrow as pa

    from fasteval.io.validate import str_column
    from fasteval.kernels import strings as kstr

    assume(len(ids) > cut)
    arr = pa.array(ids).dictionary_encode()
    half = len(ids) // 2
    chunks = pa.chunked_array([arr.slice(0, half), arr.slice(half)])
    for col in (arr, arr.slice(cut), chunks):
        got = str_column(pa.table({"query_id": col}), "t", "query_id")
        assert got.heads is not None
        assert len(got) == len(col)
        # read from its runs: no offsets per row are made for it
        assert got.strings(np.arange(len(got))) == col.to_pylist()
        rows = np.arange(len(got))[::-1].copy()
        assert got.bytes_of(rows) == [v.encode() for v in col.to_pylist()[::-1]]
        assert got._starts is None
        # offsets per row, made when asked for, hold the same strings
        assert got.heads.tolist() == kstr.equal_runs(got.buf, got.starts, got.ends).tolist()
        made = [bytes(got.buf[a:b]) for a, b in zip(got.starts, got.ends, strict=True)]
        assert made == [v.encode() for v in col.to_pylist()]


def test_trec_text_of_a_frame_with_runs_interleaved_keeps_each_run_together(write):
    from fasteval.io.writers import format_jsonl, format_trec
    from fasteval.measures.parser import parse_measures

    r2 = RUN.replace(" r1\n", " r2\n")
    df = fasteval.evaluate(write("q", QRELS), [write("a", RUN), write("b", r2)], ["map", "P.5"])
    mixed = df.sort("query_id", "measure", maintain_order=True)  # r1, r2, r1, r2, ...
    assert mixed["run_id"].to_list() != df["run_id"].to_list()
    ms = parse_measures(["map", "P.5"])
    assert format_trec(mixed, ms) == format_trec(df, ms)
    # JSON lines stay in the frame's own order
    got = [line.split('"run_id": ')[1] for line in format_jsonl(mixed).splitlines()]
    assert got == [f'"{r}"}}' for r in mixed["run_id"].to_list()]
