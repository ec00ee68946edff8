"""Parquet files fasteval stored itself, read back only when they are sound.

Every Parquet file fasteval writes (:mod:`fasteval.io.writers`) carries a CRC32 in every
page header (pyarrow's ``write_page_checksum``; reads here verify the pages they decode)
and, in the footer's key-value metadata under :data:`DIGEST_KEY`, a whole-file digest:
JSON ``{"blake3": HEX, "bytes": N}``, the BLAKE3 digest of the ``N`` bytes before the
footer (which the reader parses and checks itself; a file cut short has none). Files
written before BLAKE3 carry ``"sha256"`` instead, checked with it. The digest also
catches a damaged page header, or a page of a column a reader skips (``eval`` skips an
archive's ``rank``).

A mismatch is a :class:`~fasteval.errors.DamagedFileError` that names the file, says it
is damaged and what to do. Files without a digest (other tools', older fasteval's) are
read as before.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fasteval.errors import DamagedFileError, InputFormatError
from fasteval.io import provenance as pv

DIGEST_KEY = b"fasteval.digest"
"""Footer key-value metadata key of the whole-file digest."""

WRITE_AGAIN = "write it again"
"""What to do about a damaged output of fasteval (the default advice)."""

PathLike = str | os.PathLike[str]


def digest_entry(md: pq.FileMetaData) -> dict[str, Any] | None:
    """The digest recorded in a Parquet footer (``blake3`` or ``sha256``, ``bytes``)."""
    return pv.footer_json(md.metadata, DIGEST_KEY)


def damaged(path: PathLike, what: str, advice: str = WRITE_AGAIN) -> DamagedFileError:
    """The one-line error for a damaged stored file."""
    return DamagedFileError(f"{path}: damaged file ({what}); {advice}", what)


class DigestCheck:
    """A Parquet file's whole-file digest, read on a thread of its own from the moment it is
    made (:func:`start_check`); :meth:`join` waits for it and raises on a mismatch."""

    def __init__(self, path: PathLike, want: str, advice: str, algorithm: str) -> None:
        self.path, self.want, self.advice = path, want, advice
        # a file of before BLAKE3: a hash of its own, not the provenance's
        h = pv.file_hash(path) if algorithm == pv.DIGEST else pv.FileHash(path, algorithm)
        self.hash = h.start()
        self.matched = False  # join() found the digest written

    def join(self) -> None:
        """Raise :class:`DamagedFileError` when the bytes before the footer are not the
        ones written (an ``OSError`` when they cannot be read)."""
        if self.hash.get()[1] != self.want:
            what = "its content does not match the digest written with it"
            raise damaged(self.path, what, self.advice)
        self.matched = True


def start_check(path: PathLike, md: pq.FileMetaData, *, advice: str) -> DigestCheck | None:
    """The whole-file digest of a Parquet file fasteval wrote (footer ``md``) being checked,
    ``None`` when it has none (another tool's file, or an older fasteval's); its entry and
    the file's size are checked at once."""
    entry = digest_entry(md)
    if entry is None:
        return None
    algorithm = pv.digest_in(entry)
    want, n = entry.get(algorithm or ""), entry.get("bytes")
    if algorithm is None or not isinstance(want, str) or not isinstance(n, int):
        raise damaged(path, "its digest entry is unreadable", advice)
    size, start = pv.footer_start(path)
    if start != n:
        raise damaged(path, f"{size:,} bytes, not the {n + (size - start):,} written", advice)
    return DigestCheck(path, want, advice, algorithm)


def check_digest(
    path: PathLike, md: pq.FileMetaData | None = None, *, advice: str = WRITE_AGAIN
) -> bool:
    """Check the whole-file digest of a Parquet file fasteval wrote (:func:`start_check`,
    joined).

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
    check = start_check(path, md, advice=advice)
    if check is not None:
        check.join()
    return check is not None


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
    algorithm = pv.digest_in(entry) or pv.DIGEST
    return {"bytes": p.stat().st_size, algorithm: entry.get(algorithm)}
