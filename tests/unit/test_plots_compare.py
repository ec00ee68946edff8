"""Figures of fasteval.plots.compare: written, and their inputs checked."""

from __future__ import annotations

import pytest

from fasteval import evaluate
from fasteval.errors import ParameterError

pytest.importorskip("matplotlib")

from fasteval.plots.compare import per_query_differences, precision_recall
from tests.conftest import SAMPLE_DATA as DATA


@pytest.fixture(scope="module")
def table():
    return evaluate(DATA / "sample.qrels", DATA / "sample_runs.parquet", ["map", "iprec_at_recall"])


def test_figures_are_written(table, tmp_path):
    p = per_query_differences(
        table, "sample1", "map", tmp_path / "d.png", runs=["sample1", "sample2", "sample3"]
    )
    assert p.stat().st_size > 1000 and p.read_bytes()[:4] == b"\x89PNG"
    q = precision_recall(table, tmp_path / "pr.svg")
    assert "<svg" in q.read_text()


def test_figure_inputs_are_checked(table, tmp_path):
    with pytest.raises(ParameterError, match="not in the table"):
        per_query_differences(table, "nope", "map", tmp_path / "x.png")
    with pytest.raises(ParameterError, match="no per-query values of 'P_10'"):
        per_query_differences(table, "sample1", "P_10", tmp_path / "x.png")
    with pytest.raises(ParameterError, match="hint: evaluate with"):
        precision_recall(table.filter(table["measure"] == "map"), tmp_path / "x.png")
