"""fasteval.agreement, rank_intervals and compare's intervals on TREC-8, against their oracles.

The official qrels against ten judgment sets derived from them (judgments flipped and
dropped at controlled rates, seeded), all 129 runs, three measures: every figure equals
scikit-learn's cohen_kappa_score (plain and quadratic), the krippendorff package, scipy
(kendalltau, ttest_rel, t intervals) and the naive references (tau_AP, RBO, bootstrap
ranks) to 1e-9. The per-query values the statistics start from are fasteval.evaluate's
for each set (themselves checked against pytrec_eval in test_trec8.py).
"""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import polars as pl
import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score

import fasteval
from fasteval.analysis import statistics as sg
from fasteval.analysis.agreement import simulate_assessor
from tests.reference import agreement_naive as naive

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

MEASURES = ["map", "ndcg_cut_10", "P_10"]
COLS = ("kappa", "weighted_kappa", "alpha")
B = 200
RATES = [  # (flip relevant, flip non-relevant, drop): ten simulated second assessors
    (0.05, 0.005, 0.0),
    (0.1, 0.01, 0.0),
    (0.2, 0.02, 0.0),
    (0.3, 0.03, 0.0),
    (0.0, 0.0, 0.1),
    (0.0, 0.0, 0.3),
    (0.1, 0.01, 0.1),
    (0.2, 0.02, 0.2),
    (0.3, 0.03, 0.3),
    (0.5, 0.05, 0.5),
]


@pytest.fixture(scope="module")
def data(trec8_dir, trec8_qrels):
    runs = sorted((trec8_dir / "runs").iterdir())
    frame = fasteval.load_runs(runs)
    ref = trec8_qrels.select("query_id", "doc_id", "relevance")
    sets = {
        f"a{i}": simulate_assessor(ref, flip_relevant=fr, flip_nonrelevant=fn, drop=d, seed=i)
        for i, (fr, fn, d) in enumerate(RATES)
    }
    res = fasteval.agreement(ref, sets, runs=frame, measures=MEASURES, B=B, seed=7)
    return ref, sets, frame, res


def _close(got: float, want: float) -> bool:
    return math.isnan(got) if math.isnan(want) else abs(got - want) <= 1e-9


def _label_oracle(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    labels = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
    with np.errstate(all="ignore"):
        k = cohen_kappa_score(a >= 1, b >= 1)
        wk = cohen_kappa_score(a, b, weights="quadratic", labels=labels)
    try:
        al = krippendorff.alpha(
            reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal"
        )
    except ValueError:  # one grade only
        al = math.nan
    return float(k), float(wk), float(al)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_labels_equal_sklearn_and_krippendorff(data) -> None:
    ref, sets, _, res = data
    checked = 0
    for name, q in sets.items():
        both = ref.join(q, on=["query_id", "doc_id"], suffix="_o")
        rows = res.labels.filter(pl.col("other") == name)
        overall = rows.filter(pl.col("query_id").is_null()).row(0, named=True)
        a, b = both["relevance"].to_numpy(), both["relevance_o"].to_numpy()
        assert overall["n_common"] == both.height
        for col, want in zip(COLS, _label_oracle(a, b), strict=True):
            assert _close(overall[col], want), (name, col)
        per_q = both.partition_by("query_id", as_dict=True)
        for row in rows.filter(pl.col("query_id").is_not_null()).iter_rows(named=True):
            part = per_q[(row["query_id"],)]
            a, b = part["relevance"].to_numpy(), part["relevance_o"].to_numpy()
            for col, want in zip(COLS, _label_oracle(a, b), strict=True):
                assert _close(row[col], want), (name, row["query_id"], col, row[col], want)
            checked += 1
    assert checked == 10 * 50


@pytest.fixture(scope="module")
def matrices(data):
    """Per set and measure, fasteval.evaluate's per-query values: (runs, queries)."""
    ref, sets, frame, res = data
    run_ids = res.means["run_id"].unique(maintain_order=True).to_list()
    out = {}
    for name, q in {"": ref, **sets}.items():
        table = fasteval.evaluate(q, frame, MEASURES, per_query=True)
        for m in MEASURES:
            pq = table.filter((pl.col("measure") == m) & (pl.col("query_id") != "all"))
            wide = pq.pivot(on="query_id", index="run_id", values="value")
            wide = pl.DataFrame({"run_id": run_ids}).join(wide, on="run_id", how="left")
            qs = sorted(c for c in wide.columns if c != "run_id")
            out[(name, m)] = (np.nan_to_num(wide.select(qs).to_numpy()), qs)
    return run_ids, out


def test_rankings_equal_scipy_and_naive(data, matrices) -> None:
    _, sets, _, res = data
    run_ids, mats = matrices
    assert res.rankings.height == len(sets) * len(MEASURES)
    for row in res.rankings.iter_rows(named=True):
        Xr, qr = mats[("", row["measure"])]
        Xo, qo = mats[(row["other"], row["measure"])]
        shared = sorted(set(qr) & set(qo))
        Xr = Xr[:, [qr.index(q) for q in shared]]
        Xo = Xo[:, [qo.index(q) for q in shared]]
        mr, mo = Xr.mean(1), Xo.mean(1)
        assert _close(row["tau_b"], scipy.stats.kendalltau(mr, mo).statistic)
        idx = sg.resamples(len(shared), B, 7)
        taus = [
            scipy.stats.kendalltau(Xr[:, idx[b]].mean(1), Xo[:, idx[b]].mean(1)).statistic
            for b in range(B)
        ]
        lo, hi = np.quantile(taus, [0.025, 0.975])
        assert _close(row["tau_b_low"], lo) and _close(row["tau_b_high"], hi)
        tr, to = naive.ranking(mr.tolist(), run_ids), naive.ranking(mo.tolist(), run_ids)
        assert _close(row["tau_ap"], naive.tau_ap(tr, to))
        assert _close(row["rbo"], naive.rbo_ext(tr, to))
        assert row["max_drop"] == max(0, *(to.index(r) - tr.index(r) for r in run_ids))
        assert row["top1_same"] == (tr[0] == to[0])


def test_significance_equals_scipy_ttest_rel(data, matrices) -> None:
    _, _, _, res = data
    _, mats = matrices
    for row in res.significance.iter_rows(named=True):
        Xr, qr = mats[("", row["measure"])]
        Xo, qo = mats[(row["other"], row["measure"])]
        shared = sorted(set(qr) & set(qo))
        Xr = Xr[:, [qr.index(q) for q in shared]]
        Xo = Xo[:, [qo.index(q) for q in shared]]
        i, j = np.triu_indices(Xr.shape[0], 1)
        with np.errstate(all="ignore"):
            pr = scipy.stats.ttest_rel(Xr[i], Xr[j], axis=1).pvalue
            po = scipy.stats.ttest_rel(Xo[i], Xo[j], axis=1).pvalue
        dr, do = Xr[i].mean(1) - Xr[j].mean(1), Xo[i].mean(1) - Xo[j].mean(1)
        assert row["pairs"] == i.shape[0]
        assert row["sig_reference"] == int((pr < 0.05).sum())
        assert row["sig_other"] == int((po < 0.05).sum())
        both = (pr < 0.05) & (po < 0.05) & (np.sign(dr) == np.sign(do))
        assert row["sig_both"] == int(both.sum())


def test_rank_intervals_equal_naive_bootstrap(data, matrices) -> None:
    ref, _, frame, _ = data
    run_ids, mats = matrices
    X, _ = mats[("", "map")]
    n_boot = 1000  # the default: with fewer, two bootstraps' tails differ by more
    got = fasteval.rank_intervals(ref, frame, "map", B=n_boot, seed=3)
    idx = sg.resamples(X.shape[1], n_boot, 3)
    same = naive.bootstrap_rank_intervals(X, run_ids, idx, 0.95)
    draws = np.random.default_rng(12345).integers(0, X.shape[1], (n_boot, X.shape[1]))
    other = naive.bootstrap_rank_intervals(X, run_ids, draws, 0.95)
    near = 0
    for row in got.iter_rows(named=True):
        assert (row["rank_low"], row["rank_high"]) == same[row["run_id"]]
        lo, hi = other[row["run_id"]]
        near += abs(row["rank_low"] - lo) <= 2 and abs(row["rank_high"] - hi) <= 2
    assert near >= 0.95 * got.height, near  # an independent bootstrap: within 2 ranks


def test_compare_intervals_equal_scipy(data, matrices) -> None:
    ref, _, frame, _ = data
    run_ids, mats = matrices
    chosen = run_ids[:6]
    cmp = fasteval.compare(ref, frame.filter(pl.col("run_id").is_in(chosen)), baseline=chosen[0])
    for row in cmp.table.iter_rows(named=True):
        X, _ = mats[("", row["measure"])]
        x = X[run_ids.index(row["run_id"])]
        lo, hi = scipy.stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=scipy.stats.sem(x))
        assert _close(row["ci_low"], lo) and _close(row["ci_high"], hi)
        if row["run_id"] == chosen[0]:
            continue
        y = X[run_ids.index(chosen[0])]
        ci = scipy.stats.ttest_rel(x, y).confidence_interval(0.95)
        assert _close(row["diff_ci_low"], ci.low) and _close(row["diff_ci_high"], ci.high)
        d = x - y
        assert _close(row["effect_size"], d.mean() / d.std(ddof=1))
