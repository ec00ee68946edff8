"""The table of measures and their checks (tests/comparisons.py) is complete and true."""

from __future__ import annotations

import importlib

import pytest

import fasteval
from fasteval.measures import registry
from tests.comparisons import BENCHMARK, BY_FAMILY, COMPARISONS, ORACLES, families
from tests.oracle import _pytrec
from tests.oracle._trec_text import (
    IMPLEMENTED,
    JG_IMPLEMENTED,
    PREFS_IMPLEMENTED,
    TEXT_IMPLEMENTED,
)

DIVERSITY = {"ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP", "MAP_IA", "P_IA"}


def test_one_row_per_family() -> None:
    names = [c.family for c in COMPARISONS]
    assert len(names) == len(set(names))


def test_every_registry_family_has_a_row() -> None:
    missing = set(registry.FAMILIES) - set(BY_FAMILY)
    assert not missing, f"measures with no reference or oracle row: {sorted(missing)}"
    assert DIVERSITY | {"strec", "RIC", "HSA", "DO"} <= set(BY_FAMILY)


@pytest.mark.parametrize("row", COMPARISONS, ids=lambda c: c.family)
def test_each_row_is_checked_somewhere(row) -> None:
    assert row.naive or row.oracles, f"{row.family}: neither a naive reference nor an oracle"
    assert set(row.oracles) <= set(ORACLES)
    if "ranx" in row.oracles:  # test_matches_ranx asks ranx for it under this name
        assert "ranx" in row.tools, f"{row.family}: compared with ranx but no ranx= spelling"
    if row.naive:
        module, func = row.naive.split(":")
        mod = importlib.import_module(f"tests.reference.{module}")
        assert callable(getattr(mod, func)), row.naive


def test_trec_eval_rows_are_the_implemented_families() -> None:
    """Double entry: _trec_text lists the implemented trec_eval families by hand."""
    te10 = set(families("trec_eval_10"))
    implemented = IMPLEMENTED | TEXT_IMPLEMENTED | JG_IMPLEMENTED | PREFS_IMPLEMENTED
    assert te10 == implemented - {"runid", "dcg", "ideal_dcg"}
    assert set(_pytrec.FAMILIES) == IMPLEMENTED - {"runid", "rbp", "rbp_resid", "unj", "dcg",
                                                   "ideal_dcg"}  # fmt: skip
    assert set(_pytrec.FAMILIES_V10) == IMPLEMENTED - {"runid", "dcg", "ideal_dcg"}


def test_pytrec_eval_knows_every_family_it_is_compared_on() -> None:
    import pytrec_eval

    unknown = set(_pytrec.FAMILIES) - set(pytrec_eval.supported_measures)
    assert not unknown, unknown


@pytest.mark.parametrize("row", [c for c in COMPARISONS if c.evaluator == "ranking"],
                         ids=lambda c: c.family)  # fmt: skip
def test_examples_parse_to_their_family(row) -> None:
    (m,) = fasteval.parse_measures([row.example])
    assert m.info.name == row.family


def test_benchmark_measures_are_spelled_for_each_tool() -> None:
    assert set(BENCHMARK) == {"trec", "trec_eval", "ranx", "ir_measures"}
    assert all(len(v) == 7 for v in BENCHMARK.values())
    assert BENCHMARK["trec"][0] == "map" and BENCHMARK["ir_measures"][0] == "AP"
