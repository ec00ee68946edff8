"""Shared test fixtures.

Real TREC data lives outside the repository, in ``../shared/data`` next to
the checkout (``FASTEVAL_SHARED_DATA`` overrides). Tests that need it are
marked ``realdata`` and skip with a clear reason where it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_path(*parts: str) -> Path:
    """A path under the shared data folder; skips the test when it is missing."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"real data not available: {p} (set FASTEVAL_SHARED_DATA)")
    return p


@pytest.fixture
def write(tmp_path: Path):
    """Write a text file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return _write
