"""Lines of text files as tokens, and the checks every line-based reader shares.

The tokenizer (:func:`tokenize_files`) splits lines at blanks in numba kernels into
:class:`Tokens`; a :class:`Skipper` raises for the first malformed line or (lenient)
drops them and warns once; :func:`read_judgments` reads a four-column qrels-like file
(TREC qrels, diversity qrels).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import NamedTuple

import numpy as np

from fasteval import parallel
from fasteval.columns import Source, StrColumn
from fasteval.errors import FastevalError, FastevalWarning, InputFormatError
from fasteval.io.files import PathLike, RawFiles, Workspace, check_utf8, new_array, read_files
from fasteval.kernels import text as ktext

QRELS_FIELDS = 4
"""Columns of a qrels line: ``qid iter docno rel``."""
RUN_FIELDS = 6
"""Columns of a run line: ``qid Q0 docno rank score tag``."""


@dataclass
class Tokens:
    """Tokenised lines of files sharing one byte buffer ``buf`` (one row per line).

    Per row: its file, line number (from 1), where the line starts in ``buf``, its
    number of fields; ``starts, ends`` ``(k, rows)``, the byte ranges of the requested
    string fields (:meth:`field`); the integer and decimal fields and masks of rows
    where they do not parse (``ibad``, ``fbad``); ``new_run``, whether the first string
    field differs from the row before's (None once rows are left out: :meth:`subset`).
    Per file: ``same_bad``, the first row whose "same" field (a run's tag) differs from the
    file's first (or -1), and ``lines``, its newlines as the tokenizer counted them.
    """

    names: list[str]
    buf: np.ndarray
    file_of: np.ndarray
    line_no: np.ndarray
    line_start: np.ndarray
    n_fields: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    ival: np.ndarray
    ibad: np.ndarray
    fval: np.ndarray
    fbad: np.ndarray
    new_run: np.ndarray | None
    same_bad: np.ndarray
    lines: np.ndarray | None = None

    def where(self, r: int) -> str:
        """``file:line`` of row ``r``."""
        return f"{self.names[int(self.file_of[r])]}:{int(self.line_no[r])}"

    def field(self, j: int) -> StrColumn:
        """The ``j``-th requested string field of every row (the first with its runs of equal
        values, when the tokenizer marked them)."""
        marked = self.new_run if j == 0 else None
        heads = None if marked is None else np.flatnonzero(marked)
        return StrColumn(self.buf, self.starts[j], self.ends[j], heads=heads)

    def fields_of(self, r: int) -> list[str]:
        """The fields of row ``r``'s line, re-split (for messages)."""
        return _line_at(self.buf, int(self.line_start[r])).decode("utf-8", "replace").split()

    def field_value(self, r: int, j: int, limit: int | None = 200) -> str:
        """Field ``j`` of row ``r``'s line (``""`` if absent), cut to ``limit`` characters."""
        f = self.fields_of(r)
        return _cut(f[j] if j < len(f) else "", limit)

    def first_rows(self) -> np.ndarray:
        """The first row of each file (files without rows get the next file's first row)."""
        return self.file_bounds()[:-1]

    def file_bounds(self) -> np.ndarray:
        """Where each file's rows start, then the number of rows (rows are in file order)."""
        # keys of file_of's own dtype: others would convert the whole column first
        return np.searchsorted(
            self.file_of, np.arange(len(self.names) + 1, dtype=self.file_of.dtype)
        )

    def line_text(self, r: int) -> str:
        """Row ``r``'s fields joined by single blanks, cut to 200 characters (for messages)."""
        return _cut(" ".join(self.fields_of(r)), 200)

    def subset(self, keep: np.ndarray) -> Tokens:
        """The rows where ``keep`` is true (a mask or row numbers)."""
        rows = [f.name for f in fields(self)][2:-3]  # not names, buf, new_run, same_bad, lines
        # a run's first row left out would leave the next of its value unmarked
        return replace(self, new_run=None, **{k: getattr(self, k)[..., keep] for k in rows})

    def source(self) -> Source:
        """Where each row comes from (file and line), for the readers' columns."""
        return Source(self.names, self.file_of, self.line_no)


def _cut(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def _line_at(buf: np.ndarray, s: int) -> bytes:
    """The line that starts at ``s`` (its newline looked for in growing blocks: lines may
    be very long)."""
    n = e = buf.shape[0]
    at = s
    while at < n:
        block = buf[at : min(n, at + max(4096, at - s))]
        hit = np.flatnonzero(block == 10)
        if hit.size:
            e = at + int(hit[0])
            break
        at += block.shape[0]
    return bytes(buf[s:e])


class Fields(NamedTuple):
    """What the tokenizer takes from each line (field numbers from 0; -1: none)."""

    strings: list[int]  # kept as byte ranges (ids)
    integer: int  # parsed as a decimal integer
    number: int  # parsed as a decimal, correctly rounded
    same: int  # must be the same on every line of a file (a run's tag)


RUN_LINE = Fields([0, 2], 3, 4, 5)  # qid Q0 docno rank score tag
QRELS_LINE = Fields([0, 2], 3, -1, -1)  # qid iter docno rel


SUBRANGE_BYTES = 4 << 20
"""Files larger than this are tokenised in line-aligned ranges of about this size, in parallel."""


def _subranges(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each file ``buf[starts[f]:ends[f]]`` cut into ranges of whole lines of about ``size``,
    as equal as the lines allow (threads take them in turn): the ranges' starts, ends and
    files, in buffer order."""
    r_start: list[int] = []
    r_end: list[int] = []
    r_file: list[int] = []
    for f in range(starts.shape[0]):
        a, b = int(starts[f]), int(ends[f])
        n = max(1, round((b - a) / size))
        # a range ends at the first newline from each of n - 1 equal steps over the file
        for step in [a + (b - a) * k // n - 1 for k in range(1, n)]:
            if step < a:
                continue  # a line longer than a step
            cut = step
            nl = -1
            while cut < b and nl < 0:  # the next newline: lines are short, look in blocks
                hits = np.flatnonzero(buf[cut : min(b, cut + 65536)] == 10)
                nl = cut + int(hits[0]) if hits.size else -1
                cut += 65536
            if nl < 0 or nl + 1 >= b:
                break
            r_start.append(a)
            r_end.append(nl + 1)
            r_file.append(f)
            a = nl + 1
        r_start.append(a)
        r_end.append(b)
        r_file.append(f)
    return (
        np.asarray(r_start, np.int64),
        np.asarray(r_end, np.int64),
        np.asarray(r_file, np.int64),
    )


def exact_decimals(tok: Tokens, j: int, rows: np.ndarray) -> None:
    """Field ``j`` of ``rows`` into ``tok.fval`` by Python's ``float`` (correctly rounded): the
    decimals the tokenizer's two tiers decline (ties, subnormals, 20+ digits) are NaN."""
    for r in rows:
        tok.fval[r] = float(_line_at(tok.buf, int(tok.line_start[r])).split()[j])


def first_with_field(
    n_fields: np.ndarray, ibad: np.ndarray, fbad: np.ndarray, field: int, a: int, b: int
) -> int:
    """The first row of ``a..b`` that has field ``field`` and a parsed number (not a header's
    words), or -1; looked for in growing blocks, as the first row usually is the one."""
    step = 64
    while a < b:
        c = min(b, a + step)
        cand = np.flatnonzero((n_fields[a:c] > field) & ~(ibad[a:c] & fbad[a:c]))
        if cand.size:
            return a + int(cand[0])
        a, step = c, step * 8
    return -1


def _join_same_bad(
    buf: np.ndarray,
    r_file: np.ndarray,
    row_base: np.ndarray,
    out: tuple[np.ndarray, ...],
    same_field: int,
    n_files: int,
) -> np.ndarray:
    """Per file, the first row whose field ``same_field`` differs from the file's first, from
    the kernel's answers per range (each compared to its own first row with that field and
    a parsed number, which is the range's first differing row if it differs from the file's)."""
    _, _, line_start, n_fields, _, _, _, ibad, _, fbad, _, r_bad = out
    same_bad = np.full(n_files, -1, np.int64)
    ref: dict[int, bytes] = {}
    for k in range(r_file.shape[0]):
        f = int(r_file[k])
        if same_bad[f] >= 0:
            continue
        a, b = int(row_base[k]), int(row_base[k + 1])
        r = first_with_field(n_fields, ibad, fbad, same_field, a, b)
        if r < 0:
            continue
        field = _line_at(buf, int(line_start[r])).split()[same_field]
        first = ref.setdefault(f, field)
        same_bad[f] = r if field != first else r_bad[k]
    return same_bad


def _split(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    names: list[str],
    fields: Fields,
    ws: Workspace | None = None,
    lines_before: int = 0,
) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]:
    """Tokenise every file of ``buf`` in parallel; the rows, and each file's newlines and rows
    (lines numbered after ``lines_before``).

    Two passes over ranges of whole lines (:func:`_subranges`): the first counts newlines
    (rows are laid out and numbered by them) and finds the files not ASCII (checked for
    UTF-8); the second splits. Skipped lines leave gaps, closed by :func:`_close_gaps`.
    """
    n_files = starts.shape[0]
    filled = ends > starts
    if (buf[ends[filled] - 1] != 10).any():  # the kernels stop at newlines only
        msg = "internal error: a file in the buffer does not end in a newline"
        raise FastevalError(msg)
    r_start, r_end, r_file = _subranges(buf, starts, ends, SUBRANGE_BYTES)
    n_r = r_start.shape[0]
    sizes = (r_end - r_start).astype(np.float64)
    lines = np.zeros(n_r, np.int64)
    cap = np.zeros(n_r, np.int64)
    high = np.zeros(n_r, np.bool_)
    parallel.run(ktext.count_newlines, sizes, buf, _words(buf), r_start, r_end, lines, cap, high)
    check_utf8(buf, starts, ends, names, np.bincount(r_file, high, n_files) > 0)
    file_lines = np.bincount(r_file, lines, n_files).astype(np.int64)
    # the lines of a range's file before it: the kernel numbers lines as in the file
    before = np.cumsum(lines) - lines  # lines before each range in the buffer
    first_of_file = np.concatenate([[True], r_file[1:] != r_file[:-1]])
    file_first = np.maximum.accumulate(np.where(first_of_file, np.arange(n_r), 0))
    ranges = ktext.Ranges(buf, r_start, r_end, r_file, before - before[file_first] + lines_before)
    row_base = np.concatenate([[0], np.cumsum(cap)]).astype(np.int64)
    n = int(row_base[-1])
    k = len(fields.strings)
    slot_of = np.full(max(fields.strings, default=-1) + 1, -1, np.int64)
    slot_of[fields.strings] = np.arange(k)
    counts = np.zeros(n_r, np.int64)
    lines_out = ktext.Lines(
        new_array(ws, "file_of", (n,), np.int32),
        new_array(ws, "line_no", (n,), np.int64),
        new_array(ws, "line_start", (n,), np.int64),
        new_array(ws, "n_fields", (n,), np.int32),
        new_array(ws, "starts", (k, n), np.int64),  # one row per field
        new_array(ws, "ends", (k, n), np.int64),
        new_array(ws, "ival", (n,), np.int64),  # every row's values are set by the kernel
        new_array(ws, "ibad", (n,), np.bool_),
        new_array(ws, "fval", (n,), np.float64),
        new_array(ws, "fbad", (n,), np.bool_),
        new_array(ws, "new_run", (n,), np.bool_),
        np.full(n_r, -1, np.int64),  # same_bad, per range
    )
    runs = int(fields.strings[0])  # where the first string field changes is marked
    spec = ktext.FieldSpec(slot_of, int(fields.integer), int(fields.number), int(fields.same), runs)
    parallel.run(ktext.split_lines, sizes, ranges, row_base, spec, lines_out, counts)
    out: tuple[np.ndarray, ...] = lines_out
    if (counts != cap).any():  # blank or comment lines: close the gaps they left
        out, row_base = _close_gaps(out, row_base, counts)
    _join_runs(buf, out, row_base)
    file_rows = np.bincount(r_file, counts, n_files).astype(np.int64)
    if n_r == n_files:  # no file was cut
        return out, file_lines, file_rows
    if fields.same >= 0:
        same_bad = _join_same_bad(buf, r_file, row_base, out, fields.same, n_files)
    else:
        same_bad = np.full(n_files, -1, np.int64)
    return (*out[:-1], same_bad), file_lines, file_rows


def _join_runs(buf: np.ndarray, out: tuple[np.ndarray, ...], row_base: np.ndarray) -> None:
    """``new_run`` across ranges: a range's first row starts a run only if its first string
    field differs from the last row's of the range before (the kernel marks it)."""
    starts, ends, new_run = out[4][0], out[5][0], out[10]
    for r in row_base[1:-1].tolist():
        if 0 < r < new_run.shape[0]:
            a, b = buf[starts[r - 1] : ends[r - 1]], buf[starts[r] : ends[r]]
            new_run[r] = a.shape[0] != b.shape[0] or bool((a != b).any())


def _words(buf: np.ndarray) -> np.ndarray:
    """``buf`` seen as 64-bit words for the newline count (empty when it is not aligned)."""
    if buf.ctypes.data % 8:
        return np.zeros(0, np.uint64)
    return buf[: buf.shape[0] // 8 * 8].view(np.uint64)


def _close_gaps(
    out: tuple[np.ndarray, ...], row_base: np.ndarray, counts: np.ndarray
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The tokenizer's rows without the gaps of skipped lines: range ``r`` wrote
    ``counts[r]`` rows from ``row_base[r]``. Returns the rows and the new bases."""
    new_base = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    shift = np.repeat(row_base[:-1] - new_base[:-1], counts)
    keep = np.arange(int(new_base[-1]), dtype=np.int64) + shift
    *rows, same_bad = out
    rows = [a[..., keep] for a in rows]
    hit = same_bad >= 0  # a row number within the gapped layout
    same_bad = same_bad.copy()
    same_bad[hit] -= (row_base[:-1] - new_base[:-1])[hit]
    return (*rows, same_bad), new_base


def tokenize_files(
    paths: list[PathLike],
    fields: Fields,
    threads: int | None = None,
    ws: Workspace | None = None,
    raw: RawFiles | None = None,
) -> Tokens:
    """Read and tokenise text files (plain or gzip): one row per line with content, in
    file order (``raw``: their bytes read ahead by :func:`~fasteval.io.files.read_files`;
    ``ws``: arrays to reuse, the tokens valid until its next use). An unreadable file, one
    not UTF-8 or without a line with content is an :class:`InputFormatError`."""
    if raw is not None and [os.fspath(p) for p in raw.paths] != [os.fspath(p) for p in paths]:
        msg = "internal error: the files read ahead are not the files to parse"
        raise FastevalError(msg)
    if raw is None:
        raw = read_files(paths, threads, ws)
    names = [str(p) for p in paths]
    return tokenize_buffer(raw.buf, raw.starts, raw.ends, names, fields, ws)


def tokenize_buffer(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    names: list[str],
    fields: Fields,
    ws: Workspace | None = None,
    lines_before: int = 0,
) -> Tokens:
    """Tokenise files ``names`` held in ``buf[starts[i]:ends[i]]`` (each ending in a newline),
    as :func:`tokenize_files` does; ``lines_before``: the lines of each file before its bytes
    (a piece of a file), to number its lines as in the file."""
    out, lines, counts = _split(buf, starts, ends, names, fields, ws, lines_before)
    tok = Tokens(names, buf, *out)
    tok.lines = lines
    if (counts == 0).any():
        name = tok.names[int(np.flatnonzero(counts == 0)[0])]
        msg = f"{name}: no lines found (the file is empty or all comments)"
        raise InputFormatError(msg)
    return tok


class Skipper:
    """Collects rejected lines: raises at once, or (``lenient``) drops them and warns once
    (:meth:`warn`); ``what`` names the lines in messages (``"qrels"``, ``"run"``, ...)."""

    def __init__(self, lenient: bool, what: str) -> None:
        self.lenient = lenient
        self.what = what
        self.skipped: list[str] = []
        self.count = 0

    def reject(self, tok: Tokens, bad: np.ndarray, reason: Callable[[int], str]) -> Tokens:
        """``tok`` without the rows ``bad`` marks (lenient), else an :class:`InputFormatError`
        for the first, naming its file, line and text and ``reason(r)``, what is wrong."""
        rows = np.flatnonzero(bad)
        if rows.size == 0:
            return tok
        r = int(rows[0])
        if not self.lenient:
            msg = f"{tok.where(r)}: {reason(r)}\n  line: {tok.line_text(r)!r}"
            if rows.size > 1:
                msg += f"\n  ({rows.size - 1} more such line(s))"
            msg += "\n  hint: fix the file, or pass lenient=True (CLI: --lenient) to skip bad lines"
            raise InputFormatError(msg)
        self.skipped.extend(f"{tok.where(int(x))} ({reason(int(x))})" for x in rows[:20])
        if rows.size > 20:
            self.skipped.append(f"... {rows.size - 20} more")
        self.count += int(rows.size)
        return tok.subset(~bad)

    def warn(self, stacklevel: int = 3) -> None:
        """One :class:`~fasteval.errors.FastevalWarning` counting the skipped lines (if any).

        ``stacklevel`` is counted from this method, as ``warnings.warn``'s.
        """
        if self.skipped:
            n = self.count
            shown = "; ".join(self.skipped[:10])
            msg = f"skipped {n} malformed {self.what} line(s): {shown}"
            warnings.warn(msg, FastevalWarning, stacklevel=stacklevel)


def check_columns(tok: Tokens, need: int, skipper: Skipper, fmt: str) -> Tokens:
    """Rows with fewer than ``need`` columns rejected (``fmt``: the layout, for messages)."""
    return skipper.reject(
        tok,
        tok.n_fields < need,
        lambda r: f"expected at least {need} columns ({fmt}), found {int(tok.n_fields[r])}",
    )


def is_number(s: str) -> bool:
    """Whether ``s`` parses as a number (``float()`` accepts it)."""
    try:
        float(s)
    except ValueError:
        return False
    return True


def check_header(
    tok: Tokens, wordy: np.ndarray, lenient: bool, layout: str, cols: tuple[int, ...]
) -> None:
    """A first line whose numeric fields ``cols`` are words (``wordy``: they did not parse,
    and are not numbers such as ``1.5``), followed by a good line, is a header: unless
    lenient (then it is skipped as malformed), one message says so."""
    if lenient or tok.file_of.shape[0] == 0:
        return
    first = tok.first_rows()
    n = tok.file_of.shape[0]
    ok = first + 1 < n
    cur = np.minimum(first, n - 1)
    nxt = np.minimum(first + 1, n - 1)
    same_file = tok.file_of[nxt] == np.arange(len(first))
    for f in np.flatnonzero(ok & wordy[cur] & ~wordy[nxt] & same_file):
        r = int(first[f])
        fields = tok.fields_of(r)
        if not all(j < len(fields) and not is_number(fields[j]) for j in cols):
            continue
        raise InputFormatError(header_message(tok.where(r), tok.line_text(r), layout))


def header_message(where: str, line: str, layout: str) -> str:
    """The message for a header line at ``where`` (``file:line``) of a file of ``layout``."""
    return (
        f"{where}: this line looks like a header ({line!r}); TREC files have no "
        f"header line, every line is {layout}\n"
        "  hint: delete the line, or start it with '#' to make it a comment"
    )


def is_run_line(fields: list[str]) -> bool:
    """``fields`` read as a run line, not qrels: ``Q0``, or a non-integer score."""
    if len(fields) < 6:
        return False
    if fields[1] in ("Q0", "q0"):
        return True
    try:
        int(fields[4])
    except ValueError:
        return is_number(fields[4])
    return False


def run_layout_message(where: str, fields: list[str], what: str, layout: str) -> str:
    """The message for a run file given where ``what`` was expected."""
    line = " ".join(fields)
    return (
        f"{where}: this looks like a run file, not {what}: {len(fields)} columns "
        f"({line[:200]!r}), the layout qid Q0 docno rank score tag; {what} lines are {layout}\n"
        "  hint: give the qrels first, then the runs"
    )


def check_not_a_run(tok: Tokens, what: str, layout: str) -> None:
    """Refuse a run file read as qrels: each file's lines all have 6+ columns and the
    first is a run line (``Q0`` in column 2 or a non-integer score in column 5)."""
    if tok.file_of.shape[0] == 0:
        return
    first = tok.first_rows()
    for f in range(len(tok.names)):
        r = int(first[f])
        if r >= tok.file_of.shape[0] or int(tok.file_of[r]) != f:
            continue
        rows = tok.file_of == f
        if (tok.n_fields[rows] >= RUN_FIELDS).all() and is_run_line(tok.fields_of(r)):
            raise InputFormatError(run_layout_message(tok.where(r), tok.fields_of(r), what, layout))


def read_judgments(
    paths: list[PathLike],
    fields: Fields,
    lenient: bool,
    names: tuple[str, str, str],
    raw: RawFiles | None = None,
) -> tuple[Tokens, np.ndarray]:
    """Read a qrels-like file, its grade the integer (4th) field: the rows kept and their
    ``int32`` grades. ``names``: the lines, their layout and the grade, for messages (e.g.
    ``("qrels", "qid iter docno rel", "relevance")``). A run file given instead, a header, a
    line of fewer than four columns or a grade not an integer (skipped when lenient), a
    grade beyond 32 bits and no valid line left are :class:`InputFormatError` s."""
    what, layout, grade = names
    skipper = Skipper(lenient, what)
    tok = tokenize_files(paths, fields, raw=raw)
    check_not_a_run(tok, what, layout)
    check_header(tok, tok.ibad, lenient, layout, (3,))
    tok = check_columns(tok, QRELS_FIELDS, skipper, layout)
    t = tok
    tok = skipper.reject(
        tok, tok.ibad, lambda r: f"{grade} is not an integer: {t.field_value(r, 3)!r}"
    )
    skipper.warn(stacklevel=4)  # counted from the reader's caller
    if tok.line_no.shape[0] == 0:
        msg = f"{', '.join(tok.names)}: no valid {skipper.what} lines"
        raise InputFormatError(msg)
    rel = tok.ival
    if np.abs(rel).max() > np.iinfo(np.int32).max:
        r = int(np.argmax(np.abs(rel)))
        msg = f"{tok.where(r)}: {grade} {int(rel[r])} is out of range"
        raise InputFormatError(msg)
    return tok, rel.astype(np.int32)
