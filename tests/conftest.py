"""Shared test fixtures.

Real TREC data lives outside the repository, in ``../shared/data`` next to
the checkout (``FASTEVAL_SHARED_DATA`` overrides). Tests that need it are
marked ``realdata`` and skip with a clear reason where it is absent; the
fixtures below (``trec8_dir``, ``trec8_qrels``, ``robust03_dir``) skip the
same way.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import polars as pl

# The suite runs the kernels on numba's JIT, whatever ahead-of-time library a developer's
# `fasteval warmup` left beside them (tests/unit/test_aot.py tests the library itself);
# FASTEVAL_AOT=1 runs the whole suite on the library instead.
os.environ.setdefault("FASTEVAL_AOT", "0")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
SAMPLE_DATA = REPO / "fasteval" / "data"
"""The sample shipped in the package: ``sample.qrels``, ``sample_runs.parquet`` (8 runs)."""


def one_line_error(res: Any, *needles: str) -> str:
    """A CLI result that failed as users should see it: exit 1 and one line on stderr,
    ``fasteval: error: ...``, holding every needle; no traceback, no usage text."""
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    err = str(res.stderr).strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("fasteval: error: "), err
    assert "Traceback" not in res.output and "Usage:" not in res.output
    for n in needles:
        assert n in err, err
    return err


def shared_path(*parts: str) -> Path:
    """A path under the shared data folder; skips the test when it is missing."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"real data not available: {p} (set FASTEVAL_SHARED_DATA)")
    return p


def write_lines(path: Path | str, lines: list[str]) -> Path:
    """Write ``lines`` (each ended by a newline) to ``path``, gzipped if it ends in .gz."""
    path = Path(path)
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


@pytest.fixture
def write(tmp_path: Path):
    """Write a text file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return _write


@pytest.fixture(scope="session")
def trec8_dir() -> Path:
    """TREC-8 ad hoc: qrels, the 129 runs, trec_eval outputs, NIST summaries
    (``trec8_adhoc/PROVENANCE.md``)."""
    return shared_path("trec8_adhoc")


@pytest.fixture(scope="session")
def trec8_qrels(trec8_dir: Path) -> pl.DataFrame:
    """The TREC-8 ad hoc qrels, loaded once per session."""
    import fasteval

    return fasteval.load_qrels(trec8_dir / "qrels.trec8.adhoc.gz")


@pytest.fixture(scope="session")
def robust03_dir() -> Path:
    """TREC 2003 Robust: graded qrels, 17 runs, trectools' expectations
    (``robust03_trectools/PROVENANCE.md``)."""
    return shared_path("robust03_trectools")
