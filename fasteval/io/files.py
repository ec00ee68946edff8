"""Text files read whole: plain or gzip, UTF-8 checked, reused memory.

:func:`read_text` and :func:`content_lines` for small files; :func:`read_files` for runs
and qrels, whose bytes go to the tokenizer (:mod:`fasteval.io.tokens`) as they are.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from fasteval import parallel
from fasteval.errors import InputFormatError
from fasteval.io import gz

PathLike = str | os.PathLike[str]


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
    if raw[:2] == gz.MAGIC:
        try:
            raw = gz.decompress(raw)
        except gz.ERRORS as e:
            raise InputFormatError(gz.bad_gzip_message(p, e)) from None
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


def read_text(path: PathLike, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The text of a (possibly gzip-compressed) file, without a leading BOM, newlines as
    Python's text mode reads them (an :class:`InputFormatError` for an unreadable file,
    bad gzip or bytes that do not decode)."""
    raw = read_bytes(path).tobytes()
    try:
        text = raw.decode(encoding, errors)
    except UnicodeDecodeError as e:
        raise InputFormatError(utf8_error(os.fspath(path), raw, e.start)) from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def content_lines(path: PathLike) -> list[tuple[int, str, list[str]]]:
    """The lines of ``path`` (:func:`read_text`) with content: each one's number (from 1),
    text and blank-separated fields; blank lines and ``#`` comments are skipped."""
    lines = enumerate(read_text(path).splitlines(), 1)
    return [(n, t, f) for n, t in lines if (f := t.split()) and not f[0].startswith("#")]


class Workspace:
    """Arrays reused from one read to the next (a stream's batches, a file's pieces): fresh
    memory is paid for at first touch (the kernel zeroes every page). Columns read with a
    workspace point into it: valid until its next read."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def array(self, name: str, shape: tuple[int, ...], dtype: type, fill: object = None) -> Any:
        """An array of ``shape`` (C order) on the storage kept under ``name``, every element
        ``fill`` (``None``: as it is, as ``np.empty``)."""
        size = int(np.prod(shape))
        a = self._arrays.get(name)
        if a is None or a.dtype != np.dtype(dtype) or a.shape[0] < size:
            a = np.empty(max(size, int(size * 1.25)), dtype)  # some room for the next batch
            self._arrays[name] = a
        out = a[:size].reshape(shape)
        if fill is not None:
            out.fill(fill)
        return out


def new_array(
    ws: Workspace | None, name: str, shape: tuple[int, ...], dtype: type, fill: object = None
) -> Any:
    """``np.empty`` (``fill=None``) or ``np.full``, on ``ws``'s storage ``name`` if any."""
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
    """Read files (plain or gzip) into one buffer, each ending in a newline (a byte-order
    mark blanked); the GIL is released, so a stream reads its next batch in a thread."""
    buf, starts, ends = _read_all(list(paths), threads, workspace)
    return RawFiles(list(paths), buf, starts, ends)


def _gunzip_into(path: PathLike, out: memoryview) -> int:
    """Decompress a gzip file straight into ``out`` (no fresh memory the size of the file);
    its size, or -1 when it does not fit exactly (several members, or over 4 GiB)."""
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
    paths: list[PathLike], threads: int | None, ws: Workspace | None = None, in_place: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All files in one buffer, each ending in a newline. With ``in_place``, a gzip file is
    inflated into its place at the size its trailer gives; if any does not fit (or fails),
    every gzip file is decompressed whole first (:func:`read_bytes` names what is wrong)."""
    workers = threads or os.cpu_count() or 1  # (inflate releases the GIL)
    sizes = np.zeros(len(paths), np.int64)
    whole: dict[int, np.ndarray] = {}  # read whole first: unreadable, or gzip not in place
    packed: list[int] = []
    for i, p in enumerate(paths):
        try:
            isize = gz.trailer_size(p)
            sizes[i] = os.path.getsize(p) if isize is None else isize
            if isize is not None:
                packed.append(i)
        except OSError:
            whole[i] = read_bytes(p)  # raises the proper InputFormatError
    direct = set(packed) if in_place else set()
    if not in_place:
        inflated = parallel.map_threads(read_bytes, [paths[i] for i in packed], workers)
        whole.update(zip(packed, inflated, strict=True))
    for i, b in whole.items():
        sizes[i] = b.size
    sizes += 1
    ends = np.cumsum(sizes)
    starts = ends - sizes
    buf = new_array(ws, "buf", (int(ends[-1]) if len(paths) else 0,), np.uint8)
    view = buf.data

    def fill(i: int) -> int:  # file i into its place (the threads read and inflate apart)
        room = view[int(starts[i]) : int(ends[i]) - 1]
        if i in whole:
            room[:] = whole[i].data
            return whole[i].size
        if i in direct:
            try:
                return _gunzip_into(paths[i], room)
            except gz.ERRORS:
                return -1
        with open(paths[i], "rb") as fh:
            return fh.readinto(room)

    got = parallel.map_threads(fill, range(len(paths)), workers)
    if any(got[i] != int(sizes[i]) - 1 for i in direct):
        # a trailer that does not give the size (several members), or a bad file
        return _read_all(paths, threads, ws, in_place=False)
    for i, n in enumerate(got):
        a = int(starts[i])
        buf[a + n] = 10  # every file ends with a newline (an extra blank line is skipped)
        ends[i] = a + n + 1
        if n >= 3 and bytes(buf[a : a + 3]) == BOM:
            buf[a : a + 3] = 32  # a UTF-8 byte-order mark: blanks keep every offset
    return buf, starts, ends


def check_utf8(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, names: list[str], suspects: np.ndarray
) -> None:
    """Every file ``buf[starts[i]:ends[i]]`` that ``suspects`` marks (it has a byte ``>= 0x80``)
    must be UTF-8 (ids are text), else an :class:`InputFormatError` names the file, line and
    byte."""
    for i in np.flatnonzero(suspects).tolist():
        data = buf.data[int(starts[i]) : int(ends[i])]  # a view, not a copy
        try:
            codecs.utf_8_decode(data, "strict", True)
        except UnicodeDecodeError as e:
            raise InputFormatError(utf8_error(names[i], data, e.start)) from None
