"""`fasteval compare` on TREC-8: p-values equal scipy's ttest_rel on pytrec_eval's per-query
values and the hand-computed Holm adjustment; the same from pandas frames with PyTerrier names."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest
import scipy.stats
from click.testing import CliRunner

from fasteval import compare, load_qrels, load_runs
from fasteval.cli import main

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

BASELINE = "INQ603"
OTHERS = ["CL99XT", "ok8alx", "Flab8as", "fub99a", "weaver1"]
MEASURES = {"map": "map", "ndcg_cut_10": "ndcg_cut_10", "P_10": "P_10"}


@pytest.fixture(scope="module")
def paths(trec8_dir):
    base = trec8_dir
    runs = [base / "runs" / f"input.{r}.gz" for r in [BASELINE, *OTHERS]]
    return base / "qrels.trec8.adhoc.gz", runs


@pytest.fixture(scope="module")
def cli_table(paths) -> pl.DataFrame:
    qrels, runs = paths
    args = ["compare", str(qrels), *map(str, runs), "-b", BASELINE, "--format", "csv"]
    for m in MEASURES:
        args += ["-m", m]
    args += ["--test", "t", "--correction", "holm"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return pl.read_csv(io.StringIO(res.output))


def _holm(p: list[float]) -> list[float]:
    """Holm (1979) by hand: sort, multiply by (m - rank), running maximum, cap at 1."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out = [0.0] * len(p)
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - k) * p[i]))
        out[i] = running
    return out


def test_cli_pvalues_equal_scipy_and_hand_holm(paths, cli_table):
    import pytrec_eval

    from tests.oracle._pytrec import qrels_dict, run_dicts

    qrels, runs = paths
    qd = qrels_dict(load_qrels(qrels))
    rd = run_dicts(load_runs(list(runs)))
    ev = pytrec_eval.RelevanceEvaluator(qd, {"map", "ndcg_cut", "P"})
    per = {r: ev.evaluate(rd[r]) for r in [BASELINE, *OTHERS]}
    for m in MEASURES:
        raw = []
        for r in OTHERS:
            qs = sorted(set(per[r]) & set(per[BASELINE]))
            x = np.array([per[r][q][m] for q in qs])
            y = np.array([per[BASELINE][q][m] for q in qs])
            raw.append(float(scipy.stats.ttest_rel(x, y).pvalue))
            mean = float(np.mean([per[r][q][m] for q in per[r]]))
            row = cli_table.filter((pl.col("measure") == m) & (pl.col("run_id") == r)).row(
                0, named=True
            )
            assert row["mean"] == pytest.approx(mean, abs=1e-12)
            assert row["n_queries"] == len(qs) == 50
        got = cli_table.filter((pl.col("measure") == m) & (pl.col("run_id") != BASELINE))
        got_map = {
            r: (p, pc) for r, p, pc in got.select("run_id", "p_value", "p_corrected").iter_rows()
        }
        for r, p, h in zip(OTHERS, raw, _holm(raw), strict=True):
            assert got_map[r][0] == pytest.approx(p, rel=1e-9), (m, r)
            assert got_map[r][1] == pytest.approx(h, rel=1e-9), (m, r)


def test_same_table_from_pandas_with_pyterrier_names(paths, cli_table):
    pytest.importorskip("pandas")
    qrels, runs = paths
    q = load_qrels(qrels).rename({"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    frames = [
        load_runs(r).rename({"query_id": "qid", "doc_id": "docno", "run_id": "name"}).to_pandas()
        for r in runs
    ]
    cmp = compare(q.to_pandas(), frames, list(MEASURES), baseline=BASELINE)
    got = cmp.table.sort("measure", "run_id")
    want = cli_table.sort("measure", "run_id").select(got.columns)
    assert got.select("measure", "run_id").rows() == want.select("measure", "run_id").rows()
    for c in ("mean", "p_value", "p_corrected"):
        np.testing.assert_allclose(
            got[c].to_numpy().astype(float), want[c].to_numpy().astype(float), rtol=1e-12
        )
    # the text table names the rule and the family
    text = cmp.to_text()
    assert "family = the runs compared with one baseline on one measure" in text
