"""io.formats: what an input's name says it holds, and how it opens."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from fasteval.io import files, formats


@pytest.mark.parametrize(("packed", "name"), [(False, "run"), (True, "run.gz"), (True, "run")])
def test_text_reads_the_same_plain_or_gzip_with_text_mode_newlines(
    tmp_path: Path, packed: bool, name: str
) -> None:
    # gzip is told by the first bytes, not the name
    raw = b"q1 Q0 d1 1 2.5 run-a\r\nq1 Q0 d2 2 1.5 run-a\rq2 Q0 d3 1 0.5 run-a\n"
    p = tmp_path / name
    p.write_bytes(gzip.compress(raw) if packed else raw)
    plain = tmp_path / "plain"
    plain.write_bytes(raw)
    assert files.read_text(p) == plain.read_text()  # universal newlines, as open() reads
    assert formats.unpacked_size(p) == len(raw)
    assert formats.first_tag(p) == "run-a"
    with formats.open_bytes(p) as f:
        assert f.read() == raw
    assert formats.head(p, 8) == raw[:8]


def test_names_say_the_format() -> None:
    assert formats.is_parquet("a/RUNS.PQ") and formats.is_parquet(Path("x.parquet"))
    assert not formats.is_parquet("x.parquet.gz")
    assert [formats.table_format(n) for n in ("d.csv.gz", "d.ndjson", "d.parquet", "d.sgml")] == [
        "csv",
        "jsonl",
        "parquet",
        "trec",
    ]


def test_first_tag_of_a_short_or_missing_file(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("\n\nq1 Q0 d1\n")
    assert formats.first_tag(short) is None
    assert formats.first_tag(tmp_path / "absent") is None
    assert formats.head(tmp_path / "absent") is None
