"""``fasteval verify PATH...``: check the files fasteval stored, as ``zstd -t`` or ``git fsck`` do.

A path is a Parquet file (an archive from ``fasteval ingest``, a table written
with ``-o FILE.parquet``, an index), or a folder: a study folder (its
``study.json`` lists each file's size and digest), or any folder, whose
Parquet files are each checked. For each file: every page is decoded and its
checksum verified, the whole-file digest recomputed, the row counts compared
with the footer; in a study folder, each file also against ``study.json`` and
each part against the study it belongs to.

One line per file on standard output (``PATH: ok (...)`` or ``PATH: DAMAGED
(...)``), a summary on standard error, exit status 0 only when every file is
sound.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from fasteval.commands.common import friendly
from fasteval.errors import DamagedFileError, FastevalError, InputFormatError, ParameterError


@dataclass
class Finding:
    """What ``verify`` found about one file."""

    path: Path
    sound: bool
    detail: str
    missing: bool = False
    made_by: dict[str, Any] | None = None  # the footer's provenance, if it has one

    @property
    def status(self) -> str:
        """``ok``, ``MISSING`` or ``DAMAGED``."""
        return "ok" if self.sound else "MISSING" if self.missing else "DAMAGED"


def _kind(path: Path) -> str:
    from fasteval.io.archive import archive_info

    try:
        if archive_info(path) is not None:
            return "archive"
    except InputFormatError:
        return "archive of a newer fasteval"
    return "study part" if path.name.startswith("setting=") else "table"


def check_file(path: Path, advice: str | None = None) -> Finding:
    """Every page, the digest and the row counts of one Parquet file."""
    from fasteval.io import stored
    from fasteval.io.archive import INGEST_AGAIN

    kind = _kind(path)
    advice = advice or (INGEST_AGAIN if kind == "archive" else stored.WRITE_AGAIN)
    try:
        rows, digest = stored.verify_file(path, advice=advice)
    except DamagedFileError as e:
        return Finding(path, False, f"{e.what}; {advice}")
    except FastevalError as e:
        return Finding(path, False, " ".join(str(e).split()))
    what = f"{kind}, {rows:,} rows, {path.stat().st_size:,} bytes"
    if not digest:
        what += "; readable, but it has no fasteval digest to check"
    else:
        what += ", pages and digest sound"
    made = _made_by(path)
    if made is not None:
        measures = ", ".join(made.get("measures") or [])
        what += (
            f"; made by fasteval {made.get('version', '?')}: {made.get('command', '?')}"
            + (f", measures {measures}" if measures else "")
            + f", {len(made.get('inputs') or [])} input file(s)"
        )
    return Finding(path, True, what, made_by=made)


def _made_by(path: Path) -> dict[str, Any] | None:
    import pyarrow.parquet as pq

    from fasteval.io.provenance import provenance_of

    return provenance_of(pq.read_metadata(path).metadata)


def _unreadable_manifest(path: Path, reason: str) -> Finding:
    """A ``study.json`` that cannot be read: the study recomputes its units."""
    reason = " ".join(reason.split())[:120]
    return Finding(path, False, f"unreadable ({reason}); the study recomputes its units")


def check_study(folder: Path) -> list[Finding]:
    """A study folder: ``study.json``, each file it lists, every Parquet file in it."""
    from fasteval.analysis import study_store as st
    from fasteval.io import formats, stored

    meta_path = folder / "study.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError is a ValueError
        return [_unreadable_manifest(meta_path, str(e))]
    if not isinstance(meta, dict):
        what = f"expected a JSON object, got {type(meta).__name__}"
        return [_unreadable_manifest(meta_path, what)]
    found = [Finding(meta_path, True, f"study manifest ({meta.get('kind', '?')} study)")]
    files = meta.get(st.FILES_KEY)
    listed: dict[str, Any] = files if isinstance(files, dict) else {}
    sid = st.study_id(meta)
    for name in sorted(listed):
        if not (folder / name).exists():
            found.append(Finding(folder / name, False, "listed in study.json", missing=True))
    for p in sorted(q for q in folder.rglob("*") if formats.is_parquet(q)):
        rel = p.relative_to(folder).as_posix()
        want = listed.get(rel)
        if isinstance(want, dict):
            try:
                have = stored.file_entry(p)
            except Exception:  # unreadable footer: check_file names it
                have = None
            if have is not None and have != want:
                what = f"size {have['bytes']:,} bytes or digest differ from study.json's"
                found.append(Finding(p, False, f"{what}; {st.STUDY_AGAIN}"))
                continue
        f = check_file(p, st.STUDY_AGAIN)
        if f.sound and p.name.startswith("setting="):
            mark = _study_mark(p)
            if mark is not None and mark != sid:
                f = Finding(p, False, f"a part of another study; {st.STUDY_AGAIN}")
        found.append(f)
    return found


def _study_mark(path: Path) -> str | None:
    import pyarrow.parquet as pq

    from fasteval.analysis.study_store import STUDY_KEY

    raw = (pq.read_metadata(path).metadata or {}).get(STUDY_KEY)
    return raw.decode() if raw is not None else None


def check_path(path: Path) -> list[Finding]:
    """The findings for one argument of ``verify``."""
    from fasteval.io import formats

    if not path.exists():
        return [Finding(path, False, "no such file or folder", missing=True)]
    if path.is_dir():
        if (path / "study.json").exists():
            return check_study(path)
        files = sorted(q for q in path.rglob("*") if formats.is_parquet(q))
        if not files:
            return [Finding(path, False, "no Parquet file in this folder")]
        return [check_file(q) for q in files]
    if not formats.is_parquet(path):
        from fasteval.io.provenance import footer_start

        if footer_start(path)[1] < 0:
            return [Finding(path, False, "not a Parquet file (fasteval verifies Parquet files)")]
    return [check_file(path)]


@click.command("verify")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--provenance",
    "show_provenance",
    is_flag=True,
    help="Also print what made each file (its footer's fasteval.provenance: version, "
    "measures, options, inputs with their sizes and SHA-256), as JSON.",
)
@friendly
def verify_cmd(paths: tuple[str, ...], show_provenance: bool) -> None:
    """Check archives, study folders and Parquet outputs fasteval wrote (pages, digests, rows).

    Prints one line per file, PATH: ok or PATH: DAMAGED, with what made it
    (fasteval's version, the command, its measures and inputs) when its footer
    says, and exits 0 only when every file is sound.
    """
    if not paths:
        msg = "give at least one file or folder to verify"
        raise ParameterError(msg)
    found = [f for p in paths for f in check_path(Path(p))]
    for f in found:
        click.echo(f"{f.path}: {f.status} ({f.detail})")
        if show_provenance and f.made_by is not None:
            click.echo(json.dumps(f.made_by, indent=2))
    bad = sum(not f.sound for f in found)
    n = len(found)
    if bad:
        click.echo(f"fasteval verify: {bad} of {n} file(s) damaged or missing", err=True)
        sys.exit(1)
    click.echo(f"fasteval verify: {n} file(s) sound", err=True)
