"""Issue 27: never a number from a damaged file, and one clear line when the disk is full.

Damage is made as a bad disk or copy makes it: bytes flipped inside a data page
(found from the Parquet metadata), a file cut short, grown, or swapped for
another. A full disk is the writer's file raising ``OSError(ENOSPC)`` (and, where
the machine lets root mount a small tmpfs, a real full file system).
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from fasteval.api import evaluate
from fasteval.cli import main
from fasteval.errors import DamagedFileError, FastevalWarning, InputFormatError, WriteError
from fasteval.io import provenance, stored, writers
from fasteval.io.batches import BATCH_ROWS_ENV
from fasteval.studies import subsample
from tests.conftest import SAMPLE_DATA as DATA
from tests.conftest import one_line_error

QRELS = str(DATA / "sample.qrels")
SAMPLE_RUNS = str(DATA / "sample_runs.parquet")


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="fasteval")


def _runs(tmp_path: Path, seed: int = 7) -> tuple[Path, list[Path]]:
    """Qrels and three run files (seeded), big enough for pages of some size."""
    rng = np.random.default_rng(seed)
    qrels = tmp_path / "qrels"
    qrels.write_text(
        "".join(f"{q} 0 d{d} {int(rng.integers(0, 3))}\n" for q in range(1, 9) for d in range(60))
    )
    paths = []
    for r in range(3):
        p = tmp_path / f"run{r}"
        lines = []
        for q in range(1, 9):
            for k, d in enumerate(rng.permutation(300)[:200]):
                lines.append(f"{q} Q0 d{d} {k + 1} {rng.random() * 10:.6f} r{r}\n")
        p.write_text("".join(lines))
        paths.append(p)
    return qrels, paths


def _archive(tmp_path: Path) -> tuple[Path, Path]:
    qrels, paths = _runs(tmp_path)
    out = tmp_path / "a.parquet"
    res = _run(["ingest", *paths, "-o", out])
    assert res.exit_code == 0, res.output
    return qrels, out


def _page_region(path: Path, column: str, row_group: int = 0) -> tuple[int, int]:
    """The byte range of a column chunk's data pages (after its dictionary page)."""
    md = pq.read_metadata(path)
    rg = md.row_group(row_group)
    for i in range(rg.num_columns):
        cc = rg.column(i)
        if cc.path_in_schema == column:
            start = cc.dictionary_page_offset or cc.data_page_offset
            return cc.data_page_offset, start + cc.total_compressed_size
    raise AssertionError(f"no column {column}")


def _flip(path: Path, column: str, row_group: int = 0) -> None:
    """Flip three bytes in the middle of a column chunk's data pages (past the header)."""
    lo, hi = _page_region(path, column, row_group)
    assert hi - lo > 64, (lo, hi)  # a page with a payload, not only a header
    data = bytearray(path.read_bytes())
    mid = (lo + hi) // 2
    for k in range(3):
        data[mid + k] ^= 0x5A
    path.write_bytes(bytes(data))


# --------------------------------------------------------------------------- damaged archives


@pytest.mark.parametrize("column", ["doc_id", "score", "rank"])
def test_a_damaged_archive_page_is_an_error_and_no_output(tmp_path: Path, column: str) -> None:
    qrels, archive = _archive(tmp_path)
    sound = evaluate(qrels, archive, ["map", "P_10"])
    _flip(archive, column)  # "rank": a column eval does not even read

    for batch_rows in (None, 500):  # read whole, and in pieces of row groups
        with pytest.raises(DamagedFileError, match=r"a\.parquet: damaged file"):
            evaluate(qrels, archive, ["map", "P_10"], batch_rows=batch_rows)
    out = tmp_path / "out.parquet"
    res = _run(["eval", qrels, archive, "-m", "map", "-o", out])
    one_line_error(res, str(archive), "damaged file", "ingest the runs again")
    assert not out.exists()
    res = _run(["eval", qrels, archive, "-m", "map"])
    assert res.exit_code == 1 and res.stdout == ""  # not one number
    fused = tmp_path / "fused.run"
    one_line_error(_run(["fuse", archive, "-o", fused]), "damaged file")
    assert not fused.exists()
    res = _run(["verify", archive])
    assert res.exit_code == 1 and f"{archive}: DAMAGED" in res.stdout, res.output
    # the same archive, re-ingested, is sound again
    _, paths = _runs(tmp_path)
    assert _run(["ingest", *paths, "-o", archive]).exit_code == 0
    assert_frame_equal(evaluate(qrels, archive, ["map", "P_10"]), sound)


def test_a_resumed_study_on_a_damaged_archive_stops_and_keeps_its_parts(tmp_path: Path) -> None:
    qrels, archive = _archive(tmp_path)
    out = tmp_path / "st"
    args = ["study", "subsample", qrels, archive, "-m", "map", "--rates", "0.5", "--reps", "2"]
    assert _run([*args, "--no-plot", "-o", out]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _flip(archive, "doc_id")
    one_line_error(_run([*args, "--no-plot", "-o", out]), "damaged file")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_an_archive_without_a_digest_has_its_pages_checked(tmp_path: Path) -> None:
    """An older archive (no digest): its pieces are read with every page checked (the
    pages are left unchecked only when the digest matched)."""
    from fasteval.io import archive as io_archive

    qrels, sound = _archive(tmp_path)
    assert io_archive.row_group_pieces(sound, 500).verified
    f = pq.ParquetFile(sound)
    meta = {k: v for k, v in (f.metadata.metadata or {}).items() if k != stored.DIGEST_KEY}
    old = tmp_path / "old.parquet"
    table = f.read().replace_schema_metadata(meta)
    pq.write_table(
        table, old, write_page_checksum=True, row_group_size=f.metadata.row_group(0).num_rows
    )
    assert (
        io_archive.archive_info(old) is not None
        and stored.digest_entry(pq.read_metadata(old)) is None
    )
    assert not io_archive.row_group_pieces(old, 500).verified
    assert_frame_equal(
        evaluate(qrels, old, ["map"], batch_rows=500), evaluate(qrels, sound, ["map"])
    )
    _flip(old, "doc_id")
    with pytest.raises(DamagedFileError, match="a page checksum does not match"):
        evaluate(qrels, old, ["map"], batch_rows=500)


def test_the_digest_is_read_once_and_joined_before_any_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive read in pieces is hashed once, on a thread of its own while its pieces
    are decoded and scored; a mismatch found after some pieces were scored is still the
    error, and no output is written."""
    qrels, paths = _runs(tmp_path)
    archive = tmp_path / "a.parquet"
    res = CliRunner().invoke(
        main, ["ingest", *map(str, paths), "-o", str(archive)], env={BATCH_ROWS_ENV: "400"}
    )
    assert res.exit_code == 0, res.output
    assert pq.read_metadata(archive).num_row_groups > 2  # read in pieces below
    real = provenance._digests
    read: list[str] = []

    def counted(path: Any, algorithm: str) -> tuple[str, str | None]:
        read.append(Path(path).name)
        return real(path, algorithm)

    def late_mismatch(path: Any, algorithm: str) -> tuple[str, str | None]:
        time.sleep(0.3)  # the pieces are scored meanwhile
        return real(path, algorithm)[0], "0" * 64

    monkeypatch.setattr(provenance, "_digests", counted)
    sound = evaluate(qrels, archive, ["map"], batch_rows=500)
    assert read == ["a.parquet"]
    out = tmp_path / "out.parquet"
    read.clear()  # the command's provenance and the digest check share one read
    assert _run(["eval", qrels, archive, "-m", "map", "-o", out]).exit_code == 0
    assert sorted(read) == ["a.parquet", "qrels"]
    out.unlink()

    monkeypatch.setattr(provenance, "_digests", late_mismatch)
    with pytest.raises(DamagedFileError, match="does not match the digest"):
        evaluate(qrels, archive, ["map"], batch_rows=500)
    res = _run(["eval", qrels, archive, "-m", "map", "-o", out])
    one_line_error(res, str(archive), "damaged file", "ingest the runs again")
    assert not out.exists()
    monkeypatch.undo()
    assert_frame_equal(evaluate(qrels, archive, ["map"], batch_rows=500), sound)


def test_damage_that_decodes_is_named_as_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damage that still decodes can look like bad input (a repeated document) in a piece
    before the last: the digest is joined first, and the damaged file is the error."""
    from fasteval.engine import stream

    qrels, paths = _runs(tmp_path)
    archive = tmp_path / "a.parquet"
    res = CliRunner().invoke(
        main, ["ingest", *map(str, paths), "-o", str(archive)], env={BATCH_ROWS_ENV: "400"}
    )
    assert res.exit_code == 0, res.output
    real = provenance._digests

    def late_mismatch(path: Any, algorithm: str) -> tuple[str, str | None]:
        time.sleep(0.3)  # the first piece is scored meanwhile
        return real(path, algorithm)[0], "0" * 64

    def looks_bad(self: Any, cols: Any, unit: int) -> Any:
        raise InputFormatError(f"{archive}: row 1: document 'd1' repeated in query '1'")

    monkeypatch.setattr(provenance, "_digests", late_mismatch)
    monkeypatch.setattr(stream._Stream, "scored", looks_bad)
    with pytest.raises(DamagedFileError, match="does not match the digest"):
        evaluate(qrels, archive, ["map"], batch_rows=500)
    monkeypatch.setattr(provenance, "_digests", real)  # a sound archive: the input's error
    with pytest.raises(InputFormatError, match="repeated"):
        evaluate(qrels, archive, ["map"], batch_rows=500)


def test_files_digested_with_sha256_before_blake3_are_still_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Archives and study folders written before BLAKE3 carry SHA-256 digests: they are
    read and verified with SHA-256, and damage to them is still the error."""
    import hashlib
    import json

    monkeypatch.setattr(provenance, "DIGEST", "sha256")  # as earlier versions wrote
    qrels, archive = _archive(tmp_path)
    subsample(qrels, archive, ["map"], rates=[0.5], reps=2, out_dir=tmp_path / "st")
    monkeypatch.undo()
    entry = stored.digest_entry(pq.read_metadata(archive))
    assert entry is not None and set(entry) == {"sha256", "bytes"}
    size = entry["bytes"]
    assert entry["sha256"] == hashlib.sha256(archive.read_bytes()[:size]).hexdigest()
    listed = json.loads((tmp_path / "st" / "study.json").read_text())["files"]
    assert all(set(e) == {"bytes", "sha256"} for e in listed.values()), listed
    assert stored.check_digest(archive)
    assert _pieces_verified(archive)
    res = _run(["verify", archive, tmp_path / "st"])
    assert res.exit_code == 0 and "DAMAGED" not in res.stdout, res.output
    sound = evaluate(qrels, archive, ["map"], batch_rows=500)
    assert_frame_equal(sound, evaluate(qrels, archive, ["map"]))
    # a new output made from it records its inputs with BLAKE3
    out = tmp_path / "e.parquet"
    assert _run(["eval", qrels, archive, "-m", "map", "-o", out]).exit_code == 0
    made = provenance.provenance_of(pq.read_metadata(out).metadata)
    assert made is not None and all("blake3" in i for i in made["inputs"])
    assert set(stored.digest_entry(pq.read_metadata(out)) or {}) == {"blake3", "bytes"}
    _flip(archive, "doc_id")
    with pytest.raises(DamagedFileError, match="does not match the digest"):
        evaluate(qrels, archive, ["map"], batch_rows=500)


def _pieces_verified(path: Path) -> bool:
    from fasteval.io import archive as io_archive

    return io_archive.row_group_pieces(path, 500).verified is not None


def test_page_checksums_alone_catch_a_flipped_page(tmp_path: Path) -> None:
    # a file with page checksums but no digest (another writer's): the pages decide
    rng = np.random.default_rng(3)
    table = pa.table({"x": rng.random(50_000), "k": rng.integers(0, 9, 50_000)})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, write_page_checksum=True, compression="none")
    assert stored.read_table(path).equals(table)
    _flip(path, "x")
    # unverified, the damage reads as other numbers, silently
    assert not pq.read_table(path).equals(table)
    with pytest.raises(DamagedFileError, match="a page checksum does not match"):
        stored.read_table(path)


def test_every_parquet_file_fasteval_writes_carries_checksums_and_a_digest(
    tmp_path: Path,
) -> None:
    qrels, archive = _archive(tmp_path)
    outputs = [archive, tmp_path / "e.parquet", tmp_path / "f.parquet"]
    assert _run(["eval", qrels, archive, "-q", "-o", outputs[1]]).exit_code == 0
    assert _run(["fuse", archive, "-o", outputs[2]]).exit_code == 0
    subsample(qrels, archive, ["map"], rates=[0.5], reps=2, out_dir=tmp_path / "st")
    outputs += sorted((tmp_path / "st").glob("*.parquet"))
    assert len(outputs) == 6
    for p in outputs:
        assert stored.check_digest(p), p
        rows, digest = stored.verify_file(p)
        assert digest and rows == pq.read_metadata(p).num_rows
    res = _run(["verify", *outputs, tmp_path / "st"])
    assert res.exit_code == 0, res.output
    assert res.stdout.count(": ok (") == len(outputs) + 4  # the folder: study.json + 3 files


# --------------------------------------------------------------------------- damaged study parts


def test_a_flipped_page_in_a_study_part_is_never_used(tmp_path: Path) -> None:
    out = tmp_path / "s"
    first = subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5, 0.3], reps=3, out_dir=out)
    part = out / "setting=0.5.parquet"
    _flip(part, "value")
    res = _run(["verify", out])
    assert res.exit_code == 1 and f"{part}: DAMAGED" in res.stdout, res.output
    assert "delete it and run the study again" in res.stdout
    with pytest.warns(FastevalWarning, match=r"setting=0\.5\.parquet: damaged part file"):
        again = subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5, 0.3], reps=3, out_dir=out)
    assert again.resumed == 3  # the sound setting only
    assert_frame_equal(again.units, first.units)
    assert _run(["verify", out]).exit_code == 0


@pytest.mark.parametrize("damage", ["cut", "grown", "swapped"])
def test_a_study_part_cut_grown_or_swapped_is_recomputed(tmp_path: Path, damage: str) -> None:
    out, other = tmp_path / "s", tmp_path / "other"
    first = subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5], reps=3, seed=1, out_dir=out)
    part = out / "setting=0.5.parquet"
    if damage == "cut":
        part.write_bytes(part.read_bytes()[:-100])
    elif damage == "grown":
        part.write_bytes(part.read_bytes() + b"\0" * 10)
    else:  # a sound part of another study (another seed), copied over
        subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5], reps=3, seed=2, out_dir=other)
        shutil.copy(other / part.name, part)
    assert _run(["verify", out]).exit_code == 1
    with pytest.warns(FastevalWarning, match=r"damaged part file"):
        again = subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5], reps=3, seed=1, out_dir=out)
    assert again.resumed == 0
    assert_frame_equal(again.units, first.units)


def test_a_swapped_part_is_caught_even_without_the_manifest(tmp_path: Path) -> None:
    out, other = tmp_path / "s", tmp_path / "other"
    subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5], reps=2, seed=1, out_dir=out)
    subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5], reps=2, seed=2, out_dir=other)
    shutil.copy(other / "setting=0.5.parquet", out / "setting=0.5.parquet")
    meta = (out / "study.json").read_text()
    (out / "study.json").write_text(meta.split(',\n "files"')[0] + "\n}\n")  # no manifest
    res = _run(["verify", out])
    assert res.exit_code == 1 and "a part of another study" in res.stdout, res.output
    with pytest.warns(FastevalWarning, match=r"written by another study"):
        subsample(QRELS, SAMPLE_RUNS, ["map"], rates=[0.5], reps=2, seed=1, out_dir=out)


# --------------------------------------------------------------------------- verify


def test_verify_reports_each_kind_of_damage(tmp_path: Path) -> None:
    _, archive = _archive(tmp_path)
    kinds = {}
    for kind in ("page", "cut", "footer", "grown", "not parquet"):
        p = tmp_path / f"{kind.replace(' ', '_')}.parquet"
        shutil.copy(archive, p)
        data = p.read_bytes()
        if kind == "page":
            _flip(p, "doc_id")
        elif kind == "cut":
            p.write_bytes(data[: len(data) // 2])
        elif kind == "footer":
            p.write_bytes(data[:-12] + bytes(b ^ 0xFF for b in data[-12:-8]) + data[-8:])
        elif kind == "grown":
            p.write_bytes(data[:4] + b"\0" + data[4:])
        else:
            p.write_bytes(b"qid Q0 doc 1 1.0 run\n")
        kinds[kind] = p
    res = _run(["verify", archive, *kinds.values()])
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"{archive}: ok (archive, 4,800 rows"), lines[0]
    for kind, p in kinds.items():
        line = next(x for x in lines if x.startswith(f"{p}:"))
        assert ": DAMAGED (" in line, (kind, line)
    assert "5 of 6 file(s) damaged" in res.stderr
    assert _run(["verify", archive]).exit_code == 0
    missing = _run(["verify", tmp_path / "nothing.parquet"])
    assert missing.exit_code == 1 and "nothing.parquet: MISSING (no such file" in missing.stdout


# --------------------------------------------------------------------------- full disk


class _FullFile(io.BufferedWriter):
    """A real temporary file on a disk that fills: ``write`` fails at once (``when``
    "write"), after ``room`` bytes ("midway"), or only ``close`` does ("close")."""

    def __init__(self, path: str, code: int, when: str, room: int = 64) -> None:
        super().__init__(io.FileIO(path, "wb"))
        self.code, self.when, self.room = code, when, room

    def write(self, b: Any) -> int:
        n = len(memoryview(b).cast("B"))
        if self.when == "write" or (self.when == "midway" and n > self.room):
            raise OSError(self.code, os.strerror(self.code))
        if self.when == "midway":
            self.room -= n
            return super().write(b)
        return n  # "buffered": lost at close

    def close(self) -> None:
        super().close()
        if self.when == "close":
            raise OSError(self.code, os.strerror(self.code))


def _full_disk(
    monkeypatch: pytest.MonkeyPatch, code: int = errno.ENOSPC, when: str = "write"
) -> None:
    monkeypatch.setattr(writers, "_open", lambda path, mode: _FullFile(path, code, when))


def _write_sites(tmp_path: Path) -> list[tuple[list[Any], Path]]:
    """A command for every write site, and the file (or folder) it writes."""
    o = tmp_path / "out"
    docs = tmp_path / "docs.csv"
    docs.write_text("doc_id,text\nd1,a b c\nd2,b c d\n")
    q, r = QRELS, SAMPLE_RUNS
    return [
        (["eval", q, r, "-o", o / "e.txt"], o / "e.txt"),
        (["eval", q, r, "-o", o / "e.csv"], o / "e.csv"),
        (["eval", q, r, "-o", o / "e.json"], o / "e.json"),
        (["eval", q, r, "-o", o / "e.jsonl"], o / "e.jsonl"),
        (["eval", q, r, "-o", o / "e.parquet"], o / "e.parquet"),
        (["ingest", r, "-o", o / "a.parquet"], o / "a.parquet"),
        (["compare", q, r, "-o", o / "c.txt"], o / "c.txt"),
        (["fuse", r, "-o", o / "f.run"], o / "f.run"),
        (["fuse", r, "-o", o / "f.parquet"], o / "f.parquet"),
        (["fuse-study", q, r, "--size", "3", "--groups", "2", "-o", o / "fs.tsv"], o / "fs.tsv"),
        (["hsa", q, r, "-o", o / "h.tsv"], o / "h.tsv"),
        (["index", docs, "-o", o / "i.parquet"], o / "i.parquet"),
        (["report", q, r, "--no-figures", "-o", o / "rep"], o / "rep"),
        (["study", "subsample", q, r, "--reps", "2", "--rates", "0.5", "-o", o / "st"], o / "st"),
    ]


@pytest.mark.parametrize("when", ["write", "midway", "close"])
def test_a_full_disk_at_every_write_site_is_one_line_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    sites = _write_sites(tmp_path)
    for _, target in sites:
        if target.suffix:
            target.write_bytes(b"the previous file\n")
    _full_disk(monkeypatch, when=when)
    for args, target in sites:
        res = _run(args)
        err = one_line_error(res, "cannot write", ": no space left on device")
        assert err.split("cannot write ")[1].startswith(str(target)), (args, err)
        assert "thrift" not in err and "ComputeError" not in err
    for args, target in sites:
        if target.suffix:
            assert target.read_bytes() == b"the previous file\n", args
    # no temporary file anywhere, nothing written into the output folders
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert left == sorted(t.name for _, t in sites if t.suffix), left


@pytest.mark.parametrize("code", [errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO])
def test_each_errno_names_the_systems_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    _full_disk(monkeypatch, code)
    out = tmp_path / "e.parquet"
    reason = os.strerror(code)
    err = one_line_error(_run(["eval", QRELS, SAMPLE_RUNS, "-o", out]), f"cannot write {out}: ")
    assert err.endswith(reason[:1].lower() + reason[1:]), err
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(WriteError, match=f"cannot write {out}"):
        writers.write_parquet(pl.DataFrame({"a": [1]}), out)


def test_a_failed_rename_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "t.txt"
    target.write_text("old\n")

    def no_rename(src: str, dst: Any) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), src)

    monkeypatch.setattr(writers.os, "replace", no_rename)
    with pytest.raises(WriteError, match=r"cannot write .*t\.txt: read-only file system"):
        writers.write_text("new\n", target)
    assert target.read_text() == "old\n" and list(tmp_path.iterdir()) == [target]


@pytest.fixture
def small_disk(tmp_path: Path):
    """A real 512 KiB file system (tmpfs), when the machine lets us mount one."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def _fill(folder: Path) -> None:
    with open(folder / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC


def test_a_real_full_disk(small_disk: Path, tmp_path: Path) -> None:
    qrels, paths = _runs(tmp_path)
    targets = {
        "eval": small_disk / "e.parquet",
        "ingest": small_disk / "a.parquet",
        "study": small_disk / "st",
    }
    targets["eval"].write_text("the previous file\n")
    _fill(small_disk)
    for args in (
        ["eval", qrels, *paths, "-q", "-o", targets["eval"]],
        ["ingest", *paths, "-o", targets["ingest"]],
        ["study", "subsample", qrels, *paths, "--reps", "2", "--rates", "0.5"],
    ):
        if args[0] == "study":
            args += ["--no-plot", "-o", targets["study"]]
        one_line_error(_run(args), "cannot write", "no space left on device")
    assert targets["eval"].read_text() == "the previous file\n"
    assert not targets["ingest"].exists()
    assert sorted(p.name for p in small_disk.rglob("*") if p.is_file()) == ["e.parquet", "filler"]
    (small_disk / "filler").unlink()  # room again: the same command succeeds
    assert _run(["eval", qrels, *paths, "-q", "-o", targets["eval"]]).exit_code == 0
    assert stored.verify_file(targets["eval"])[1]


# --------------------------------------------------------------------------- what a user meets


def test_an_unknown_output_suffix_lists_the_formats(tmp_path: Path) -> None:
    out = tmp_path / "out.xlsx"
    err = one_line_error(_run(["eval", QRELS, SAMPLE_RUNS, "-o", out]), "cannot tell the format")
    assert ".parquet" in err and ".csv" in err and "--format" in err
    assert not out.exists()
    res = _run(["eval", QRELS, SAMPLE_RUNS, "-o", out, "--format", "csv"])
    assert res.exit_code == 0 and out.read_text().startswith("run_id,")


def test_a_suffix_eval_cannot_write_is_refused(tmp_path: Path) -> None:
    # .tsv names a format (hsa writes it); eval does not, and CSV in all.tsv is refused
    out = tmp_path / "all.tsv"
    one_line_error(_run(["eval", QRELS, SAMPLE_RUNS, "-o", out]), "cannot write tsv")
    one_line_error(_run(["eval", QRELS, SAMPLE_RUNS, "-o", out, "--format", "csv"]), "'.tsv'")
    assert not out.exists()


def test_a_study_stopped_by_ctrl_c_says_what_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fasteval.analysis import studies

    def stop(*_a: Any, **_k: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(studies, "finish_study", stop)  # after every part is saved
    out = tmp_path / "st"
    args = ["study", "subsample", QRELS, SAMPLE_RUNS, "--rates", "0.5,0.3", "--reps", "2"]
    res = _run([*args, "--no-plot", "-o", out])
    assert res.exit_code == 130, res.output
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "nothing was written" not in err, err
    assert f"kept 2 finished part file(s) and study.json in {out}" in err
    assert "run the same command again to resume" in err
    monkeypatch.undo()
    again = _run([*args, "--no-plot", "-o", out])
    assert again.exit_code == 0 and "4 of 4 units were already done" in again.stderr


def test_report_and_leave_out_refuse_a_group_map_without_some_runs(tmp_path: Path) -> None:
    runs = pl.read_parquet(SAMPLE_RUNS)["run_id"].unique(maintain_order=True).to_list()
    groups = tmp_path / "groups"
    groups.write_text("".join(f"{r} g{i % 2}\n" for i, r in enumerate(runs[:-2])))
    report = _run(["report", QRELS, SAMPLE_RUNS, "--groups", groups])
    err = one_line_error(report, "have no group in the run -> group map", runs[-1])
    assert report.stdout == ""
    args = ["study", "leave-out", QRELS, SAMPLE_RUNS, "--groups", groups, "--no-plot"]
    study = _run([*args, "-o", tmp_path / "st"])
    one_line_error(study, "have no group in the run -> group map", runs[-1])
    assert err.split("error: ")[1].split(": run(s)")[1] in study.stderr  # the same words


def test_a_damaged_collection_index_says_to_build_it_again(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    docs = tmp_path / "docs.csv"
    docs.write_text(
        "doc_id,text\n" + "".join(f"d{i},{' '.join(rng.choice(words, 30))}\n" for i in range(2000))
    )
    index = tmp_path / "i.parquet"
    assert _run(["index", docs, "-o", index]).exit_code == 0
    assert _run(["verify", index]).exit_code == 0
    _flip(index, "doc_id")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d3 2 1.0 r\n")
    res = _run(["eval", qrels, run, "--collection", index, "-m", "LMJS@20"])
    one_line_error(res, "damaged file", "build the index again (fasteval index)")
    assert res.stdout == ""


@pytest.mark.parametrize(
    ("text", "reason"),
    [("{not json", "Expecting property name"), ("[1, 2]", "expected a JSON object, got list")],
)
def test_verify_names_an_unreadable_study_manifest(tmp_path: Path, text: str, reason: str) -> None:
    from fasteval.commands.verify import check_study

    (tmp_path / "study.json").write_text(text)
    found = check_study(tmp_path)
    assert len(found) == 1
    assert not found[0].sound
    assert reason in found[0].detail and "the study recomputes its units" in found[0].detail
