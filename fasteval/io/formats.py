"""The one home of input formats: what a file's name says it holds, and how it opens.

Every reader asks here rather than testing a suffix itself: Parquet (``.parquet``,
``.pq``; a fasteval run archive, a table fasteval stored, or any other), and text
otherwise, gzip when its first bytes say so (read through :mod:`fasteval.io.gz`). Also
the cheap facts a plan of batches needs before reading: a text file's head, its size
unpacked and its first run id. (Outputs: :mod:`fasteval.io.writers`.)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from fasteval.io import gz

PARQUET_SUFFIXES = (".parquet", ".pq")
GZIP_SUFFIX = ".gz"
PathLike = str | os.PathLike[str]


def is_parquet(path: PathLike) -> bool:
    """Whether ``path`` is named as a Parquet file (``.parquet`` or ``.pq``, any case)."""
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def open_bytes(path: PathLike) -> IO[bytes]:
    """``path`` opened for reading bytes, unpacked when it is gzip (by its first bytes, as
    :func:`fasteval.io.files.read_bytes` tells)."""
    f = open(path, "rb")  # noqa: SIM115 (returned open)
    if f.read(2) != gz.MAGIC:
        f.seek(0)
        return f
    f.close()
    return gz.GzipReader(path)  # type: ignore[return-value]


def head(path: PathLike, size: int = 16384) -> bytes | None:
    """The first ``size`` bytes of a file, unpacked if gzip (``None`` if unreadable)."""
    try:
        with open_bytes(path) as f:
            return f.read(size)
    except gz.ERRORS:  # OSError among them
        return None


def unpacked_size(path: Path) -> int:
    """The bytes of ``path`` once unpacked: a gzip file's trailer (mod 2**32, never
    below the packed size), else its size."""
    size = path.stat().st_size
    try:
        isize = gz.trailer_size(path)
    except OSError:
        return size
    return size if isize is None else max(isize, size)  # over 4 GiB, the trailer wraps


def first_tag(path: Path) -> str | None:
    """The 6th field (a run file's tag) of the first non-blank line; None if unreadable."""
    try:
        with open_bytes(path) as f:
            for line in f:
                fields = line.split()
                if fields:
                    return fields[5].decode() if len(fields) >= 6 else None
    except (OSError, EOFError, UnicodeDecodeError):
        return None
    return None


def table_format(path: PathLike) -> str:
    """What a document table's name says it is: ``parquet``, ``csv``, ``jsonl``
    (``.jsonl``, ``.ndjson``, ``.json``) or ``trec`` (SGML); a ``.gz`` aside."""
    name = Path(path).name.lower().removesuffix(GZIP_SUFFIX)
    kinds: dict[str, Any] = {"parquet": (".parquet",), "csv": (".csv",)}
    kinds["jsonl"] = (".jsonl", ".ndjson", ".json")
    return next((k for k, ends in kinds.items() if name.endswith(ends)), "trec")


#: What the suffix of an output path names (each command writes some of these).
SUFFIX_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".md": "markdown",
    ".markdown": "markdown",
    ".tex": "latex",
    ".html": "html",
    ".htm": "html",
}
#: Suffixes that mean a command's own text (trec_eval's text for ``eval``), as does none.
TEXT_SUFFIXES = ("", ".txt", ".trec", ".eval", ".out", ".res", ".run")
#: Formats whose bytes are not text: never written into a file named as text.
BINARY = ("parquet",)
# (suffix, format) pairs that agree although the suffix names another format: ndeval's
# own layout is CSV
_AGREE = {(".csv", "ndeval")}


def output_suffix(path: PathLike) -> str:
    """The suffix of ``path`` that names its format (lower case; ``""`` for none)."""
    return Path(path).suffix.lower()


def named_format(path: PathLike, own: Sequence[tuple[str, str]] = ()) -> str | None:
    """The format ``path``'s suffix names (``own`` pairs first), None if none."""
    suffix = output_suffix(path)
    return dict(own).get(suffix, SUFFIX_FORMATS.get(suffix))


def is_text_name(path: PathLike) -> bool:
    """Whether ``path`` is named as text (``.txt``, ``.run``, ..., or no suffix)."""
    return output_suffix(path) in TEXT_SUFFIXES


def agrees(path: PathLike, fmt: str) -> bool:
    """Whether ``fmt`` may be written to ``path`` although its suffix names another."""
    return (output_suffix(path), fmt) in _AGREE
