"""Large files are tokenised in line-aligned ranges: the result must not show it.

``SUBRANGE_BYTES`` is lowered so that small files are cut into many ranges;
every column, line number and error message must equal the uncut reading.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval.errors import InputFormatError
from fasteval.io import files, tokens, trec
from fasteval.kernels import text as ktext


def _run_lines(rng: np.random.Generator, tag: str, n_q: int = 12, depth: int = 30) -> list[str]:
    lines = []
    for q in range(n_q):
        for r in range(depth):
            score = f"{rng.normal():.{int(rng.integers(1, 20))}g}"
            lines.append(f"{q + 1} Q0 doc{int(rng.integers(0, 500))} {r} {score} {tag}")
    return lines


def _columns(paths: list[Path]) -> dict[str, object]:
    cols = trec.parse_run_files(paths)
    return {
        "names": cols.run_names,
        "run": cols.run.tolist(),
        "qid": [cols.qid.value(i) for i in range(len(cols))],
        "doc": [cols.doc.value(i) for i in range(len(cols))],
        "score": cols.score.tolist(),
        "rank": cols.rank.to_pylist(),
        "where": [cols.source.where(i) for i in range(len(cols))],
    }


def _both(monkeypatch: pytest.MonkeyPatch, fn, *args):  # type: ignore[no-untyped-def]
    whole = fn(*args)
    with monkeypatch.context() as m:
        m.setattr(tokens, "SUBRANGE_BYTES", 64)
        cut = fn(*args)
    return whole, cut


@pytest.mark.parametrize("n_lines", [100, 105, 119, 10, 3])
def test_a_file_is_cut_into_ranges_of_equal_lines(n_lines: int) -> None:
    """Threads take the ranges in turn: none holds much more than another (the last
    is not left with up to twice the others' lines)."""
    line = b"1 Q0 doc 1 0.5 tag\n"
    buf = np.frombuffer(line * n_lines, np.uint8)
    starts, ends, _ = tokens._subranges(
        buf, np.array([0]), np.array([buf.shape[0]]), 10 * len(line)
    )
    per = (ends - starts) // len(line)
    assert int(per.sum()) == n_lines and starts[0] == 0 and (starts[1:] == ends[:-1]).all()
    assert per.shape[0] == max(1, round(n_lines / 10))
    assert int(per.max()) - int(per.min()) <= 1


def test_ranges_give_the_columns_of_whole_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(5)
    paths = []
    for i, tag in enumerate(["a", "b", "c"]):
        lines = _run_lines(rng, tag)
        # blank and comment lines shift the line numbers of later ranges
        lines[40:40] = ["", "# a comment", "   "]
        p = tmp_path / f"r{i}.txt"
        p.write_text("\n".join(lines) + ("\n" if i else ""))  # one without a last newline
        paths.append(p)
    whole, cut = _both(monkeypatch, _columns, paths)
    assert len(whole["doc"]) == 3 * 12 * 30
    assert cut == whole


def _error(paths: list[Path]) -> str:
    with pytest.raises(InputFormatError) as e:
        trec.parse_run_files(paths)
    return str(e.value)


@pytest.mark.parametrize("where", [5, 200, 359])
def test_a_tag_change_in_any_range_is_found_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: int
) -> None:
    rng = np.random.default_rng(where)
    lines = _run_lines(rng, "t")
    lines[where] = lines[where].rsplit(" ", 1)[0] + " other"
    p = tmp_path / "r.txt"
    p.write_text("\n".join(lines) + "\n")
    whole, cut = _both(monkeypatch, _error, [p])
    assert f"{p}:{where + 1}: run tag 'other'" in whole
    assert cut == whole


def test_a_range_whose_tags_all_differ_from_the_first_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(9)
    lines = _run_lines(rng, "t")
    lines[100:] = [x.rsplit(" ", 1)[0] + " u" for x in lines[100:]]  # consistent after 100
    p = tmp_path / "r.txt"
    p.write_text("\n".join(lines) + "\n")
    whole, cut = _both(monkeypatch, _error, [p])
    assert f"{p}:101: run tag 'u'" in whole
    assert cut == whole


def test_a_bad_score_in_a_later_range_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(3)
    lines = _run_lines(rng, "t")
    lines[250] = lines[250].replace(" t", "").rsplit(" ", 1)[0] + " x1.5 t"
    p = tmp_path / "r.txt"
    p.write_text("\n".join(lines) + "\n")
    whole, cut = _both(monkeypatch, _error, [p])
    assert f"{p}:251:" in whole
    assert cut == whole


@pytest.mark.parametrize("inflate", ["default", "stdlib"])
def test_gzip_files_are_read_alike_whatever_their_members(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inflate: str
) -> None:
    import gzip
    import zlib

    from fasteval.io import gz

    if inflate == "stdlib":  # a platform without isal: the standard library reads them
        monkeypatch.setattr(gz, "_gzip", gzip)
        monkeypatch.setattr(gz, "_zlib", zlib)
    else:
        pytest.importorskip("isal")
        assert gz._zlib.__name__ == "isal.isal_zlib"
    rng = np.random.default_rng(17)
    text = ("\n".join(_run_lines(rng, "g")) + "\n").encode()
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text)
    one = tmp_path / "one.gz"  # decompressed straight into the buffer
    one.write_bytes(gzip.compress(text))
    two = tmp_path / "two.gz"  # two members: the trailer gives only the last one's size
    two.write_bytes(gzip.compress(text[:1000]) + gzip.compress(text[1000:]))
    raw = files.read_files([one, plain, two], 2)
    for i in range(3):
        assert bytes(raw.buf[raw.starts[i] : raw.ends[i] - 1]) == text
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(text)[:-50])
    with pytest.raises(InputFormatError, match=r"bad\.gz: not a valid gzip file"):
        files.read_files([one, bad], 2)
    with pytest.raises(InputFormatError, match=r"bad\.gz: not a valid gzip file"):
        files.read_bytes(bad)


@pytest.mark.parametrize("where", [3, 150, 359])
def test_skipped_lines_before_a_tag_change_keep_its_line_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: int
) -> None:
    # rows are laid out by newline counts and the gaps of skipped lines closed
    # afterwards: the row found by the tag check must be moved with them
    rng = np.random.default_rng(where + 1)
    lines = _run_lines(rng, "t")
    lines[where] = lines[where].rsplit(" ", 1)[0] + " other"
    lines[2:2] = ["# header", "", "  \t"]
    lines.append("# trailing comment")
    p = tmp_path / "r.txt"
    p.write_text("\n".join(lines) + "\n")
    whole, cut = _both(monkeypatch, _error, [p])
    assert f"{p}:{where + 1 + 3}: run tag 'other'" in whole
    assert cut == whole


def test_only_skipped_lines_in_a_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    lines = _run_lines(rng, "t")
    lines[100:100] = ["# a long comment block " + "x" * 30] * 20  # ranges of comments only
    p = tmp_path / "r.txt"
    p.write_text("\n".join(lines) + "\n  \n\t\n\n" + " " * 100 + "\n")  # blank lines at the end
    whole, cut = _both(monkeypatch, _columns, [p])
    assert len(whole["doc"]) == 12 * 30
    assert whole["where"][100] == f"{p}:121"
    assert cut == whole


def test_the_newline_count_equals_a_byte_count_at_any_offset_and_length() -> None:
    rng = np.random.default_rng(2)
    data = rng.choice(np.frombuffer(b"ab \n\t", np.uint8), 5000)
    for offset in range(9):  # the word view starts unaligned and aligned
        view = data[offset:]
        words = tokens._words(view)
        for stop in (0, 1, 7, 8, 9, 2040, 2047, 2048, 4096, len(view)):
            n, _ = ktext.newlines(view, words, 0, stop)
            assert n == int(np.count_nonzero(view[:stop] == 10))
    full = np.full(20_001, 10, np.uint8)  # every byte: 255 words fill each lane to the brim
    assert ktext.newlines(full, tokens._words(full), 0, 20_001)[0] == 20_001


def test_the_newline_count_finds_any_byte_that_is_not_ascii() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        data = rng.choice(np.frombuffer(b"ab \n\t", np.uint8), int(rng.integers(1, 300)))
        if rng.random() < 0.7:  # one byte >= 0x80 somewhere, or none
            data[rng.integers(len(data))] = rng.integers(0x80, 0x100)
        s = int(rng.integers(0, len(data)))
        e = int(rng.integers(s, len(data) + 1))
        words = data[: len(data) // 8 * 8].view(np.uint64)
        n, high = ktext.newlines(data, words, s, e)
        assert n == int(np.count_nonzero(data[s:e] == 10))
        assert high == bool((data[s:e] >= 0x80).any())


def test_decimals_the_kernel_declines_are_rounded_as_float(tmp_path: Path) -> None:
    # halfway and near-halfway cases, subnormals, long tails: left to Python's float()
    values = [
        "9007199254740993",
        "9007199254740993.0000000000000000001",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203126",
        "0.1000000000000000055511151231257827021181583404541015625",
        "2.4703282292062327e-324",
        "-4.9e-324",
        "1e-400",
        "0.5",
    ]
    # a no-break space inside an id: one field to the tokenizer (not to str.split)
    lines = [f"1 Q0 d\u00a0{i} {i} {v} r" for i, v in enumerate(values)]
    path = tmp_path / "r.run"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _columns([path])["score"] == [float(v) for v in values]
    data = path.read_bytes()
    buf = np.frombuffer(data + b"\n", np.uint8).copy()
    cols, _ = trec.parse_run_piece(buf, len(data), path)
    assert cols.score.tolist() == [float(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(
    files_=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["1", "2", "10", "1x", "abcdefghij", "abcdefghik"]),
                st.sampled_from(["", "# note", "   "]),
            ),
            min_size=1,
            max_size=40,
        ),
        min_size=1,
        max_size=3,
    ),
    cut=st.sampled_from([16, 64, 1 << 20]),
)
def test_the_runs_the_tokenizer_marks_are_the_runs_of_the_column(
    files_: list[list[tuple[str, str]]], cut: int
) -> None:
    """Query ids come in runs: the tokenizer marks where the id changes while it splits
    the lines (across its ranges and files, skipped lines between), and those heads are
    the ones a scan of the column finds."""
    from fasteval.kernels import strings as kstr

    text = []
    for lines in files_:
        body = "".join(f"{q} Q0 d{i} {i} 1.5 t\n{extra}\n" for i, (q, extra) in enumerate(lines))
        text.append(body.encode())
    assume(any(len(lines) > 1 for lines in files_))
    buf = np.frombuffer(b"".join(text), np.uint8)
    ends = np.cumsum([len(t) for t in text]).astype(np.int64)
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    names = [f"f{i}" for i in range(len(text))]
    old = tokens.SUBRANGE_BYTES
    tokens.SUBRANGE_BYTES = cut
    try:
        tok = tokens.tokenize_buffer(buf, starts, ends, names, tokens.RUN_LINE)
    finally:
        tokens.SUBRANGE_BYTES = old
    col = tok.field(0)
    assert col.heads is not None
    assert col.heads.tolist() == kstr.equal_runs(col.buf, col.starts, col.ends).tolist()
    assert tok.subset(np.arange(len(col))[1:]).new_run is None  # rows left out: unmarked
