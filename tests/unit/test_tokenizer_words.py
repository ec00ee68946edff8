"""The tokenizer and the id runs read eight bytes a step: every byte must count as before.

A field's end is the first blank (a byte below 33 that is a blank); a control byte
below 33 inside a field belongs to it. Short ids are compared as one masked word,
a field near the buffer's end byte by byte. Each case is checked against Python's
own reading of the same lines.
"""

from __future__ import annotations

import numpy as np
import pytest

from fasteval.io import tokens
from fasteval.kernels import strings as kstr


def _tokenize(text: bytes) -> tokens.Tokens:
    buf = np.frombuffer(text, np.uint8).copy()
    return tokens.tokenize_buffer(
        buf, np.array([0]), np.array([buf.shape[0]]), ["f"], tokens.RUN_LINE
    )


def _field(tok: tokens.Tokens, j: int) -> list[bytes]:
    col = tok.field(j)
    return [bytes(col.buf[s:e]) for s, e in zip(col.starts, col.ends, strict=True)]


@pytest.mark.parametrize(
    "doc",
    [
        b"d",
        b"doc\x01x",
        b"document\x01",
        b"a-very-long-document-id\x02with\x1fcontrols",
        b"12345678",
    ],
)
def test_fields_keep_control_bytes_and_end_at_blanks(doc: bytes) -> None:
    lines = [b"1 Q0 " + doc + b" 1 2.5 tag", b"1\tQ0\t" + doc + b"\t2\t1.5\ttag"]
    tok = _tokenize(b"\n".join(lines) + b"\n")
    assert _field(tok, 1) == [doc, doc]
    assert _field(tok, 0) == [b"1", b"1"]
    assert tok.ival.tolist() == [1, 2]
    assert tok.fval.tolist() == [2.5, 1.5]
    assert tok.n_fields.tolist() == [6, 6]


def test_a_field_at_the_end_of_the_buffer() -> None:
    tok = _tokenize(b"1 Q0 d 1 2 t\n7 Q0 e\x01f 2 1 t\n")
    assert _field(tok, 1) == [b"d", b"e\x01f"]
    assert tok.same_bad.tolist() == [-1]


@pytest.mark.parametrize(
    ("tags", "bad"),
    [
        ([b"runA", b"runA", b"runB"], 2),
        ([b"run", b"runX", b"run"], 1),
        ([b"abcdefgh", b"abcdefgh", b"abcdefgi"], 2),
        ([b"abcdefghij", b"abcdefghij", b"abcdefghik"], 2),
        ([b"t", b"t", b"t"], -1),
    ],
)
def test_a_changed_tag_is_found(tags: list[bytes], bad: int) -> None:
    text = b"".join(b"1 Q0 d%d %d 1.0 " % (i, i) + t + b"\n" for i, t in enumerate(tags))
    assert _tokenize(text + b"1 Q0 z 9 1.0 " + tags[0] + b"\n").same_bad.tolist() == [bad]


def test_runs_of_equal_ids() -> None:
    ids = [b"148", b"148", b"149", b"1480", b"1480", b"abcdefgh", b"abcdefgi", b"", b"", b"12"]
    buf = np.frombuffer(b"".join(ids) + b"x" * 8, np.uint8).copy()  # words may read past an id
    ends = np.cumsum([len(i) for i in ids]).astype(np.int64)
    starts = ends - np.array([len(i) for i in ids])
    want = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    assert kstr.equal_runs(buf, starts, ends).tolist() == want
    short = buf[: int(ends[-1])]  # the last ids end the buffer: compared byte by byte
    assert kstr.equal_runs(short, starts, ends).tolist() == want
