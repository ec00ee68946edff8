"""The benchmark's datasets: the generated synthetic archive and TREC-8 ad hoc."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from peers import run_files

from harness.common import FASTEVAL_SRC, HERE, SHARED, SYNTHETIC, log


@dataclass
class Dataset:
    name: str
    title: str
    qrels: Path
    runs: Path  # directory of run files
    parquet: Path | None = None  # the same runs as one archive (fasteval ingest)
    plain_qrels: Path | None = None  # uncompressed copies for trec_eval
    plain_runs: Path | None = None
    notes: list[str] = field(default_factory=list)


def child_env(cache_dir: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    src = str(FASTEVAL_SRC[0])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def prepare_synthetic(scratch: Path) -> Dataset:
    gen = [sys.executable, str(HERE / "generate.py")]
    subprocess.run(gen, check=True, env=child_env(scratch / "numba" / "generate"))
    manifest = json.loads((SYNTHETIC / "manifest.json").read_text())
    return Dataset(
        name="synthetic",
        title=(
            f"synthetic archive (b): {manifest['n_runs']} runs x {manifest['n_queries']} "
            f"queries x {manifest['depth']} docs (`benchmarks/generate.py`, seed "
            f"{manifest['seed']})"
        ),
        qrels=SYNTHETIC / "qrels.txt",
        runs=SYNTHETIC / "runs",
        parquet=SYNTHETIC / "runs.parquet",
        plain_qrels=SYNTHETIC / "qrels.txt",
        plain_runs=SYNTHETIC / "runs",
    )


def _gunzip(src: Path, dst: Path) -> None:
    with gzip.open(src, "rb") as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g, 1 << 20)


def prepare_trec8(scratch: Path, need_plain: bool, need_parquet: bool) -> Dataset:
    root = SHARED / "trec8_adhoc"
    qrels, runs = root / "qrels.trec8.adhoc.gz", root / "runs"
    if not qrels.exists() or not runs.is_dir():
        msg = f"TREC-8 data not found under {root} (set FASTEVAL_SHARED_DATA)"
        raise SystemExit(msg)
    ds = Dataset(
        name="trec8",
        title=(
            "TREC-8 ad hoc (a): all 129 submitted runs, gzipped "
            "(`../shared/data/trec8_adhoc`), official qrels"
        ),
        qrels=qrels,
        runs=runs,
    )
    # Derived copies of the real data live in a temporary folder outside the repository.
    if need_parquet:
        ds.parquet = scratch / "trec8_runs.parquet"
        log("[trec8] packing the runs into a Parquet archive (fasteval ingest; not timed)")
        cmd = [sys.executable, "-m", "fasteval.cli", "ingest", str(runs), "-o", str(ds.parquet)]
        subprocess.run(cmd, check=True, env=child_env(scratch / "numba" / "ingest"))
        ds.notes.append(
            "fasteval's Parquet archive was made with `fasteval ingest` into a temporary "
            "folder before timing."
        )
    if need_plain:
        plain = scratch / "trec8_plain"
        (plain / "runs").mkdir(parents=True, exist_ok=True)
        ds.plain_qrels = plain / "qrels.trec8.adhoc"
        _gunzip(qrels, ds.plain_qrels)
        for f in run_files(str(runs)):
            _gunzip(f, plain / "runs" / f.name.removesuffix(".gz"))
        ds.plain_runs = plain / "runs"
        ds.notes.append(
            "trec_eval cannot read gzip: it read uncompressed copies (decompressed into a "
            "temporary folder before timing; the other tools read the .gz files)."
        )
    return ds
