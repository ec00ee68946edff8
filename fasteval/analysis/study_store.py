"""Where a robustness study keeps its units: one folder, checked and resumable.

A study folder holds ``study.json`` (the study's fingerprint and a manifest of
its files with their size and digest), one Parquet *part file* per finished
setting (``setting=<label>.parquet``, marked in its footer with the study it
belongs to), and the summary tables. This module writes, lists and reads them
back, refusing a folder of another study and recomputing (with a warning) any
part file that is damaged or not of this study.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from fasteval.errors import (
    DamagedFileError,
    DataMismatchError,
    FastevalWarning,
    ParameterError,
    SchemaError,
)
from fasteval.io import stored, writers

#: The columns of a study's units table (one row per setting, rep, measure, statistic).
UNIT_SCHEMA = {
    "setting": pl.String,
    "x": pl.Float64,
    "rep": pl.Int64,
    "measure": pl.String,
    "statistic": pl.String,
    "value": pl.Float64,
    "judgments": pl.Int64,
}


class Labelled(Protocol):
    """What the storage needs of a study setting: its file-name-safe label."""

    @property
    def label(self) -> str: ...


#: Fingerprint keys that only say how far a study goes: a folder with other values is
#: extended (its finished units reused), not refused.
PLAN_KEYS = ("rates", "reps", "depths")

#: ``study.json``'s manifest: each Parquet file of the folder -> ``{"bytes", "blake3"}`` (older
#: folders: ``"sha256"``).
FILES_KEY = "files"

#: Footer key of a part file: the study it belongs to (:func:`study_id`).
STUDY_KEY = b"fasteval.study"

#: What to do about a damaged part file (the study recomputes it on its own).
STUDY_AGAIN = "delete it and run the study again: it resumes and recomputes that part"


def study_id(fp: dict[str, Any]) -> str:
    """The identity of a study, whatever its plan: a hash of its fingerprint but
    :data:`PLAN_KEYS` (written into each part file's footer)."""
    core = {k: v for k, v in fp.items() if k not in PLAN_KEYS and k != FILES_KEY}
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]


def _load_manifest(out: Path) -> dict[str, Any]:
    try:
        old = json.loads((out / "study.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return old if isinstance(old, dict) else {}


def manifest_entry(out: Path, name: str) -> dict[str, Any] | None:
    """The size and digest ``study.json`` lists for the file ``name`` of ``out``, if any."""
    files = _load_manifest(out).get(FILES_KEY)
    entry = files.get(name) if isinstance(files, dict) else None
    return entry if isinstance(entry, dict) else None


def record_files(out: Path, *paths: Path) -> None:
    """List ``paths`` (written into ``out``) with their size and digest in ``study.json``.

    Read, updated and written back at once; a study folder shared by two
    processes may lose an entry, and a part without one is checked by its own
    digest and study identity alone.
    """
    meta = _load_manifest(out)
    if not meta:
        return
    files = meta.get(FILES_KEY)
    files = dict(files) if isinstance(files, dict) else {}
    for p in paths:
        files[p.name] = stored.file_entry(p)
    meta[FILES_KEY] = dict(sorted(files.items()))
    writers.write_text(json.dumps(meta, indent=1) + "\n", out / "study.json")


def write_part(df: pl.DataFrame, path: Path, fp: dict[str, Any]) -> None:
    """Save a part file (units of one setting) marked with its study, and list it."""
    writers.write_parquet(df, path, metadata={STUDY_KEY: study_id(fp).encode()})
    record_files(path.parent, path)


def read_units(path: Path, fp: dict[str, Any] | None = None) -> pl.DataFrame:
    """A study's part file read back, only if it is sound and of this study.

    Checked: its size and digest against ``study.json`` (when listed there), its
    whole-file digest and page checksums, and (with ``fp``) the study it was written by.

    Raises
    ------
    DamagedFileError
        For a file that does not hold what was written.
    DataMismatchError
        For a part of another study.
    """
    want = manifest_entry(path.parent, path.name)
    if want is not None:
        have = stored.file_entry(path)
        if have != want:
            raise stored.damaged(path, "its size or digest differs from study.json's", STUDY_AGAIN)
    f = stored.parquet_file(path, advice=STUDY_AGAIN)
    mark = (f.metadata.metadata or {}).get(STUDY_KEY)
    if fp is not None and mark is not None and mark.decode() != study_id(fp):
        msg = "written by another study (its data, measures or seed differ)"
        raise DataMismatchError(msg)
    with stored.reading(path, advice=STUDY_AGAIN, ours=stored.digest_entry(f.metadata) is not None):
        table = f.read(use_threads=True)
    df = pl.from_arrow(table)
    assert isinstance(df, pl.DataFrame)
    return df


def setting_file(out: Path, s: Labelled) -> Path:
    """The part file holding the units of setting ``s`` in the study folder ``out``."""
    return out / f"setting={s.label}.parquet"


def _short(v: Any) -> str:
    text = ",".join(map(str, v)) if isinstance(v, list) else str(v)
    return text if len(text) <= 40 else text[:37] + "..."


def check_out_dir(out: Path, fp: dict[str, Any], *, extend: bool = False) -> bool:
    """Create ``out`` with the study's fingerprint, or check it holds the same study.

    With ``extend`` (callers that reuse saved units repetition by repetition, as
    :func:`run_study` does), a folder whose study differs only in :data:`PLAN_KEYS`
    (more or fewer rates, repetitions, depths) is the same study extended: its
    ``study.json`` is updated; without it, any difference is refused.
    An empty or corrupt ``study.json`` (a machine that died while writing it) is
    rewritten with a :class:`~fasteval.errors.FastevalWarning`.

    Returns
    -------
    bool
        Whether the part files in ``out`` belong to this study (False when
        ``study.json`` was damaged: they are recomputed).

    Raises
    ------
    ParameterError
        When ``out`` holds another study, naming what differs (``measures: map ->
        P_10``); a change of measures is not reported as a change of data.
    """
    writers.make_folder(out)
    meta_path = out / "study.json"
    text = json.dumps(fp, indent=1) + "\n"
    if not meta_path.exists():
        writers.write_text(text, meta_path)
        return True
    try:
        old = json.loads(meta_path.read_text(encoding="utf-8"))
        problem = (
            None if isinstance(old, dict) else f"expected a JSON object, got {type(old).__name__}"
        )
    except (ValueError, UnicodeDecodeError) as e:
        problem = str(e)
    if problem is not None:
        reason = "empty" if meta_path.stat().st_size == 0 else f"corrupt: {problem}"
        warnings.warn(
            f"{meta_path} is damaged ({reason}); rewritten, and the study's units are "
            "recomputed (its part files cannot be matched to a study)",
            FastevalWarning,
            stacklevel=2,
        )
        writers.write_text(text, meta_path)
        return False
    files = old.pop(FILES_KEY, None)
    plan = PLAN_KEYS if extend else ()
    diff = [k for k in fp if k not in plan and old.get(k) != fp.get(k)]
    diff += [k for k in old if k not in fp and k not in plan]
    if "measures" in diff and "scores" in diff:
        diff.remove("scores")  # other measures, other scores: not a difference of its own
    if diff:
        what = "; ".join(f"{k}: {_short(old.get(k))} -> {_short(fp.get(k))}" for k in diff)
        msg = (
            f"{out} holds a different study (differs in {what})\n"
            "  hint: choose another output folder, or delete it to start over"
        )
        raise ParameterError(msg)
    if old != fp:  # the same study, extended or shortened: reuse its units
        kept = {**fp, FILES_KEY: files} if files is not None else fp
        writers.write_text(json.dumps(kept, indent=1) + "\n", meta_path)
    return True


def read_part(path: Path, s: Labelled, fp: dict[str, Any] | None = None) -> pl.DataFrame | None:
    """The finished units of setting ``s`` saved at ``path``, or None.

    A part file that is damaged (:func:`read_units`: its size, digest or page
    checksums), belongs to another study (``fp``), or does not hold units of
    ``s``, is reported with a :class:`~fasteval.errors.FastevalWarning` naming
    it and recomputed: never are its numbers used.
    """
    if not path.exists():
        return None
    try:
        df = read_units(path, fp)
        if dict(df.schema) != UNIT_SCHEMA:
            msg = f"columns {list(df.columns)}, not a study's units"
            raise SchemaError(msg)
        if df.height and (df["setting"] != s.label).any():
            msg = f"holds units of another setting than {s.label!r}"
            raise DataMismatchError(msg)
    except Exception as e:
        reason = e.what if isinstance(e, DamagedFileError) else " ".join(str(e).split())
        warnings.warn(
            f"{path}: damaged part file ({reason[:120]}); recomputed",
            FastevalWarning,
            stacklevel=2,
        )
        return None
    return df
