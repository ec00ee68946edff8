"""The shared input coercion of the side readers (preferences, qrels_jg, z-scores)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.errors import SchemaError
from fasteval.io.prefs import Prefs, as_prefs
from fasteval.io.qrels_jg import QrelsJG, as_qrels_jg
from fasteval.io.zscores import ZScores, as_zscores


def test_a_reader_s_own_object_is_returned_as_it_is() -> None:
    p = Prefs(["1"], ["a"], ["0"], ["d"], np.ones(1), "x")
    jg = QrelsJG(["1"], ["a"], ["d"], [1], "x")
    z = ZScores({("1", "P_10"): (0.5, 0.1)})
    assert as_prefs(p) is p
    assert as_qrels_jg(jg) is jg
    assert as_zscores(z) is z


@pytest.mark.parametrize(
    ("reader", "what"),
    [(as_prefs, "preferences"), (as_qrels_jg, "qrels_jg"), (as_zscores, "zscores")],
)
def test_anything_else_is_refused_by_its_type(reader, what) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(
        SchemaError, match=f"^{what} must be a path, a polars DataFrame or .*, got int$"
    ):
        reader(12)


def test_frames_are_read_and_missing_columns_named() -> None:
    jg = as_qrels_jg(
        pl.DataFrame(
            {"query_id": ["1"], "judgment_group": ["a"], "doc_id": ["d"], "relevance": [2]}
        )
    )
    assert (jg.qid, jg.group, jg.doc, jg.rel) == (["1"], ["a"], ["d"], [2])
    z = as_zscores(
        pl.DataFrame({"query_id": ["1"], "measure": ["map"], "mean": [0.2], "stddev": [0.1]})
    )
    assert z.table == {("1", "map"): (0.2, 0.1)}
    half = pl.DataFrame({"query_id": ["1"], "doc_id": ["d"]})
    with pytest.raises(
        SchemaError,
        match=r"<table>: preference table lacks column\(s\) judgment_group, relevance \(needs ",
    ):
        as_prefs(half)
    with pytest.raises(
        SchemaError,
        match=r"qrels_jg table lacks column\(s\) judgment_group, relevance \(needs query_id, judg",
    ):
        as_qrels_jg(half)
    with pytest.raises(
        SchemaError,
        match=r"z-score table lacks column\(s\) measure, mean, stddev \(needs query_id, measure, ",
    ):
        as_zscores(half)
