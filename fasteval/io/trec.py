"""TREC text formats: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Fields are separated by any run of blanks (spaces or tabs); trailing extra
columns are ignored as trec_eval ignores them; blank lines and lines whose
first non-blank character is ``#`` are skipped (trec_eval 10). Files may be
gzip-compressed. Every malformed line raises :class:`InputFormatError`
naming the file, the line and the value, unless ``lenient=True``, in which
case the line is skipped and counted in a :class:`FastevalWarning`.
"""

from __future__ import annotations

import codecs
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from fasteval import parallel
from fasteval.columns import QrelsColumns, RunColumns, Source, StrColumn, int64_array
from fasteval.errors import FastevalWarning, InputFormatError, ParameterError
from fasteval.io import gz
from fasteval.kernels import text as ktext

PathLike = str | os.PathLike[str]

QRELS_FIELDS = 4
RUN_FIELDS = 6


def read_bytes(path: PathLike) -> np.ndarray:
    """Read a (possibly gzip-compressed) file into a ``uint8`` array."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        msg = f"no such file: {p}"
        raise InputFormatError(msg) from None
    except IsADirectoryError:
        msg = f"expected a file, got a directory: {p}"
        raise InputFormatError(msg) from None
    except OSError as e:
        msg = f"cannot read {p}: {e.strerror or e}"
        raise InputFormatError(msg) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gz.decompress(raw)
        except gz.ERRORS as e:
            msg = f"{p}: not a valid gzip file ({e})"
            raise InputFormatError(msg) from None
    return np.frombuffer(raw, dtype=np.uint8)


BOM = b"\xef\xbb\xbf"


def utf8_error(name: str, data: bytes | memoryview | np.ndarray, start: int) -> str:
    """The message for bytes that are not UTF-8 at offset ``start`` of a file's contents."""
    head = np.frombuffer(data, np.uint8, count=start) if start else np.zeros(0, np.uint8)
    line = int(np.count_nonzero(head == 10)) + 1
    byte = int(np.frombuffer(data, np.uint8, count=1, offset=start)[0])
    return (
        f"{name}:{line}: not valid UTF-8 (byte {start} of the file is 0x{byte:02x}); "
        "ids and names must be UTF-8 text\n"
        "  hint: convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE)"
    )


def read_text(path: PathLike) -> str:
    """Read a (possibly gzip-compressed) UTF-8 file into a string, without a leading BOM.

    Raises
    ------
    InputFormatError
        For a missing or unreadable file, bad gzip data, or bytes that are not UTF-8
        (the line and byte offset named).
    """
    raw = read_bytes(path).tobytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFormatError(utf8_error(os.fspath(path), raw, e.start)) from None
    return text.removeprefix("\ufeff")


def run_id_from_filename(path: PathLike) -> str:
    """A run's id from its file name: the name without ``.gz`` and then ``.txt``."""
    return Path(path).name.removesuffix(".gz").removesuffix(".txt")


def duplicate_run_id(name: str, first: str, second: str, run_id_from: str = "tag") -> str:
    """The message for one run id given by two files (or tables)."""
    msg = (
        f"run id {name!r} is given by two files: {first} and {second}; each run needs its "
        "own id (with one id they would be merged into one run)\n"
    )
    if run_id_from == "filename":
        return msg + "  hint: runs are named after their files (without .txt/.gz): rename one"
    return msg + (
        "  hint: if the run tags (6th column) are not unique, name runs after their files: "
        "use --run-id filename (API: run_id_from='filename')"
    )


@dataclass
class _Tokens:
    """Tokenised lines of one or more files sharing one byte buffer."""

    names: list[str]
    buf: np.ndarray
    file_of: np.ndarray
    line_no: np.ndarray
    line_start: np.ndarray
    n_fields: np.ndarray
    starts: np.ndarray  # (rows, k) for the requested string fields
    ends: np.ndarray
    ival: np.ndarray
    ibad: np.ndarray
    fval: np.ndarray
    fbad: np.ndarray
    same_bad: np.ndarray  # per file

    def where(self, r: int) -> str:
        return f"{self.names[int(self.file_of[r])]}:{int(self.line_no[r])}"

    def field(self, j: int) -> StrColumn:
        return StrColumn(self.buf, self.starts[j], self.ends[j])

    def line_bytes(self, r: int) -> bytes:
        """Row ``r``'s whole line (for messages and checks of single rows)."""
        s = int(self.line_start[r])
        n = self.buf.shape[0]
        e = s
        while e < n:  # the newline, looked for in growing blocks: lines may be very long
            block = self.buf[e : min(n, e + max(4096, e - s))]
            hit = np.flatnonzero(block == 10)
            if hit.size:
                e += int(hit[0])
                break
            e += block.shape[0]
        return bytes(self.buf[s:e])

    def fields_of(self, r: int) -> list[str]:
        """The fields of row ``r``'s line, re-split (for messages)."""
        return self.line_bytes(r).decode("utf-8", "replace").split()

    def field_value(self, r: int, j: int, limit: int | None = 200) -> str:
        """Field ``j`` of row ``r``'s line (``""`` if absent), cut to ``limit`` characters."""
        f = self.fields_of(r)
        v = f[j] if j < len(f) else ""
        return v if limit is None or len(v) <= limit else v[:limit] + "..."

    def first_rows(self) -> np.ndarray:
        """The first row of each file (files without rows get the next file's first row)."""
        return np.searchsorted(self.file_of, np.arange(len(self.names)))

    def line_text(self, r: int) -> str:
        text = " ".join(self.fields_of(r))
        return text if len(text) <= 200 else text[:200] + "..."

    def subset(self, keep: np.ndarray) -> _Tokens:
        return _Tokens(
            self.names,
            self.buf,
            self.file_of[keep],
            self.line_no[keep],
            self.line_start[keep],
            self.n_fields[keep],
            self.starts[:, keep],
            self.ends[:, keep],
            self.ival[keep],
            self.ibad[keep],
            self.fval[keep],
            self.fbad[keep],
            self.same_bad,
        )

    def source(self) -> Source:
        return Source(self.names, self.file_of, self.line_no)


class Workspace:
    """Arrays reused from one read to the next (a stream's batches, a file's pieces).

    Fresh memory is expensive to touch the first time (the kernel zeroes every
    page); a stream reading batch after batch into the same arrays pays that
    once. Columns read with a workspace point into it: they are valid only until
    the next read with the same workspace.
    """

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def array(self, name: str, shape: tuple[int, ...], dtype: type, fill: object = None) -> Any:
        """An array of ``shape`` (C order) on the storage kept under ``name``.

        ``fill`` sets every element (as ``np.zeros``/``np.full`` would); ``None``
        leaves the contents as they are (as ``np.empty``).
        """
        size = int(np.prod(shape))
        a = self._arrays.get(name)
        if a is None or a.dtype != np.dtype(dtype) or a.shape[0] < size:
            a = np.empty(max(size, int(size * 1.25)), dtype)  # some room for the next batch
            self._arrays[name] = a
        out = a[:size].reshape(shape)
        if fill is not None:
            out.fill(fill)
        return out


def _new(
    ws: Workspace | None, name: str, shape: tuple[int, ...], dtype: type, fill: object = None
) -> Any:
    """``np.empty``/``np.full`` of ``shape``, on the workspace's storage when there is one."""
    if ws is not None:
        return ws.array(name, shape, dtype, fill)
    return np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)


class RawFiles(NamedTuple):
    """Files read into one byte buffer: file ``i`` is ``buf[starts[i]:ends[i]]``."""

    paths: list[PathLike]
    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


def read_files(
    paths: Sequence[PathLike], threads: int | None = None, workspace: Workspace | None = None
) -> RawFiles:
    """Read files (plain or gzip) into one buffer, each ending in a newline.

    A UTF-8 byte-order mark at the start of a file is blanked. Reading
    releases the GIL (file reads, inflate), so a stream reads its next batch
    with this in a thread while the current one is scored; the result is
    given to :func:`parse_run_files` as ``raw``.
    """
    buf, starts, ends = _read_all(list(paths), threads, workspace)
    return RawFiles(list(paths), buf, starts, ends)


def _gzip_isize(path: PathLike) -> int:
    """The uncompressed size a gzip file's trailer states (of its last member, mod 2**32)."""
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")


def _gunzip_into(path: PathLike, out: memoryview) -> int:
    """Decompress a gzip file into ``out``; its size, or -1 when it does not fit exactly.

    Chunks go straight into the caller's (reused) buffer: no fresh memory the
    size of the file. -1 (a file with several members, or over 4 GiB, whose
    trailer does not give the size) sends the caller to :func:`read_bytes`.
    """
    d = gz.decompressobj()
    n = 0
    cap = len(out)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            data = d.decompress(chunk, cap - n + 1)
            while True:
                if n + len(data) > cap:
                    return -1
                out[n : n + len(data)] = data
                n += len(data)
                if d.eof or not d.unconsumed_tail:
                    break
                data = d.decompress(d.unconsumed_tail, cap - n + 1)
            if d.eof:
                break
        if not d.eof or (d.unused_data + fh.read()).strip(b"\x00"):
            return -1  # truncated, or another member follows
    return n


def _read_all(
    paths: list[PathLike], threads: int | None, ws: Workspace | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All files in one buffer, each ending in a newline; plain files are read in place.

    A gzip file is decompressed straight into its place when its trailer gives
    its size (one member); otherwise (or when anything fails) it goes through
    :func:`read_bytes`, which raises the proper message for a bad file.
    """
    sizes = np.zeros(len(paths), np.int64)
    unread: dict[int, np.ndarray] = {}
    direct: list[int] = []
    for i, p in enumerate(paths):
        try:
            with open(p, "rb") as fh:
                magic = fh.read(2)
            if magic == b"\x1f\x8b":
                sizes[i] = _gzip_isize(p) + 1
                direct.append(i)
            else:
                sizes[i] = os.path.getsize(p) + 1
        except OSError:
            unread[i] = read_bytes(p)  # raises the proper InputFormatError
            sizes[i] = unread[i].size + 1
    ends = np.cumsum(sizes)
    starts = ends - sizes
    buf = _new(ws, "buf", (int(ends[-1]) if len(paths) else 0,), np.uint8)
    view = buf.data

    def unzip(i: int) -> int:
        a = int(starts[i])
        try:
            return _gunzip_into(paths[i], view[a : a + int(sizes[i]) - 1])
        except gz.ERRORS:
            return -1

    workers = threads or min(len(direct), os.cpu_count() or 1)
    if workers > 1 and len(direct) > 1:
        got = dict(zip(direct, parallel.map_threads(unzip, direct, workers), strict=True))
    else:
        got = {i: unzip(i) for i in direct}
    if any(n != int(sizes[i]) - 1 for i, n in got.items()):
        # a trailer that does not give the size (several members), or a bad file: the
        # plain way for every gzip file (read_bytes names what is wrong)
        return _read_all_decompressed(paths, threads, ws)
    for i, p in enumerate(paths):
        a = int(starts[i])
        if i in got:
            n = got[i]
        elif i in unread:
            n = unread[i].size
            buf[a : a + n] = unread[i]
        else:
            with open(p, "rb") as fh:
                n = fh.readinto(view[a : a + int(sizes[i]) - 1])
        buf[a + n] = 10  # every file ends with a newline (an extra blank line is skipped)
        ends[i] = a + n + 1
        if n >= 3 and bytes(buf[a : a + 3]) == BOM:
            buf[a : a + 3] = 32  # a UTF-8 byte-order mark: blanks keep every offset
    return buf, starts, ends


def _read_all_decompressed(
    paths: list[PathLike], threads: int | None, ws: Workspace | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As :func:`_read_all`, each gzip file decompressed whole first (:func:`read_bytes`)."""
    sizes = np.zeros(len(paths), np.int64)
    gz: dict[int, np.ndarray] = {}
    for i, p in enumerate(paths):
        try:
            with open(p, "rb") as fh:
                magic = fh.read(2)
        except OSError:
            gz[i] = read_bytes(p)  # raises the proper InputFormatError
            continue
        if magic == b"\x1f\x8b":
            gz[i] = np.zeros(0, np.uint8)  # decompressed below
        else:
            sizes[i] = os.path.getsize(p) + 1
    gz_paths = [i for i in gz if gz[i].size == 0]
    workers = threads or min(len(gz_paths), os.cpu_count() or 1)
    if workers > 1 and len(gz_paths) > 1:
        got = parallel.map_threads(read_bytes, [paths[i] for i in gz_paths], workers)
        for i, b in zip(gz_paths, got, strict=True):
            gz[i] = b
    else:
        for i in gz_paths:
            gz[i] = read_bytes(paths[i])
    for i, b in gz.items():
        sizes[i] = b.size + 1
    ends = np.cumsum(sizes)
    starts = ends - sizes
    buf = _new(ws, "buf", (int(ends[-1]) if len(paths) else 0,), np.uint8)
    for i, p in enumerate(paths):
        a = int(starts[i])
        if i in gz:
            n = gz[i].size
            buf[a : a + n] = gz[i]
        else:
            with open(p, "rb") as fh:
                n = fh.readinto(buf.data[a : a + int(sizes[i]) - 1])
        buf[a + n] = 10  # every file ends with a newline (an extra blank line is skipped)
        ends[i] = a + n + 1
        if n >= 3 and bytes(buf[a : a + 3]) == BOM:
            buf[a : a + 3] = 32  # a UTF-8 byte-order mark: blanks keep every offset
    return buf, starts, ends


def _check_utf8(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, names: list[str]) -> None:
    """Every file must be UTF-8: ids are text, and two ids must not differ in invalid bytes.

    ASCII (the usual case) is told by one ``max`` over the buffer; only files
    with other bytes are decoded (in C, a file at a time).
    """
    if buf.shape[0] == 0 or int(buf.max()) < 0x80:
        return
    for i, name in enumerate(names):
        a, b = int(starts[i]), int(ends[i])
        if b <= a or int(buf[a:b].max()) < 0x80:
            continue
        data = buf.data[a:b]  # a view, not a copy
        try:
            codecs.utf_8_decode(data, "strict", True)
        except UnicodeDecodeError as e:
            raise InputFormatError(utf8_error(name, data, e.start)) from None


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
    """Cut each file ``buf[starts[f]:ends[f]]`` into ranges of whole lines of about ``size``.

    Returns the ranges' starts, ends and files, in buffer order. A file's
    ranges end just after a newline (the last one where the file ends).
    """
    r_start: list[int] = []
    r_end: list[int] = []
    r_file: list[int] = []
    for f in range(starts.shape[0]):
        a, b = int(starts[f]), int(ends[f])
        while b - a > 2 * size:
            cut = a + size
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


def _join_same_bad(
    buf: np.ndarray,
    r_file: np.ndarray,
    row_base: np.ndarray,
    out: tuple[np.ndarray, ...],
    same_field: int,
    n_files: int,
) -> np.ndarray:
    """Per file, the first row whose field ``same_field`` differs from the file's first
    (reference) row, from the kernel's answers per range (each compared to its own first).

    A range's reference row is its first row with that field and a parsed
    number (as in the kernel); when its field differs from the file's
    reference, that row is the range's first differing row.
    """
    _, _, line_start, n_fields, _, _, _, ibad, _, fbad, r_bad = out
    same_bad = np.full(n_files, -1, np.int64)
    ref: dict[int, bytes] = {}
    for k in range(r_file.shape[0]):
        f = int(r_file[k])
        if same_bad[f] >= 0:
            continue
        a, b = int(row_base[k]), int(row_base[k + 1])
        cand = np.flatnonzero((n_fields[a:b] > same_field) & ~(ibad[a:b] & fbad[a:b]))
        if not cand.size:
            continue
        r = a + int(cand[0])
        s = int(line_start[r])
        hits = np.flatnonzero(buf[s : s + 65536] == 10)
        e = s + int(hits[0]) if hits.size else buf.shape[0]
        field = bytes(buf[s:e]).split()[same_field]
        first = ref.setdefault(f, field)
        same_bad[f] = r if field != first else r_bad[k]
    return same_bad


def _split(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    fields: Fields,
    ws: Workspace | None = None,
) -> tuple[np.ndarray, ...]:
    """Tokenise every file of ``buf`` in parallel (two passes: count newlines, then split).

    Large files are cut into ranges of whole lines (:func:`_subranges`), so a
    single big file is tokenised by every thread too; the ranges' rows are
    then given back their file and line numbers. Rows are laid out by the
    ranges' newline counts; blank and comment lines leave gaps, closed
    afterwards (:func:`_close_gaps`).
    """
    n_files = starts.shape[0]
    buf.flags.writeable = False  # one kernel signature for every byte buffer
    filled = ends > starts
    if (buf[ends[filled] - 1] != 10).any():  # the kernels stop at newlines only
        msg = "internal error: a file in the buffer does not end in a newline"
        raise RuntimeError(msg)
    r_start, r_end, r_file = _subranges(buf, starts, ends, SUBRANGE_BYTES)
    n_r = r_start.shape[0]
    sizes = (r_end - r_start).astype(np.float64)
    lines = np.zeros(n_r, np.int64)
    cap = np.zeros(n_r, np.int64)
    parallel.run(ktext.count_newlines, sizes, buf, _words(buf), r_start, r_end, lines, cap)
    row_base = np.concatenate([[0], np.cumsum(cap)]).astype(np.int64)
    n = int(row_base[-1])
    k = len(fields.strings)
    slot_of = np.full(max(fields.strings, default=-1) + 1, -1, np.int64)
    slot_of[fields.strings] = np.arange(k)
    counts = np.zeros(n_r, np.int64)
    lines_out = ktext.Lines(
        _new(ws, "file_of", (n,), np.int32),
        _new(ws, "line_no", (n,), np.int64),
        _new(ws, "line_start", (n,), np.int64),
        _new(ws, "n_fields", (n,), np.int32),
        _new(ws, "starts", (k, n), np.int64),  # one row per field
        _new(ws, "ends", (k, n), np.int64),
        _new(ws, "ival", (n,), np.int64, 0),
        _new(ws, "ibad", (n,), np.bool_, False),
        _new(ws, "fval", (n,), np.float64, 0.0),
        _new(ws, "fbad", (n,), np.bool_, False),
        np.full(n_r, -1, np.int64),  # same_bad, per range
    )
    spec = ktext.FieldSpec(slot_of, int(fields.integer), int(fields.number), int(fields.same))
    parallel.run(
        ktext.split_lines, sizes, ktext.Str(buf, r_start, r_end), row_base, spec, lines_out, counts
    )
    out: tuple[np.ndarray, ...] = lines_out
    if (counts != cap).any():  # blank or comment lines: close the gaps they left
        out, row_base = _close_gaps(out, row_base, counts)
    if n_r == n_files:  # no file was cut
        return out
    # ranges -> files: the file of each row, its line number within the file
    first_of_file = np.concatenate([[True], r_file[1:] != r_file[:-1]])
    before = np.cumsum(lines) - lines  # lines before each range in the buffer
    file_first = np.maximum.accumulate(np.where(first_of_file, np.arange(n_r), 0))
    line_base = before - before[file_first]
    per_row = np.repeat(np.arange(n_r), counts)
    file_of, line_no = out[0], out[1]
    line_no += line_base[per_row]
    file_of[:] = r_file[per_row]
    if fields.same >= 0:
        same_bad = _join_same_bad(buf, r_file, row_base, out, fields.same, n_files)
    else:
        same_bad = np.full(n_files, -1, np.int64)
    return (*out[:-1], same_bad)


def _words(buf: np.ndarray) -> np.ndarray:
    """``buf`` seen as 64-bit words for the newline count (empty when it is not aligned)."""
    if buf.ctypes.data % 8:
        return np.zeros(0, np.uint64)
    return buf[: buf.shape[0] // 8 * 8].view(np.uint64)


def count_newlines(buf: np.ndarray, stop: int) -> int:
    """The newlines in ``buf[:stop]`` (eight bytes at a time, no temporary array)."""
    view = buf[:stop]
    view.flags.writeable = False  # the tokenizer's kernel signature
    return int(ktext.newlines(view, _words(view), 0, stop))


def _close_gaps(
    out: tuple[np.ndarray, ...], row_base: np.ndarray, counts: np.ndarray
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The tokenizer's rows without the gaps of skipped lines: range ``r`` wrote
    ``counts[r]`` rows from ``row_base[r]``. Returns the rows and the new bases."""
    new_base = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    shift = np.repeat(row_base[:-1] - new_base[:-1], counts)
    keep = np.arange(int(new_base[-1]), dtype=np.int64) + shift
    *rows, same_bad = out
    rows = [a[:, keep] if a.ndim == 2 else a[keep] for a in rows]
    hit = same_bad >= 0  # a row number within the gapped layout
    same_bad = same_bad.copy()
    same_bad[hit] -= (row_base[:-1] - new_base[:-1])[hit]
    return (*rows, same_bad), new_base


def _tokenize_files(
    paths: list[PathLike],
    fields: Fields,
    threads: int | None = None,
    ws: Workspace | None = None,
    raw: RawFiles | None = None,
) -> _Tokens:
    if raw is not None and [os.fspath(p) for p in raw.paths] != [os.fspath(p) for p in paths]:
        msg = "internal error: the files read ahead are not the files to parse"
        raise RuntimeError(msg)
    if raw is not None:
        buf, starts, ends = raw.buf, raw.starts, raw.ends
    else:
        buf, starts, ends = _read_all(paths, threads, ws)
    names = [str(p) for p in paths]
    return _tokenize_buffer(buf, starts, ends, names, fields, ws)


def _tokenize_buffer(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    names: list[str],
    fields: Fields,
    ws: Workspace | None = None,
) -> _Tokens:
    """Tokenise files ``names`` held in ``buf[starts[i]:ends[i]]`` (each ending in a newline)."""
    _check_utf8(buf, starts, ends, names)
    out = _split(buf, starts, ends, fields, ws)
    tok = _Tokens(names, buf, *out)
    file_of = tok.file_of
    counts = np.bincount(file_of, minlength=len(names))
    if (counts == 0).any():
        name = tok.names[int(np.flatnonzero(counts == 0)[0])]
        msg = f"{name}: no lines found (the file is empty or all comments)"
        raise InputFormatError(msg)
    return tok


class _Skipper:
    """Collects rejected lines: raises at once, or (lenient) counts them."""

    def __init__(self, lenient: bool, what: str) -> None:
        self.lenient = lenient
        self.what = what
        self.skipped: list[str] = []
        self.count = 0

    def reject(self, tok: _Tokens, bad: np.ndarray, reason: Callable[[int], str]) -> _Tokens:
        """Raise for the first bad row, or (lenient) drop all bad rows and remember them."""
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

    def warn(self) -> None:
        if self.skipped:
            n = self.count
            shown = "; ".join(self.skipped[:10])
            msg = f"skipped {n} malformed {self.what} line(s): {shown}"
            warnings.warn(msg, FastevalWarning, stacklevel=3)


def _scores(tok: _Tokens) -> tuple[np.ndarray, np.ndarray]:
    """Scores as the tokenizer parsed them (correctly rounded, as ``float()``), and a mask
    of bad rows: not a decimal number (``inf``/``nan`` included), or beyond the double range.
    """
    return tok.fval, tok.fbad | ~np.isfinite(tok.fval)


def _check_columns(tok: _Tokens, need: int, skipper: _Skipper, fmt: str) -> _Tokens:
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


def _check_header(
    tok: _Tokens, wordy: np.ndarray, lenient: bool, layout: str, cols: tuple[int, ...]
) -> None:
    """A first line whose numeric fields are words, followed by a good line, is a header.

    ``wordy`` marks rows whose numeric fields did not parse; a header's fields
    ``cols`` are words (not numbers such as ``1.5``). Unless lenient (the line is
    then skipped as malformed), one message says what it is, rather than the
    per-field errors (or, for runs, a run tag that differs from the "tag" title).
    """
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
        msg = (
            f"{tok.where(r)}: this line looks like a header ({tok.line_text(r)!r}); TREC files "
            f"have no header line, every line is {layout}\n"
            "  hint: delete the line, or start it with '#' to make it a comment"
        )
        raise InputFormatError(msg)


def is_run_line(fields: list[str]) -> bool:
    """``fields`` have the layout of a run line, not of qrels: ``Q0``, or a non-integer score."""
    if len(fields) < 6:
        return False
    if fields[1] in ("Q0", "q0"):
        return True
    try:
        int(fields[4])
    except ValueError:
        try:
            float(fields[4])
        except ValueError:
            return False
        return True
    return False


def run_layout_message(where: str, fields: list[str], what: str, layout: str) -> str:
    """The message for a run file given where ``what`` was expected."""
    line = " ".join(fields)
    return (
        f"{where}: this looks like a run file, not {what}: {len(fields)} columns "
        f"({line[:200]!r}), the layout qid Q0 docno rank score tag; {what} lines are {layout}\n"
        "  hint: give the qrels first, then the runs"
    )


def _check_not_a_run(tok: _Tokens, what: str, layout: str) -> None:
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


def parse_qrels_files(
    paths: list[PathLike], *, lenient: bool = False, raw: RawFiles | None = None
) -> QrelsColumns:
    """Parse qrels files (``qid iter docno rel``) into columns (``raw``: their bytes, read
    already, as :func:`parse_run_files` takes them)."""
    skipper = _Skipper(lenient, "qrels")
    tok = _tokenize_files(paths, QRELS_LINE, raw=raw)
    _check_not_a_run(tok, "qrels", "qid iter docno rel")
    _check_header(tok, tok.ibad, lenient, "qid iter docno rel", (3,))
    tok = _check_columns(tok, QRELS_FIELDS, skipper, "qid iter docno rel")
    t = tok
    tok = skipper.reject(
        tok, tok.ibad, lambda r: f"relevance is not an integer: {t.field_value(r, 3)!r}"
    )
    skipper.warn()
    if tok.line_no.shape[0] == 0:
        msg = f"{', '.join(tok.names)}: no valid qrels lines"
        raise InputFormatError(msg)
    rel = tok.ival
    if np.abs(rel).max() > np.iinfo(np.int32).max:
        r = int(np.argmax(np.abs(rel)))
        msg = f"{tok.where(r)}: relevance {int(rel[r])} is out of range"
        raise InputFormatError(msg)
    return QrelsColumns(tok.field(0), tok.field(1), rel.astype(np.int32), tok.source())


def parse_run_files(
    paths: Sequence[PathLike],
    *,
    lenient: bool = False,
    run_id_from: str = "tag",
    threads: int | None = None,
    workspace: Workspace | None = None,
    raw: RawFiles | None = None,
) -> RunColumns:
    """Parse run files (``qid Q0 docno rank score tag``, one run per file) into columns.

    Parameters
    ----------
    paths
        TREC run files, plain or gzip.
    lenient
        Skip malformed lines (reported in a :class:`FastevalWarning`) instead of raising.
    run_id_from
        ``"tag"`` (the 6th column, which must be constant in a file) or ``"filename"``.
    threads
        Files read in parallel (decompression releases the GIL).
    workspace
        Arrays to reuse (see :class:`Workspace`); the columns then point into
        it and are valid only until its next use.
    raw
        The files' bytes, read ahead by :func:`read_files` (the same paths).
    """
    if run_id_from not in ("tag", "filename"):
        msg = f"run_id_from must be 'tag' or 'filename', got {run_id_from!r}"
        raise ParameterError(msg)
    if not paths:
        msg = "no run files given"
        raise InputFormatError(msg)
    tok = _tokenize_files(list(paths), RUN_LINE, threads, workspace, raw)
    return _run_columns(tok, list(paths), lenient, run_id_from)


def parse_run_piece(
    buf: np.ndarray,
    size: int,
    path: PathLike,
    *,
    lines_before: int = 0,
    run_id_from: str = "tag",
    workspace: Workspace | None = None,
) -> RunColumns:
    """Parse whole lines of a run file held in memory (``buf[:size]``) as the lines that follow
    line ``lines_before`` of it.

    The columns are those :func:`parse_run_files` gives for the same lines, named
    after ``path`` and numbered as in the whole file (a large file is read in pieces
    this way, without temporary files). ``buf`` must have room for one byte more
    than ``size`` (a newline is written there) and must not change while the
    returned columns are in use (they point into it). Not lenient: a piece's
    skipped lines could not be counted for the whole file.
    """
    if run_id_from not in ("tag", "filename"):
        msg = f"run_id_from must be 'tag' or 'filename', got {run_id_from!r}"
        raise ParameterError(msg)
    if size == 0 or buf[size - 1] != 10:  # the last line of a file may lack its newline
        if buf.shape[0] <= size:
            msg = f"the buffer needs room for {size + 1} bytes, has {buf.shape[0]}"
            raise ParameterError(msg)
        buf[size] = 10
        size += 1
    if lines_before == 0 and size >= 3 and bytes(buf[:3]) == BOM:
        buf[:3] = 32  # as _read_all: blanks keep every offset
    tok = _tokenize_buffer(
        buf[:size],
        np.zeros(1, np.int64),
        np.array([size], np.int64),
        [str(path)],
        RUN_LINE,
        workspace,
    )
    tok.line_no += lines_before
    return _run_columns(tok, [path], False, run_id_from)


def _run_columns(
    tok: _Tokens, paths: Sequence[PathLike], lenient: bool, run_id_from: str
) -> RunColumns:
    """Run columns from tokenised run files: every check of :func:`parse_run_files`."""
    skipper = _Skipper(lenient, "run")
    wordy = tok.ibad & tok.fbad  # rank and score both words: a header, or garbage
    _check_header(tok, wordy, lenient, "qid Q0 docno rank score tag", (3, 4))
    if run_id_from == "tag" and (tok.same_bad >= 0).any():
        f = int(np.flatnonzero(tok.same_bad >= 0)[0])
        r = int(tok.same_bad[f])
        in_file = np.flatnonzero((tok.file_of == f) & ~wordy)
        r0 = int(in_file[0])
        msg = (
            f"{tok.where(r)}: run tag {tok.field_value(r, 5)!r} differs from "
            f"{tok.field_value(r0, 5)!r} on line {int(tok.line_no[r0])}; a run file holds one "
            "run\n  hint: name runs after their files instead: use --run-id filename "
            "(API: run_id_from='filename')"
        )
        raise InputFormatError(msg)
    tok = _check_columns(tok, RUN_FIELDS, skipper, "qid Q0 docno rank score tag")
    score, bad = _scores(tok)
    t = tok
    tok = skipper.reject(
        tok, bad, lambda r: f"score is not a finite number: {t.field_value(r, 4)!r}"
    )
    if bad.any():
        score = score[~bad]
    skipper.warn()
    counts = np.bincount(tok.file_of, minlength=len(paths))
    if (counts == 0).any():
        name = tok.names[int(np.flatnonzero(counts == 0)[0])]
        msg = f"{name}: every line was malformed; nothing left to evaluate"
        raise InputFormatError(msg)
    first_row = tok.first_rows()
    names: list[str] = []
    seen: dict[str, int] = {}
    for f, p in enumerate(paths):
        if run_id_from == "filename":
            name = run_id_from_filename(p)
        else:
            name = tok.field_value(int(first_row[f]), 5, limit=None)
        if name in seen:
            g = seen[name]
            a, b = (tok.where(int(first_row[x])) for x in (g, f))
            if run_id_from == "filename":
                a, b = tok.names[g], tok.names[f]
            raise InputFormatError(duplicate_run_id(name, a, b, run_id_from))
        seen[name] = f
        names.append(name)
    rank = int64_array(tok.ival, tok.ibad)
    return RunColumns(
        run_names=names,
        run=tok.file_of,
        qid=tok.field(0),
        doc=tok.field(1),
        score=score,
        rank=rank,
        source=tok.source(),
    )
