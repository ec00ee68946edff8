"""Preference judgments (-R prefs / qrels_prefs): reading, routing and one-line errors."""

from __future__ import annotations

import polars as pl
import pytest
from click.testing import CliRunner

import fasteval
from fasteval.cli import main
from fasteval.errors import InputFormatError, MeasureError
from fasteval.io.prefs import read_prefs

PREFS = "q1 u1 s1 a 3\nq1 u1 s1 b 1\nq1 u1 s1 c 0\nq1 u2 s1 b 2\nq1 u2 s1 a 0\n"
RUN = "q1 Q0 b 1 3.0 r\nq1 Q0 a 2 2.0 r\nq1 Q0 x 3 1.0 r\n"


def _values(df: pl.DataFrame, qid: str = "q1") -> dict[str, float]:
    return dict(df.filter(pl.col("query_id") == qid).select("measure", "value").iter_rows())


def test_hand_computed_example(write):
    # u1: a>b, a>c, b>c; u2: b>a. Ranking b, a (c unjudged-unretrieved, x unjudged).
    p, r = write("prefs", PREFS), write("run", RUN)
    v = _values(fasteval.evaluate(p, r, "all_prefs", rel_format="prefs"))
    assert v["prefs_num_prefs_poss"] == 4
    # fulfilled: b>c (implied), a>c (implied), b>a (both retrieved); a>b fails
    assert v["prefs_num_prefs_ful"] == 3
    assert v["prefs_num_prefs_ful_ret"] == 1
    assert v["prefs_simp"] == pytest.approx(3 / 4)
    assert v["prefs_avgjg"] == pytest.approx((2 / 3 + 1) / 2)
    # pairs {a,b}: 1 of 2 groups ranks b first -> 1/2; {a,c}: 1; {b,c}: 1
    assert v["prefs_pair"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert v["prefs_pair_ret"] == pytest.approx(0.5)


def test_qrels_prefs_reads_a_qrels_file(write):
    q = write("qrels", "q1 0 a 1\nq1 0 b 0\nq1 0 c 0\n")
    r = write("run", "q1 Q0 b 1 3.0 r\nq1 Q0 a 2 2.0 r\n")
    v = _values(
        fasteval.evaluate(q, r, ["prefs_simp", "prefs_num_prefs_poss"], rel_format="qrels_prefs")
    )
    assert v == {"prefs_simp": pytest.approx(0.5), "prefs_num_prefs_poss": 2}


def test_default_set_is_all_prefs_and_prefs_is_a_nickname(write):
    p, r = write("prefs", PREFS), write("run", RUN)
    names = fasteval.evaluate(p, r, rel_format="prefs", per_query=False)["measure"].to_list()
    assert names[:2] == ["num_q", "prefs_num_prefs_poss"] and len(names) == 15
    short = fasteval.evaluate(p, r, "prefs", rel_format="prefs", per_query=False)
    assert short["measure"].to_list()[-1] == "prefs_avgjg" and short.height == 7


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("q1 u1 s1 a\n", "prefs:1: expected 5 columns"),
        ("q1 u1 s1 a 1\nq1 u1 s1 b high\n", "prefs:2: rel_level is not a number: 'high'"),
        ("q1 u1 s1 a 1 extra\n", "prefs:1: expected 5 columns"),
    ],
)
def test_malformed_lines_name_file_and_line(write, text, needle):
    p = write("prefs", text)
    with pytest.raises(InputFormatError, match=needle):
        read_prefs(p)
    res = CliRunner().invoke(main, ["eval", "-R", "prefs", str(p), str(write("run", RUN))])
    assert res.exit_code == 1
    assert needle in res.output and res.output.count("\n") == 1


def test_lenient_skips_and_says_so(write):
    p = write("prefs", "q1 u1 s1 a 1\nbad line\nq1 u1 s1 b 0\n")
    with pytest.warns(fasteval.errors.FastevalWarning, match="skipped 1 malformed"):
        out = read_prefs(p, lenient=True)
    assert out.doc == ["a", "b"]


def test_comment_and_blank_lines_are_skipped(write):
    p = write("prefs", "# comment\n\nq1 u1 s1 a 1\nq1 u1 s1 b 0\n")
    assert read_prefs(p).doc == ["a", "b"]


def test_inconsistent_preferences_are_an_error(write):
    cyc = "q1 u1 s1 a 2\nq1 u1 s1 b 1\nq1 u1 s2 b 2\nq1 u1 s2 a 1\n"
    with pytest.raises(InputFormatError, match="inconsistent preferences between 'a' and 'b'"):
        fasteval.evaluate(write("prefs", cyc), write("run", RUN), rel_format="prefs")
    zero = "q1 u1 s1 a 2\nq1 u1 s1 b 0\nq1 u1 s2 b 1\nq1 u1 s2 c 0\n"
    with pytest.raises(InputFormatError, match="both non-relevant"):
        fasteval.evaluate(write("prefs", zero), write("run", RUN), rel_format="prefs")


def test_measures_and_formats_must_match(write):
    p, r = write("prefs", PREFS), write("run", RUN)
    with pytest.raises(MeasureError, match="cannot be computed from preference judgments"):
        fasteval.evaluate(p, r, ["map"], rel_format="prefs")
    q = write("qrels", "q1 0 a 1\n")
    with pytest.raises(MeasureError, match="need preference judgments"):
        fasteval.evaluate(q, r, ["prefs_simp"])


def test_duplicate_document_in_a_ranking(write):
    p = write("prefs", PREFS)
    r = write("run", "q1 Q0 a 1 3.0 r\nq1 Q0 a 2 2.0 r\n")
    with pytest.raises(InputFormatError, match="retrieved twice"):
        fasteval.evaluate(p, r, rel_format="prefs")
    df = fasteval.evaluate(p, r, rel_format="prefs", on_duplicate="first")
    assert _values(df)["prefs_num_prefs_ful_ret"] == 0
