"""fasteval.compare: tests equal scipy, corrections equal statsmodels, tables and the CLI."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.stats
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval import evaluate
from fasteval.analysis import statistics as sg
from fasteval.cli import main
from fasteval.comparison import compare, compare_table
from fasteval.errors import ParameterError
from tests.conftest import SAMPLE_DATA as DATA

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


@pytest.mark.parametrize("seed", range(40))
def test_t_and_wilcoxon_equal_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 90))
    x = rng.random(n).round(int(rng.integers(1, 4)))  # rounding makes ties and zeros
    y = rng.random(n).round(int(rng.integers(1, 4)))
    d = x - y
    assert sg.paired_t(d) == pytest.approx(scipy.stats.ttest_rel(x, y).pvalue, rel=1e-12)
    want = scipy.stats.wilcoxon(x, y, method=sg.wilcoxon_method(d)).pvalue
    assert sg.wilcoxon(d) == pytest.approx(want, rel=1e-12, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=2, max_size=60))
def test_wilcoxon_property_equals_scipy(pairs: list[tuple[int, int]]) -> None:
    x = np.array([a for a, _ in pairs], float) / 8
    y = np.array([b for _, b in pairs], float) / 8
    d = x - y
    assume(np.count_nonzero(d) >= 1)
    want = scipy.stats.wilcoxon(x, y, method=sg.wilcoxon_method(d)).pvalue
    assert sg.wilcoxon(d) == pytest.approx(want, rel=1e-10, abs=1e-14)


def test_degenerate_differences() -> None:
    zero = np.zeros(5)
    assert sg.paired_t(zero) == 1.0  # scipy: NaN
    assert sg.wilcoxon(zero) == 1.0
    assert sg.paired_t(np.full(5, 0.1)) == 0.0
    assert math.isnan(sg.paired_t(np.array([0.3])))
    p, hits = sg.monte_carlo(np.full(20, 0.1), "randomization", 999, 0)
    assert hits <= 2 and p == (hits + 1) / 1000 and p > 0


def test_wilcoxon_method_is_the_documented_rule() -> None:
    assert sg.wilcoxon_method(np.array([0.1, -0.2, 0.3])) == "exact"
    assert sg.wilcoxon_method(np.array([0.1, -0.1, 0.3])) == "asymptotic"  # a tie
    assert sg.wilcoxon_method(np.array([0.1, 0.0, 0.3])) == "asymptotic"  # a zero
    assert sg.wilcoxon_method(np.arange(1, 52) / 100) == "asymptotic"  # more than 50


@pytest.mark.parametrize("seed", range(5))
def test_corrections_equal_statsmodels(seed: int) -> None:
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    p = np.random.default_rng(seed).random(9) ** 2
    for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        want = multipletests(p, method=theirs)[1]
        np.testing.assert_allclose(sg.adjust(p, ours), want, rtol=1e-12)
    with_nan = np.concatenate([p, [np.nan]])
    adj = sg.adjust(with_nan, "holm")
    assert math.isnan(adj[-1])
    np.testing.assert_allclose(adj[:-1], multipletests(p, method="holm")[1], rtol=1e-12)


def test_holm_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.2])
    # sorted 0.01, 0.03, 0.04, 0.2 -> 4*0.01, 3*0.03, 2*0.04, 1*0.2, then running max
    np.testing.assert_allclose(sg.adjust(p, "holm"), [0.04, 0.09, 0.09, 0.2])


@pytest.fixture(scope="module")
def sample_table() -> pl.DataFrame:
    return evaluate(QRELS, RUNS, ["map", "P_10", "ndcg_cut_10"], per_query=True)


def test_compare_sample_equals_scipy_and_hand_holm(sample_table: pl.DataFrame) -> None:
    cmp = compare(QRELS, RUNS, ["map", "P_10", "ndcg_cut_10"], baseline="sample1")
    runs = cmp.runs
    assert runs[0] in cmp.means["run_id"].to_list()
    for m in ("map", "P_10", "ndcg_cut_10"):
        pq = sample_table.filter((pl.col("measure") == m) & (pl.col("query_id") != "all"))
        base = dict(
            pq.filter(pl.col("run_id") == "sample1").select("query_id", "value").iter_rows()
        )
        raw = []
        others = [r for r in runs if r != "sample1"]
        for r in others:
            vals = dict(pq.filter(pl.col("run_id") == r).select("query_id", "value").iter_rows())
            qs = sorted(set(vals) & set(base))
            x, y = np.array([vals[q] for q in qs]), np.array([base[q] for q in qs])
            raw.append(scipy.stats.ttest_rel(x, y).pvalue)
        raw_a = np.array(raw)
        order = np.argsort(raw_a)
        hand = np.empty_like(raw_a)
        running = 0.0
        for k, i in enumerate(order):
            running = max(running, min(1.0, (len(raw_a) - k) * raw_a[i]))
            hand[i] = running
        got = cmp.table.filter((pl.col("measure") == m) & (pl.col("run_id") != "sample1"))
        got = {
            r: (p, pc) for r, p, pc in got.select("run_id", "p_value", "p_corrected").iter_rows()
        }
        for r, p, h in zip(others, raw_a, hand, strict=True):
            assert got[r][0] == pytest.approx(p, rel=1e-12)
            assert got[r][1] == pytest.approx(h, rel=1e-12)


def test_wins_ties_losses_and_means(sample_table: pl.DataFrame) -> None:
    cmp = compare_table(sample_table, baseline="sample1", measures=["P_10"])
    row = cmp.table.filter(pl.col("run_id") == "sample2").row(0, named=True)
    pq = sample_table.filter((pl.col("measure") == "P_10") & (pl.col("query_id") != "all"))
    wide = pq.pivot(on="run_id", index="query_id", values="value")
    d = (wide["sample2"] - wide["sample1"]).to_numpy()
    assert (row["wins"], row["ties"], row["losses"]) == (
        int((d > 0).sum()),
        int((d == 0).sum()),
        int((d < 0).sum()),
    )
    allrow = sample_table.filter(
        (pl.col("measure") == "P_10")
        & (pl.col("query_id") == "all")
        & (pl.col("run_id") == "sample2")
    )["value"][0]
    assert row["mean"] == allrow
    assert row["diff"] == pytest.approx(row["mean"] - row["baseline_mean"])
    assert row["diff_pct"] == pytest.approx(100 * row["diff"] / row["baseline_mean"])
    assert row["significant"] == (row["p_corrected"] < 0.05)


def _table(values: dict[str, dict[str, float]]) -> pl.DataFrame:
    rows = [(r, q, "AP", v) for r, qs in values.items() for q, v in qs.items()]
    return pl.DataFrame(rows, schema=["run_id", "query_id", "measure", "value"], orient="row")


def test_missing_queries_pair_on_common_or_count_zero_with_complete() -> None:
    t = _table(
        {
            "base": {"1": 0.1, "2": 0.2, "3": 0.3, "4": 0.4},
            "new": {"1": 0.3, "2": 0.1, "3": 0.6},  # lacks query 4
        }
    )
    plain = (
        compare_table(t, baseline="base").table.filter(pl.col("run_id") == "new").row(0, named=True)
    )
    assert plain["n_queries"] == 3
    assert plain["p_value"] == pytest.approx(
        scipy.stats.ttest_rel([0.3, 0.1, 0.6], [0.1, 0.2, 0.3]).pvalue
    )
    full = compare_table(t, baseline="base", complete=True).table.filter(pl.col("run_id") == "new")
    row = full.row(0, named=True)
    assert row["n_queries"] == 4 and row["losses"] == 2
    assert row["p_value"] == pytest.approx(
        scipy.stats.ttest_rel([0.3, 0.1, 0.6, 0.0], [0.1, 0.2, 0.3, 0.4]).pvalue
    )


def test_all_pairs_superscripts_follow_the_table() -> None:
    rng = np.random.default_rng(3)
    base = rng.random(30)
    t = _table(
        {
            "a": {str(i): v for i, v in enumerate(base)},
            "b": {str(i): v + 0.2 for i, v in enumerate(base)},
            "c": {str(i): v + 0.2 + rng.normal(0, 0.01) for i, v in enumerate(base)},
        }
    )
    cmp = compare_table(t)
    assert cmp.baselines is None and cmp.table.height == 3  # pairs ab, ac, bc
    text = cmp.to_text()
    lines = {ln.split()[1]: ln for ln in text.splitlines() if ln.startswith("(")}
    assert lines["b"].endswith("^a") and lines["c"].endswith("^a")
    assert "^" not in lines["a"]
    assert "<sup>a</sup>" in cmp.to_html() and "$^{a}$" in cmp.to_latex()
    assert "every pair of runs on one measure" in text


def test_monte_carlo_p_never_zero_and_printed_as_bound() -> None:
    t = _table(
        {
            "base": {str(i): 0.1 * (i % 5) for i in range(40)},
            "better": {str(i): 0.1 * (i % 5) + 0.3 for i in range(40)},
        }
    )
    for test in ("randomization", "bootstrap"):
        cmp = compare_table(t, baseline="base", test=test, B=99, seed=7)
        row = cmp.table.filter(pl.col("run_id") == "better").row(0, named=True)
        assert row["p_value"] == pytest.approx(1 / 100)
        text = cmp.to_text()
        assert "<=0.0100" in text and "seed 7" in text


def test_several_baselines_are_separate_families(sample_table: pl.DataFrame) -> None:
    cmp = compare_table(sample_table, baseline=["sample1", "sample2"], measures=["map"])
    assert cmp.table.height == 2 * len(cmp.runs)
    for b in ("sample1", "sample2"):
        block = cmp.table.filter((pl.col("baseline") == b) & (pl.col("run_id") != b))
        np.testing.assert_allclose(
            block["p_corrected"].to_numpy(), sg.adjust(block["p_value"].to_numpy(), "holm")
        )


def test_formats_render(sample_table: pl.DataFrame) -> None:
    cmp = compare_table(sample_table, baseline="sample1")
    md = cmp.to_markdown()
    assert md.startswith("| run |") and "sample1 (baseline)" in md
    tex = cmp.to_latex()
    assert "\\begin{tabular}" in tex and "\\toprule" in tex and "P\\_10" in tex
    assert cmp._repr_html_().startswith("<table")
    csv = pl.read_csv(cmp.to_csv().encode())
    assert csv.columns == cmp.table.columns
    with pytest.raises(ParameterError, match="unknown format"):
        cmp.render("xlsx")


def test_bad_arguments_raise_one_line_errors(sample_table: pl.DataFrame) -> None:
    with pytest.raises(ParameterError, match="baseline 'nope' is not among the runs"):
        compare_table(sample_table, baseline="nope")
    with pytest.raises(ParameterError, match="unknown test"):
        compare_table(sample_table, test="z")
    with pytest.raises(ParameterError, match="unknown correction"):
        compare_table(sample_table, correction="sidak")
    with pytest.raises(ParameterError, match="not in the evaluation table"):
        compare_table(sample_table, measures=["AP"])


def test_cli_compare(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["compare", str(QRELS), str(RUNS), "-b", "sample1", "-m", "map", "-m", "P@10"]
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    assert "sample1 (baseline)" in res.output and "Holm" in res.output
    out = tmp_path / "t.tex"
    res = runner.invoke(main, [*args, "--format", "latex", "--test", "wilcoxon", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "Wilcoxon" in out.read_text()
    res = runner.invoke(main, ["compare", str(QRELS), str(RUNS), "-b", "nope"])
    assert res.exit_code == 1
    assert res.output.startswith("fasteval: error: baseline 'nope'")
    assert len(res.output.strip().splitlines()) == 1
