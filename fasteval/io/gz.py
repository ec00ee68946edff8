"""gzip input through ISA-L's inflate when it is installed, else zlib.

ISA-L (the ``isal`` package) reads the same gzip streams several times faster
than zlib (figures: benchmarks/RESULTS.md, "Figures moved out of the code") and, like
zlib, releases the GIL while it inflates, so a batch read ahead in a thread
still overlaps parsing. Without it (a platform with no wheel) everything
works through the standard library, only slower; the outputs are the bytes
of the file either way.
"""

from __future__ import annotations

import gzip
import os
import zlib
from types import ModuleType
from typing import Any

from fasteval.errors import InputFormatError

_gzip: ModuleType = gzip
_zlib: ModuleType = zlib
try:
    from isal import igzip, isal_zlib

    _gzip, _zlib = igzip, isal_zlib
except ImportError:  # pragma: no cover - a platform without isal's wheels
    pass


MAGIC = b"\x1f\x8b"
"""A gzip file's first two bytes: how every reader tells gzip (whatever the file's name)."""


class GzipDataError(InputFormatError):
    """A gzip file that ends early or is damaged, found while reading it piece by piece."""


# what the libraries raise themselves (a truncated stream is EOFError, which click
# would take for Ctrl-C: it must never leave this module bare)
_RAW_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, _zlib.error)
# what a truncated or damaged gzip file raises, whichever library reads it
ERRORS: tuple[type[BaseException], ...] = (*_RAW_ERRORS, GzipDataError)


def bad_gzip_message(path: Any, e: BaseException) -> str:
    """The one-line message for a gzip file that cannot be read to its end."""
    return f"{path}: not a valid gzip file ({e})"


def trailer_size(path: Any) -> int | None:
    """The unpacked size a gzip file's trailer states (its last member's, mod 2**32), None
    when the file is not gzip by its first bytes (an ``OSError`` if it is unreadable)."""
    with open(path, "rb") as f:
        if f.read(2) != MAGIC:
            return None
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def decompressobj() -> Any:
    """A streaming inflater for one gzip member (``zlib.decompressobj(wbits=31)``'s API)."""
    return _zlib.decompressobj(wbits=31)


def decompress(raw: bytes) -> bytes:
    """The whole content of gzip data (every member, as :func:`gzip.decompress`)."""
    out: bytes = _gzip.decompress(raw)
    return out


class GzipReader:
    """A gzip file opened for reading bytes (as ``gzip.open(path, "rb")``, the methods the
    readers use) whose read errors name the file (:class:`GzipDataError`, an
    :class:`~fasteval.errors.InputFormatError`), never a bare ``EOFError`` (which the
    command line took for Ctrl-C)."""

    def __init__(self, path: Any) -> None:
        self.path = path
        self.f = _gzip.open(path, "rb")

    def _guard(self, read: Any, *args: Any) -> Any:
        try:
            return read(*args)
        except _RAW_ERRORS as e:
            raise GzipDataError(bad_gzip_message(self.path, e)) from None

    def read(self, size: int = -1) -> bytes:
        return self._guard(self.f.read, size)  # type: ignore[no-any-return]

    def readinto(self, b: Any) -> int:
        return self._guard(self.f.readinto, b)  # type: ignore[no-any-return]

    def __iter__(self) -> Any:
        return iter(lambda: self._guard(self.f.readline), b"")

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> GzipReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
