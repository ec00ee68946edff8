"""What the benchmark harness's modules share: paths, the tools, the fasteval snapshot.

``benchmarks/run.py`` drives the harness: :mod:`harness.datasets` prepares the
inputs, :mod:`harness.measure` runs one tool in a fresh process and measures it,
:mod:`harness.bench` runs the jobs of one dataset, :mod:`harness.report` writes
RESULTS.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/
REPO = HERE.parent
RESULTS = HERE / "RESULTS.md"
OUT = HERE / "out"
SHARED = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
SYNTHETIC = HERE / "data" / "synthetic"
# where the children import fasteval from: a snapshot of the working tree taken at the
# start (see main), so that edits made while the benchmark runs cannot mix versions
FASTEVAL_SRC = [REPO]
FASTEVAL_VERSION = ["?"]  # commit and source hash of that snapshot

ALL_TOOLS = ["fasteval", "pytrec_eval", "ranx", "ir_measures", "trec_eval", "polars"]
PY_MODULE = {"pytrec_eval": "pytrec_eval", "ranx": "ranx", "ir_measures": "ir_measures"}
PACKAGES = [
    "numpy",
    "numba",
    "polars",
    "pyarrow",
    "pytrec-eval-terrier",
    "ranx",
    "ir-measures",
]
# fasteval must agree with pytrec_eval exactly (same float operations); anything
# beyond this is a wrong answer.
EXACT_TOL = 1e-9

TARGETS = """\
Targets from the issue (dataset (b), text files, 7 per-query measures):
fasteval end-to-end from text <= 1.5 s warm and >= 4x pytrec_eval; from the Parquet
archive <= 0.8 s; first run with a cold numba cache <= 15 s; peak memory <= 1.5 GB."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(*args: str) -> str:
    """``git -C <repo> args`` output, or "" when git fails or is missing."""
    try:
        p = subprocess.run(
            ["git", "-C", str(REPO), *args], check=False, capture_output=True, text=True
        )
    except OSError:
        return ""
    return p.stdout.strip() if p.returncode == 0 else ""
