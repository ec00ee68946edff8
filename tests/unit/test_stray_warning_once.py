"""A stray file in a runs folder is reported once, whatever reads the folder (issue 27)."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import fasteval
from fasteval.cli import main
from tests.conftest import SAMPLE_DATA as DATA


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    df = pl.read_parquet(DATA / "sample_runs.parquet")
    runs = tmp_path / "runs"
    runs.mkdir()
    for (r,), part in df.partition_by("run_id", as_dict=True).items():
        rows = part.select("query_id", "doc_id", "score").iter_rows()
        (runs / f"{r}.txt").write_text("".join(f"{q} Q0 {d} 0 {s} {r}\n" for q, d, s in rows))
    (runs / "README").write_text("notes about these runs\n")
    return runs


@pytest.mark.parametrize("batch_rows", [None, 200])
def test_python_evaluate_warns_once(folder: Path, batch_rows: int | None) -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fasteval.evaluate(DATA / "sample.qrels", folder, ["map"], batch_rows=batch_rows)
    stray = [w for w in got if "README" in str(w.message)]
    assert len(stray) == 1


@pytest.mark.parametrize("command", [["eval"], ["compare"]])
def test_commands_warn_once(folder: Path, command: list[str]) -> None:
    res = CliRunner().invoke(main, [*command, str(DATA / "sample.qrels"), str(folder), "-m", "map"])
    assert res.exit_code == 0, res.output
    assert res.output.count("README") == 1
