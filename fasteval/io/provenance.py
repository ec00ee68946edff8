"""What made an output (:class:`Provenance`), and the files' digests (shared with an
archive's digest check, :mod:`fasteval.io.stored`). The standard library and ``blake3``
only: a command that writes Parquet starts hashing its inputs before numpy and pyarrow
load."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import blake3

PathLike = str | os.PathLike[str]


def footer_json(meta: dict[bytes, bytes] | None, key: bytes) -> dict[str, Any] | None:
    """The JSON object under ``key`` of a Parquet footer's key-value metadata: ``None``
    when there is none, ``{}`` when the value is not a JSON object."""
    raw = (meta or {}).get(key)
    if raw is None:
        return None
    try:
        got = json.loads(raw)
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


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

#: The digest fasteval writes and records: BLAKE3, a cryptographic hash about four times
#: as fast as SHA-256 on one core (its hashing of the inputs is a tenth of a large
#: evaluation's work otherwise). Files written before it carry SHA-256, still checked.
DIGEST = "blake3"
HASHERS: dict[str, Any] = {"blake3": blake3.blake3, "sha256": hashlib.sha256}


def digest_in(entry: dict[str, Any]) -> str | None:
    """The algorithm of :data:`HASHERS` an entry (``{ALGORITHM: HEX, ...}``) records, if any."""
    return next((a for a in HASHERS if a in entry), None)


def _digests(path: PathLike, algorithm: str) -> tuple[str, str | None]:
    """The digest of ``path`` whole and before its Parquet footer (``None``: it has none,
    else what :data:`fasteval.io.stored.DIGEST_KEY` records), in one read through one
    buffer (a memory map would count the file's pages in the process's resident memory)."""
    _, mark = footer_start(path)
    h, before, at = HASHERS[algorithm](), None, 0
    buf = memoryview(bytearray(_HASH_CHUNK))
    with open(path, "rb", buffering=0) as f:
        # a read ends at the footer: the state there is the digest written
        while got := f.readinto(buf[: mark - at] if at < mark < at + len(buf) else buf):
            h.update(buf[:got])  # both release the GIL over large updates
            at += got
            if at == mark:
                before = h.hexdigest()
    return h.hexdigest(), before


class FileHash:
    """A file's :func:`_digests`, read by the first thread to ask (the others wait)."""

    def __init__(self, path: PathLike, algorithm: str | None = None) -> None:
        self.path, self.algorithm = path, algorithm or DIGEST
        st = os.stat(path)
        self.identity = st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
        self._lock = threading.Lock()
        self._value: tuple[str, str | None] | None = None

    def get(self) -> tuple[str, str | None]:
        """The file's digests (whole, before its footer)."""
        with self._lock:
            if self._value is None:
                self._value = _digests(self.path, self.algorithm)
            return self._value

    def start(self) -> FileHash:
        """Read the file on a thread of its own from now (an error is :meth:`get`'s)."""
        threading.Thread(target=self._try, name="fasteval-digest", daemon=True).start()
        return self

    def _try(self) -> None:
        with suppress(OSError):
            self.get()


def file_hash(path: PathLike, shared: dict[str, FileHash] | None = None) -> FileHash:
    """The hash of ``path`` kept in ``shared`` (else the provenance in effect's: an archive's
    digest check reads nothing a command's provenance hashes), made there if it is missing
    or the file changed since."""
    if shared is None:
        shared = _made_by[-1].hashes if _made_by else {}
    new = FileHash(path)
    h = shared.setdefault(key := os.path.realpath(path), new)  # (one step: threads share it)
    if h.identity != new.identity:
        h = shared[key] = new
    return h


#: Footer key-value metadata key of what made a Parquet output (:class:`Provenance`).
PROVENANCE_KEY = b"fasteval.provenance"


class Provenance:
    """What made an output: fasteval's version, the ``command`` run, the ``measures`` asked
    for (empty: the default), the other ``options`` (JSON values) and the ``inputs`` read.

    Every Parquet file written while one is in effect (:func:`made_by`) carries it in its
    footer under :data:`PROVENANCE_KEY`, as JSON: ``{"version", "command", "measures",
    "options", "inputs": [{"path", "bytes", "blake3"}]}`` (a folder stands for its files).
    The inputs are hashed once, from :meth:`start` on, else when the first Parquet file is
    finished (text outputs never pay for it); an archive's digest check reuses its hash.
    """

    def __init__(
        self,
        command: str,
        measures: Sequence[str],
        options: dict[str, Any],
        inputs: Sequence[PathLike],
    ) -> None:
        self.command = command
        self.measures = list(measures)
        self.options = options
        self.inputs = [Path(p) for p in inputs]
        self._json: bytes | None = None
        self.hashes: dict[str, FileHash] = {}  # shared with the readers (made_by)
        self._hashing: threading.Thread | None = None

    def start(self) -> None:
        """Hash the inputs on a thread of their own from now (a command sure to write Parquet
        has the digests when its file is stamped, not after its work)."""
        if self._hashing is not None:
            return
        files = self._files()

        def work() -> None:
            for p in files:
                with suppress(OSError):  # as_json hashes again and names the failure
                    file_hash(p, self.hashes).get()

        self._hashing = threading.Thread(target=work, name="fasteval-provenance", daemon=True)
        self._hashing.start()

    def _files(self) -> list[Path]:
        out: list[Path] = []
        for p in self.inputs:
            if p.is_dir():
                out += sorted(q for q in p.rglob("*") if q.is_file())
            elif p.is_file():
                out.append(p)
        return list(dict.fromkeys(out))

    def as_json(self) -> bytes:
        """The footer's value (computed once: the inputs are hashed here)."""
        if self._json is None:
            # (not importlib.metadata, which loads email and zipfile on a command's start)
            from fasteval import parallel  # noqa: PLC0415 (only when a file is stamped)
            from fasteval._version import __version__ as v  # noqa: PLC0415

            files = self._files()
            # (what start() hashed, or is hashing, is read again only if it changed since)
            digests = parallel.map_threads(lambda p: file_hash(p, self.hashes).get()[0], files)
            record = {
                "version": v,
                "command": self.command,
                "measures": self.measures,
                "options": self.options,
                "inputs": [
                    {"path": str(p), "bytes": p.stat().st_size, DIGEST: h}
                    for p, h in zip(files, digests, strict=True)
                ],
            }
            self._json = json.dumps(record, default=str).encode()
        return self._json


_made_by: list[Provenance] = []  # the one in effect last (a command sets it for its run)


@contextmanager
def made_by(p: Provenance | None) -> Iterator[None]:
    """Stamp ``p`` on every Parquet file written inside the block (None: nothing)."""
    if p is None:
        yield
        return
    _made_by.append(p)
    try:
        yield
    finally:
        _made_by.remove(p)


def provenance_of(md: dict[bytes, bytes] | None) -> dict[str, Any] | None:
    """The provenance a Parquet footer's key-value metadata holds, if any."""
    return footer_json(md, PROVENANCE_KEY) or None


def stamp() -> dict[bytes, bytes]:
    """The footer entry of the provenance in effect (:func:`made_by`), or nothing."""
    return {PROVENANCE_KEY: _made_by[-1].as_json()} if _made_by else {}
