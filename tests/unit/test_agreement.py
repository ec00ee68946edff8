"""fasteval.agreement and rank_intervals: oracles (scikit-learn, krippendorff, scipy,
naive references), properties, and one-line errors for bad input."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import polars as pl
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

import fasteval
from fasteval.analysis import agreement as agr
from fasteval.analysis import statistics as sg
from fasteval.analysis.judgment_sets import score_sets
from fasteval.analysis.rank_uncertainty import rank_intervals_matrix
from fasteval.errors import DataMismatchError, InputFormatError, MeasureError, ParameterError
from tests.conftest import SAMPLE_DATA as DATA
from tests.reference import agreement_naive as naive

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


def _qrels(rows: list[tuple[str, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "relevance"], orient="row")


def _random_pair(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    q = rng.integers(0, 5, n)
    ref = _qrels([(f"q{q[i]}", f"d{i}", int(rng.integers(0, 4))) for i in range(n)])
    keep = rng.random(n) < 0.8
    noisy = np.clip(ref["relevance"].to_numpy() + rng.integers(-1, 2, n), 0, 3)
    oth = ref.with_columns(pl.Series("relevance", noisy)).filter(pl.Series(keep))
    return ref, oth


def _oracle_labels(ref: pl.DataFrame, oth: pl.DataFrame, level: int) -> dict[str, float]:
    both = ref.join(oth, on=["query_id", "doc_id"], suffix="_o")
    a, b = both["relevance"].to_numpy(), both["relevance_o"].to_numpy()
    labels = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
    out = {"n": len(a)}
    with np.errstate(all="ignore"):
        out["kappa"] = cohen_kappa_score(a >= level, b >= level)
        out["weighted_kappa"] = cohen_kappa_score(a, b, weights="quadratic", labels=labels)
    try:
        out["alpha"] = krippendorff.alpha(
            reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal"
        )
    except ValueError:  # one value only: the package refuses, we give NaN
        out["alpha"] = math.nan
    return out


def _close(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return abs(got - want) <= 1e-9


@pytest.mark.parametrize("seed", range(15))
def test_labels_equal_sklearn_and_krippendorff(seed: int) -> None:
    ref, oth = _random_pair(seed)
    level = 1 + seed % 2
    got = agr.label_agreement(ref, {"o": oth}, relevance_level=level)
    overall = got.filter(pl.col("query_id").is_null()).row(0, named=True)
    want = _oracle_labels(ref, oth, level)
    assert overall["n_common"] == want["n"]
    for k in ("kappa", "weighted_kappa", "alpha"):
        assert _close(overall[k], want[k]), (k, overall[k], want[k])
    for row in got.filter(pl.col("query_id").is_not_null() & (pl.col("n_common") > 0)).iter_rows(
        named=True
    ):
        q = row["query_id"]
        w = _oracle_labels(
            ref.filter(pl.col("query_id") == q), oth.filter(pl.col("query_id") == q), level
        )
        for k in ("kappa", "weighted_kappa", "alpha"):
            assert _close(row[k], w[k]), (q, k, row[k], w[k])


def test_confusion_counts_and_judged_counts() -> None:
    ref = _qrels([("1", "a", 1), ("1", "b", 0), ("1", "c", 2), ("2", "a", 0), ("2", "x", 1)])
    oth = _qrels([("1", "a", 0), ("1", "b", 0), ("1", "c", 1), ("2", "a", 1), ("3", "z", 1)])
    got = agr.label_agreement(ref, {"o": oth})
    overall = got.row(0, named=True)
    assert overall["query_id"] is None
    assert (overall["n_reference"], overall["n_other"], overall["n_common"]) == (5, 5, 4)
    cells = ("rel_rel", "rel_nonrel", "nonrel_rel", "nonrel_nonrel")
    assert tuple(overall[c] for c in cells) == (1, 1, 1, 1)
    q3 = got.filter(pl.col("query_id") == "3").row(0, named=True)
    assert q3["n_common"] == 0 and math.isnan(q3["kappa"])


# scikit-learn warns when a draw has one label only (kappa is then undefined: NaN on
# both sides, which the test compares)
@pytest.mark.filterwarnings("ignore:A single label was found:UserWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=80))
def test_labels_property_equal_sklearn(pairs: list[tuple[int, int]]) -> None:
    a = np.array([x for x, _ in pairs])
    b = np.array([y for _, y in pairs])
    assume(len(set(a.tolist()) | set(b.tolist())) >= 2)
    ref = _qrels([("q", f"d{i}", int(g)) for i, g in enumerate(a)])
    oth = _qrels([("q", f"d{i}", int(g)) for i, g in enumerate(b)])
    got = agr.label_agreement(ref, {"o": oth}).row(0, named=True)
    want = _oracle_labels(ref, oth, 1)
    for k in ("kappa", "weighted_kappa", "alpha"):
        assert _close(got[k], want[k]), (k, got[k], want[k])
    assume(len(set(a.tolist())) >= 2)  # one grade only: agreement is undefined (NaN)
    same = agr.label_agreement(ref, {"o": ref}).row(0, named=True)
    assert same["weighted_kappa"] == pytest.approx(1.0) and same["alpha"] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(10))
def test_rank_statistics_equal_naive_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    names = [f"r{i:02d}" for i in rng.permutation(n)]
    a = rng.integers(0, 6, n) / 5  # ties
    b = np.where(rng.random(n) < 0.3, rng.integers(0, 6, n) / 5, a)
    ra, rb = agr.strict_ranks(a, names), agr.strict_ranks(b, names)
    ta, tb = naive.ranking(a.tolist(), names), naive.ranking(b.tolist(), names)
    assert [names[i] for i in np.argsort(ra)] == ta
    assert agr.tau_ap_ranks(ra, rb) == pytest.approx(naive.tau_ap(ta, tb), abs=1e-12)
    assert agr.rbo_ext(ra, rb) == pytest.approx(naive.rbo_ext(ta, tb), abs=1e-12)
    want = scipy.stats.kendalltau(a, b).statistic
    got = agr.tau_b_many(a[None], b[None])[0]
    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_rbo_and_tau_ap_extremes() -> None:
    r = np.arange(1, 11)
    assert agr.rbo_ext(r, r) == pytest.approx(1.0)
    assert agr.tau_ap_ranks(r, r) == 1.0
    assert agr.tau_ap_ranks(r, r[::-1].copy()) == -1.0


def _matrices(seed: int, n_runs: int = 12, n_q: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(n_runs)[:, None] * 0.5
    Xr = np.clip(base + rng.normal(0, 0.2, (n_runs, n_q)), 0, 1).round(2)
    Xo = np.clip(Xr + rng.normal(0, 0.1, (n_runs, n_q)), 0, 1).round(2)
    return Xr, Xo


@pytest.mark.parametrize("seed", range(4))
def test_ranking_agreement_equals_naive_loops(seed: int) -> None:
    Xr, Xo = _matrices(seed)
    runs = [f"s{i}" for i in range(Xr.shape[0])]
    qs = [f"q{j:03d}" for j in range(Xr.shape[1])]  # sorted = column order
    B, alpha = 200, 0.05
    rank, sig, _ = agr.ranking_agreement(
        {"m": agr.Scores(Xr, qs)}, {"o": {"m": agr.Scores(Xo, qs)}}, runs, B=B, seed=seed
    )
    row = rank.row(0, named=True)
    mr, mo = Xr.mean(1), Xo.mean(1)
    assert row["tau_b"] == pytest.approx(scipy.stats.kendalltau(mr, mo).statistic, abs=1e-9)
    idx = sg.resamples(Xr.shape[1], B, seed)
    taus = [
        scipy.stats.kendalltau(Xr[:, idx[b]].mean(1), Xo[:, idx[b]].mean(1)).statistic
        for b in range(B)
    ]
    lo, hi = np.quantile(taus, [0.025, 0.975])
    assert (row["tau_b_low"], row["tau_b_high"]) == pytest.approx((lo, hi), abs=1e-9)
    tr, to = naive.ranking(mr.tolist(), runs), naive.ranking(mo.tolist(), runs)
    assert row["tau_ap"] == pytest.approx(naive.tau_ap(tr, to), abs=1e-9)
    assert row["rbo"] == pytest.approx(naive.rbo_ext(tr, to), abs=1e-9)
    assert row["max_drop"] == max(0, *(to.index(r) - tr.index(r) for r in runs))
    assert row["top1_same"] == (tr[0] == to[0])
    srow = sig.row(0, named=True)
    i, j = np.triu_indices(len(runs), 1)
    pr = scipy.stats.ttest_rel(Xr[i], Xr[j], axis=1).pvalue
    po = scipy.stats.ttest_rel(Xo[i], Xo[j], axis=1).pvalue
    dr, do = Xr[i].mean(1) - Xr[j].mean(1), Xo[i].mean(1) - Xo[j].mean(1)
    assert srow["sig_reference"] == int((pr < alpha).sum())
    assert srow["sig_other"] == int((po < alpha).sum())
    assert srow["sig_both"] == int(
        ((pr < alpha) & (po < alpha) & (np.sign(dr) == np.sign(do))).sum()
    )


@pytest.mark.parametrize("seed", range(3))
def test_rank_intervals_equal_naive_bootstrap(seed: int) -> None:
    Xr, _ = _matrices(seed, n_runs=9, n_q=25)
    runs = [f"s{i}" for i in range(Xr.shape[0])]
    B, level = 300, 0.9
    got = rank_intervals_matrix(Xr, runs, B=B, level=level, seed=seed)
    want = naive.bootstrap_rank_intervals(Xr, runs, sg.resamples(Xr.shape[1], B, seed), level)
    ranking = naive.ranking(Xr.mean(1).tolist(), runs)
    assert got["run_id"].to_list() == ranking
    for row in got.iter_rows(named=True):
        assert (row["rank_low"], row["rank_high"]) == want[row["run_id"]]
        assert row["rank_low"] <= row["rank"] <= row["rank_high"] or B < 50


def test_agreement_end_to_end_on_the_sample() -> None:
    ref = fasteval.load_qrels(QRELS)
    sets = {
        f"s{i}": agr.simulate_assessor(
            ref, flip_relevant=0.1 * i, flip_nonrelevant=0.02 * i, drop=0.05 * i, seed=i
        )
        for i in range(3)
    }
    res = fasteval.agreement(ref, sets, runs=RUNS, measures=["map", "P_10"], B=50)
    assert res.rankings.height == 6 and res.significance.height == 6
    s0 = res.rankings.filter(pl.col("other") == "s0")  # no change: perfect agreement
    assert s0["tau_b"].to_list() == [1.0, 1.0] and s0["rbo"].to_list() == pytest.approx([1, 1])
    assert res.labels.filter(pl.col("other") == "s0")["kappa"][0] == pytest.approx(1.0)
    sig = res.significance.filter(pl.col("other") == "s0").row(0, named=True)
    assert sig["sig_reference"] == sig["sig_other"] == sig["sig_both"]
    one = fasteval.agreement(QRELS, sets["s2"])  # one qrels, no runs: labels only
    assert one.labels["other"][0] == "other" and one.rankings.height == 0


def test_rank_intervals_public() -> None:
    got = fasteval.rank_intervals(QRELS, RUNS, "map", B=100)
    assert got.columns == ["run_id", "mean", "rank", "rank_low", "rank_high"]
    assert got["rank"].to_list() == list(range(1, got.height + 1))
    with pytest.raises(ParameterError, match="B must be >= 1"):
        fasteval.rank_intervals(QRELS, RUNS, "map", B=0)


def test_bad_input_is_a_clear_error() -> None:
    ref = fasteval.load_qrels(QRELS)
    elsewhere = ref.with_columns(pl.col("doc_id") + "_x")
    with pytest.raises(DataMismatchError, match=r"no judgment .* in common"):
        fasteval.agreement(ref, elsewhere)
    with pytest.raises(ParameterError, match="B must be >= 1 bootstrap resamples, got 0"):
        fasteval.agreement(ref, ref, runs=RUNS, B=0)
    with pytest.raises(MeasureError):
        fasteval.agreement(ref, ref, runs=RUNS, measures=["no_such_measure"])
    with pytest.raises(ParameterError, match="alpha must be in"):
        fasteval.agreement(ref, ref, alpha=1.5)
    with pytest.raises(ParameterError, match="drop must be in"):
        agr.simulate_assessor(ref, drop=2.0)


def test_scoring_sets_on_the_union_equals_evaluating_each() -> None:
    ref = fasteval.load_qrels(QRELS)
    neg = ref.with_columns(
        pl.when(pl.col("doc_id").str.ends_with("1")).then(-1).otherwise(pl.col("relevance"))
    )
    sets = {
        "ref": ref,
        "neg": neg,
        **{
            f"s{i}": agr.simulate_assessor(
                ref, flip_relevant=0.2 * i, flip_nonrelevant=0.05 * i, drop=0.2 * i, seed=i
            )
            for i in (1, 2)
        },
        "one_query": ref.filter(pl.col("query_id") == ref["query_id"][0]),
    }
    ms = ["map", "P_10", "ndcg_cut_10", "bpref", "recip_rank", "recall_100"]
    runs = pl.read_parquet(RUNS)
    run_ids, names, got = score_sets(sets, runs, ms)
    for name, q in sets.items():
        table = fasteval.evaluate(q, runs, ms, per_query=True)
        for m in names:
            pq = table.filter((pl.col("measure") == m) & (pl.col("query_id") != "all"))
            wide = pq.pivot(on="query_id", index="run_id", values="value")
            wide = pl.DataFrame({"run_id": run_ids}).join(wide, on="run_id", how="left")
            queries = sorted(c for c in wide.columns if c != "run_id")
            assert got[name][m].queries == queries, (name, m)
            want = np.nan_to_num(wide.select(queries).to_numpy())
            assert np.array_equal(got[name][m].X, want), (name, m)


def test_progress_bar_counts_every_step(capsys) -> None:
    ref = fasteval.load_qrels(QRELS)
    sets = {"a": agr.simulate_assessor(ref, drop=0.2, seed=1), "b": ref}
    fasteval.agreement(ref, sets, runs=RUNS, measures=["map", "P.5,10"], B=20, progress=True)
    err = capsys.readouterr().err
    assert "agreement" in err and "9/9" in err  # 3 evaluations + 2 sets x 3 measures


def test_measures_that_cannot_rank_systems_are_refused() -> None:
    with pytest.raises(MeasureError, match="ad-hoc ranking measures"):
        fasteval.agreement(QRELS, QRELS, runs=RUNS, measures=["alpha_nDCG@20"])
    with pytest.raises(MeasureError, match="give strings"):
        fasteval.agreement(QRELS, QRELS, runs=RUNS, measures=["relstring"])


def test_qrels_dicts_are_one_judgment_set() -> None:
    ref = fasteval.load_qrels(QRELS)
    as_dict: dict[str, dict[str, int]] = {}
    for q, d, r in ref.iter_rows():
        as_dict.setdefault(q, {})[d] = r
    res = fasteval.agreement(as_dict, as_dict)
    assert res.labels["other"][0] == "other" and res.labels["kappa"][0] == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(2, 9),
    st.integers(2, 12),
    st.integers(0, 2**16),
    st.sampled_from([0.5, 0.8, 0.95]),
)
def test_rank_intervals_do_not_depend_on_row_order(
    n_runs: int, n_q: int, seed: int, level: float
) -> None:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (n_runs, n_q)) / 4  # ties between runs and within resamples
    runs = [f"r{i}" for i in range(n_runs)]
    got = rank_intervals_matrix(X, runs, B=60, level=level, seed=seed)
    perm = rng.permutation(n_runs)
    shuffled = rank_intervals_matrix(X[perm], [runs[i] for i in perm], B=60, level=level, seed=seed)
    assert got.equals(shuffled)
    assert (got["rank_low"] <= got["rank_high"]).all()
    assert sorted(got["rank"].to_list()) == list(range(1, n_runs + 1))
    assume(n_runs >= 3)
    ranks = agr.strict_ranks(X.mean(1), runs)
    assert agr.rbo_ext(ranks, ranks) == pytest.approx(1.0)
    assert -1.0 <= agr.tau_ap_ranks(ranks, agr.strict_ranks(X[:, 0], runs)) <= 1.0


def test_a_pair_judged_twice_in_one_set_is_refused() -> None:
    ref = _qrels([("1", "a", 1), ("1", "b", 0)])
    twice = _qrels([("1", "a", 1), ("1", "a", 0)])
    with pytest.raises(InputFormatError, match=r"'o' judge query '1' document 'a' more than once"):
        agr.label_agreement(ref, {"o": twice})


@settings(max_examples=25, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.integers(0, 1000))
def test_simulated_assessor_flips_and_drops_only_what_it_says(
    fr: float, fn: float, drop: float, seed: int
) -> None:
    ref = _qrels([("1", f"d{i}", g) for i, g in enumerate([-1, 0, 0, 1, 2, 1, 0, 2] * 5)])
    sim = agr.simulate_assessor(ref, flip_relevant=fr, flip_nonrelevant=fn, drop=drop, seed=seed)
    both = ref.join(sim, on=["query_id", "doc_id"], suffix="_s")
    assert sim.height == both.height <= ref.height  # only drops, no new pairs
    a, b = both["relevance"].to_numpy(), both["relevance_s"].to_numpy()
    assert (b[a < 0] == a[a < 0]).all()  # unjudged stay unjudged
    assert set(b[(a >= 1) & (b != a)].tolist()) <= {0}  # relevant ones only become 0
    assert set(b[(a == 0) & (b != a)].tolist()) <= {1}
    if fr == 0 and fn == 0:
        assert (a == b).all()
    if drop == 0:
        assert sim.height == ref.height
