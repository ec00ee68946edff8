"""Parquet files fasteval stored itself, read back only when they are sound.

Every Parquet file fasteval writes (:mod:`fasteval.io.writers`) carries two
checks:

* a CRC32 in every page header (Parquet's own page checksum, written by
  pyarrow's ``write_page_checksum``): every read here verifies the pages it
  decodes (``page_checksum_verification``);
* a whole-file digest in the footer's key-value metadata, :data:`DIGEST_KEY`
  -> JSON ``{"sha256": HEX, "bytes": N}``: the SHA-256 of the file's first
  ``N`` bytes, everything before the footer (pages, their headers, the
  dictionaries). The footer itself is Thrift that the reader parses and
  checks (row counts, offsets); a file cut short has no footer at all.

A page checksum catches a damaged page where it is decoded; the digest also
catches a damaged page header, and a reader that decodes only some columns
(``eval`` skips an archive's ``rank``) still refuses a file with any damage.
Hashing is cheap next to decoding (SHA-NI).

A mismatch is a :class:`~fasteval.errors.DamagedFileError` that names the
file, says it is damaged and what to do. Files without a digest (written by
other tools, or by fasteval before the digest) are read as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.errors import DamagedFileError, InputFormatError

DIGEST_KEY = b"fasteval.digest"
"""Footer key-value metadata key of the whole-file digest."""

WRITE_AGAIN = "write it again"
"""What to do about a damaged output of fasteval (the default advice)."""

PathLike = str | os.PathLike[str]


def digest_entry(md: pq.FileMetaData) -> dict[str, Any] | None:
    """The digest recorded in a Parquet footer (``sha256``, ``bytes``), or ``None``."""
    raw = (md.metadata or {}).get(DIGEST_KEY)
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
    except ValueError:
        return {}
    return entry if isinstance(entry, dict) else {}


def damaged(path: PathLike, what: str, advice: str = WRITE_AGAIN) -> DamagedFileError:
    """The one-line error for a damaged stored file."""
    return DamagedFileError(f"{path}: damaged file ({what}); {advice}", what)


def footer_start(path: PathLike) -> tuple[int, int]:
    """``(size, offset of the footer)`` of a Parquet file (from its last 8 bytes)."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        if size < 12:
            return size, -1
        f.seek(size - 8)
        tail = f.read(8)
    if tail[4:] != b"PAR1":
        return size, -1
    (length,) = struct.unpack("<i", tail[:4])
    return size, size - 8 - length


_HASH_CHUNK = 1 << 20


def sha256_prefix(path: PathLike, n: int) -> str:
    """The SHA-256 of the first ``n`` bytes of ``path`` (hex), through one buffer (a memory
    map would count the file's pages in the process's resident memory)."""
    h = hashlib.sha256()
    buf = bytearray(min(n, _HASH_CHUNK))
    view = memoryview(buf)
    left = n
    with open(path, "rb", buffering=0) as f:
        while left > 0:
            got = f.readinto(view[: min(left, len(buf))])
            if not got:
                break  # shorter than n: the digest cannot match
            h.update(view[:got])  # hashlib releases the GIL over large updates
            left -= got
    return h.hexdigest()


def check_digest(
    path: PathLike, md: pq.FileMetaData | None = None, *, advice: str = WRITE_AGAIN
) -> bool:
    """Check the whole-file digest of a Parquet file fasteval wrote.

    Returns
    -------
    bool
        True when the file carries a digest and it matches; False when it has
        none (another tool's file, or an older fasteval's).

    Raises
    ------
    DamagedFileError
        When the bytes before the footer are not the ones written.
    """
    md = md if md is not None else read_metadata(path, advice=advice)
    entry = digest_entry(md)
    if entry is None:
        return False
    want, n = entry.get("sha256"), entry.get("bytes")
    if not isinstance(want, str) or not isinstance(n, int):
        raise damaged(path, "its digest entry is unreadable", advice)
    size, start = footer_start(path)
    if start != n:
        raise damaged(path, f"{size:,} bytes, not the {n + (size - start):,} written", advice)
    if sha256_prefix(path, n) != want:
        raise damaged(path, "its content does not match the digest written with it", advice)
    return True


def _reason(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


@contextmanager
def reading(path: PathLike, *, advice: str = WRITE_AGAIN, ours: bool = True) -> Iterator[None]:
    """pyarrow's errors while decoding ``path`` as one line: a :class:`DamagedFileError` for
    a page checksum (or any error in a file fasteval wrote, ``ours``), else an
    :class:`InputFormatError`."""
    try:
        yield
    except (OSError, pa.ArrowException) as e:
        text = str(e)
        if "checksum" in text.lower() or "crc" in text.lower():
            raise damaged(path, "a page checksum does not match", advice) from None
        if isinstance(e, FileNotFoundError):
            msg = f"no such file: {path}"
            raise InputFormatError(msg) from None
        if ours:
            raise damaged(path, _reason(e).splitlines()[0][:160], advice) from None
        msg = f"{path}: not a readable Parquet file ({_reason(e)[:160]})"
        raise InputFormatError(msg) from None


def read_metadata(path: PathLike, *, advice: str = WRITE_AGAIN) -> pq.FileMetaData:
    """The footer of a Parquet file; one line when it has none (cut short, or not Parquet)."""
    with reading(path, advice=advice, ours=False):
        return pq.read_metadata(path)


def parquet_file(
    path: PathLike,
    *,
    advice: str = WRITE_AGAIN,
    read_dictionary: list[str] | None = None,
    check: bool = True,
    page_checks: bool = True,
) -> pq.ParquetFile:
    """``path`` opened for reading with every page's checksum verified (``page_checks=False``
    only where the caller checked the digest), the digest checked first with ``check``."""
    with reading(path, advice=advice, ours=False):
        f = pq.ParquetFile(
            path, read_dictionary=read_dictionary, page_checksum_verification=page_checks
        )
    if check:
        check_digest(path, f.metadata, advice=advice)
    return f


def read_table(
    path: PathLike,
    columns: list[str] | None = None,
    *,
    advice: str = WRITE_AGAIN,
    read_dictionary: list[str] | None = None,
) -> pa.Table:
    """A whole Parquet file, its digest and page checksums verified (one line if damaged)."""
    f = parquet_file(path, advice=advice, read_dictionary=read_dictionary)
    ours = digest_entry(f.metadata) is not None
    with reading(path, advice=advice, ours=ours):
        return f.read(columns=columns, use_threads=True)


def is_ours(path: PathLike) -> bool:
    """Whether ``path`` is a Parquet file that fasteval wrote with a digest."""
    try:
        return digest_entry(pq.read_metadata(path)) is not None
    except (OSError, pa.ArrowException):
        return False


def verify_file(path: PathLike, *, advice: str = WRITE_AGAIN) -> tuple[int, bool]:
    """Check every page, the digest and the row counts of a Parquet file.

    Returns
    -------
    tuple of (int, bool)
        The number of rows, and whether the file carried a digest.

    Raises
    ------
    DamagedFileError
        On any damage (naming what was found).
    """
    f = parquet_file(path, advice=advice, check=False)
    md = f.metadata
    has_digest = check_digest(path, md, advice=advice)
    rows = 0
    with reading(path, advice=advice, ours=True):
        for i in range(md.num_row_groups):
            t = f.read_row_group(i, use_threads=True)
            if t.num_rows != md.row_group(i).num_rows:
                what = f"row group {i} holds {t.num_rows:,} rows, its footer says "
                raise damaged(path, what + f"{md.row_group(i).num_rows:,}", advice)
            rows += t.num_rows
    if rows != md.num_rows:
        raise damaged(path, f"{rows:,} rows, its footer says {md.num_rows:,}", advice)
    return rows, has_digest


def file_entry(path: PathLike) -> dict[str, Any]:
    """A manifest's entry for a stored file: its size and the digest in its footer."""
    p = Path(path)
    entry = digest_entry(pq.read_metadata(p)) or {}
    return {"bytes": p.stat().st_size, "sha256": entry.get("sha256")}
