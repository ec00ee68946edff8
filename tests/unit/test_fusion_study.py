"""The upper-bound study (joint RIC vs fused runs) against a brute-force reference."""

from __future__ import annotations

import math
import random

import numpy as np
import polars as pl
import pytest
from scipy import stats

from fasteval.analysis import fusion as fu
from fasteval.errors import ParameterError
from tests.reference import fusion as ref

TOL = 1e-12


def collection(seed: int, n_runs: int = 6, n_q: int = 4, n_docs: int = 30):
    """Graded qrels (with an unjudged -1 grade), runs with tied scores and missing queries."""
    rnd = random.Random(seed)
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels = {
        str(q): {d: rnd.choice([-1, 0, 0, 0, 1, 2]) for d in rnd.sample(docs, 18)}
        for q in range(n_q)
    }
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for r in range(n_runs):
        runs[f"r{r}"] = {
            str(q): {d: float(rnd.randint(0, 8)) for d in rnd.sample(docs, rnd.randint(3, 15))}
            for q in range(n_q)
            if rnd.random() < 0.85 or q == 0
        }
    qr = pl.DataFrame(
        [(q, d, g) for q, m in qrels.items() for d, g in m.items()],
        schema=["query_id", "doc_id", "relevance"],
        orient="row",
    )
    rf = pl.DataFrame(
        [(r, q, d, s) for r, m in runs.items() for q, x in m.items() for d, s in x.items()],
        schema=["run_id", "query_id", "doc_id", "score"],
        orient="row",
    )
    return qrels, runs, qr, rf


def naive_query(runs: list[dict[str, float]], qrels: dict[str, int], level: int):
    """Naive bound by hand: relevant by grade, then Borda, then doc id (all descending)."""
    borda: dict[str, float] = {}
    for r in runs:
        order = ref.ranked(r)
        for i, d in enumerate(order):
            borda[d] = borda.get(d, 0.0) + len(order) - i
    cls = {d: (qrels.get(d, -1) if qrels.get(d, -1) >= level else -1) for d in borda}
    order = sorted(borda, key=lambda d: (cls[d], borda[d], d.encode()), reverse=True)
    return {d: float(len(order) - j) for j, d in enumerate(order)}


def reference_fuser(qrels, runs, rf, qr, depth, level):
    """``fuse_group`` for the reference: Comb* and Naive by hand, the pairwise methods
    by fasteval's single-group fuse (their own properties are tested in test_fusion.py)."""

    def fuse_group(method, group):
        members = [runs[r] for r in group]
        queries = sorted({q for r in members for q in r})
        out: dict[str, dict[str, float]] = {}
        if method in ("combsum", "combmnz", "combanz", "naive"):
            for q in queries:
                rankings = [r[q] for r in members if q in r]
                if method == "naive":
                    f = naive_query(rankings, qrels.get(q, {}), level)
                else:
                    f = ref.comb(rankings, method, in_order=True)
                out[q] = ref.top(f, depth)
            return out
        frame = fu.fuse(rf, method, run_ids=group, depth=depth, qrels=qr, rel_level=level)
        for q, d, s in frame.select("query_id", "doc_id", "score").iter_rows():
            out.setdefault(q, {})[d] = s
        return out

    return fuse_group


@pytest.mark.parametrize(("seed", "level", "depth"), [(0, 1, 1000), (1, 2, 6), (2, 1, 4)])
def test_study_matches_reference(seed, level, depth):
    qrels, runs, qr, rf = collection(seed)
    methods = list(fu.STUDY_METHODS)
    got = fu.upper_bound_study(
        qr,
        rf,
        n_groups=5,
        group_size=3,
        seed=seed,
        methods=methods,
        depth=depth,
        rel_level=level,
        batch=2,
    )
    fin = fu.prepare_fusion(rf, qr)
    groups = [[fin.run_names[i] for i in g] for g in fu.random_groups(fin.n_runs, 5, 3, seed)]
    want = ref.upper_bound_study(
        qrels, runs, groups, methods, reference_fuser(qrels, runs, rf, qr, depth, level), level
    )
    assert got.height == len(want) == 5 * len(methods)
    assert got.columns == list(want[0])
    for g, w in zip(got.iter_rows(named=True), want, strict=True):
        for k, v in w.items():
            if isinstance(v, float):
                assert math.isclose(g[k], v, rel_tol=TOL, abs_tol=TOL), (k, g, w)
            else:
                assert g[k] == v, (k, g, w)
    # the summary: scipy's tau-b and rho, RMSE by hand
    summ = fu.upper_bound_summary(got)
    assert summ.select("method", "target").rows() == [
        (m, t) for m in methods for t in ("RIC", "map")
    ]
    for row in summ.iter_rows(named=True):
        part = [w for w in want if w["method"] == row["method"]]
        x = np.array([w["joint_RIC"] for w in part])
        y = np.array([w[row["target"]] for w in part])
        assert row["n_groups"] == 5
        tau = stats.kendalltau(x, y).statistic
        rho = stats.spearmanr(x, y).statistic
        for name, v in (("kendall_tau", tau), ("spearman_rho", rho)):
            if math.isnan(v):
                assert math.isnan(row[name])
            else:
                assert math.isclose(row[name], v, abs_tol=1e-12), (name, row, v)
        assert math.isclose(row["rmse"], float(np.sqrt(np.mean((x - y) ** 2))), abs_tol=1e-12)


def test_study_is_deterministic_from_seed_and_batch_free():
    _, _, qr, rf = collection(3, n_runs=8)
    fin = fu.prepare_fusion(rf, qr)
    kw = dict(n_groups=6, group_size=4, methods=["combsum", "condorcet", "pareto"])
    a = fu.upper_bound_study(fin, seed=11, batch=4, **kw)
    b = fu.upper_bound_study(fin, seed=11, batch=1, **kw)
    assert a.equals(b)
    c = fu.upper_bound_study(fin, seed=12, **kw)
    assert a["runs"].to_list() != c["runs"].to_list()
    want = [",".join(fin.run_names[i] for i in g) for g in fu.random_groups(8, 6, 4, 11)]
    assert a.filter(pl.col("method") == "pareto")["runs"].to_list() == want
    # explicit groups give the same rows as the random groups they name
    d = fu.upper_bound_study(fin, groups=[w.split(",") for w in want], **kw)
    assert a.equals(d)


def test_study_bounds_and_columns():
    _, _, qr, rf = collection(4, n_runs=7)
    df = fu.upper_bound_study(qr, rf, n_groups=4, group_size=3, seed=2, measure="P_5")
    assert df.columns == [
        "group",
        "runs",
        "method",
        "joint_RIC",
        "RIC",
        "P_5",
        "best_run_RIC",
        "best_run_P_5",
    ]
    naive = df.filter(pl.col("method") == "naive")
    # Naive puts every retrieved relevant document first: RIC never below the best member's
    assert (naive["RIC"] >= naive["best_run_RIC"] - 1e-12).all()
    assert (df["joint_RIC"] >= df["best_run_RIC"] - 1e-12).all()  # joint >= any member


def test_study_errors():
    _, _, qr, rf = collection(5)
    fin = fu.prepare_fusion(rf, qr)
    with pytest.raises(ParameterError, match="needs qrels"):
        fu.upper_bound_study(fu.prepare_fusion(rf), n_groups=2, group_size=2)
    with pytest.raises(ParameterError, match=r"group size must be in 1\.\.6, got 7"):
        fu.upper_bound_study(fin, n_groups=2, group_size=7)
    with pytest.raises(ParameterError, match="unknown fusion method 'bordo'"):
        fu.upper_bound_study(fin, n_groups=2, group_size=2, methods=["bordo"])
    with pytest.raises(ParameterError, match="without repeats"):
        fu.upper_bound_study(fin, n_groups=2, group_size=2, methods=["sum", "combsum"])
    with pytest.raises(ParameterError, match="one measure"):
        fu.upper_bound_study(fin, n_groups=2, group_size=2, measure="P")
    with pytest.raises(ParameterError, match="runs are required"):
        fu.upper_bound_study(qr)
    with pytest.raises(ParameterError, match="not an upper-bound study table"):
        fu.upper_bound_summary(pl.DataFrame({"x": [1]}))
    df = fu.upper_bound_study(fin, n_groups=2, group_size=2, methods=["combsum"])
    with pytest.raises(ParameterError, match="unknown target column 'ndcg'"):
        fu.upper_bound_summary(df, ["ndcg"])


def test_input_runs_reproduce_the_archive():
    _, _, qr, rf = collection(6)
    fin = fu.prepare_fusion(rf, qr)
    back = fu.input_runs(fin).to_frame()
    key = ["run_id", "query_id", "doc_id"]
    assert back.select(*key, "score").sort(key).equals(rf.sort(key).cast({"score": pl.Float64}))
    # rank order: score descending, then doc id descending, within each (run, query)
    for (_r, _q), part in back.group_by(["run_id", "query_id"]):
        keys = [(s, d.encode()) for s, d in part.select("score", "doc_id").iter_rows()]
        assert keys == sorted(keys, reverse=True)


def test_scatter_plot_written(tmp_path):
    pytest.importorskip("matplotlib")
    from fasteval.plots.fusion import upper_bound_scatter

    _, _, qr, rf = collection(7)
    df = fu.upper_bound_study(qr, rf, n_groups=5, group_size=3, seed=1)
    out = upper_bound_scatter(df, tmp_path / "study.png")
    assert out.exists() and out.stat().st_size > 1000


def test_cli_fuse_study(tmp_path):
    from click.testing import CliRunner

    from fasteval.cli import main

    _, _, qr, rf = collection(8)
    runs = tmp_path / "runs.parquet"
    rf.write_parquet(runs)
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qr.iter_rows()))
    out, summ, png = tmp_path / "t.parquet", tmp_path / "s.csv", tmp_path / "p.png"
    args = ["fuse-study", str(qrels), str(runs), "-n", "4", "--size", "3", "--seed", "5"]
    args += ["-m", "combsum,condorcet", "-m", "naive", "-o", str(out), "--summary", str(summ)]
    res = CliRunner().invoke(main, [*args, "--plot", str(png)])
    assert res.exit_code == 0, res.output
    df = pl.read_parquet(out)
    want = fu.upper_bound_study(
        qr, rf, n_groups=4, group_size=3, seed=5, methods=["combsum", "condorcet", "naive"]
    )
    assert df.equals(want)
    assert pl.read_csv(summ).height == 6
    assert png.stat().st_size > 1000
    assert "kendall_tau" in res.output
    bad = CliRunner().invoke(main, [*args[:-6], "--size", "99", "-o", str(tmp_path / "x.csv")])
    assert bad.exit_code == 1
    assert "group size must be in 1..6" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize("k", [12, 13])
def test_joint_ric_dense_and_sorted_paths_match_reference(k):
    # k <= 12 systems count sign-vector codes in a dense table, more sort them
    from fasteval.analysis.information import pair_data
    from tests.reference import information as iref

    qrels, runs, qr, rf = collection(9, n_runs=14, n_q=3, n_docs=20)
    data = pair_data(qr, rf, compat=10)
    names = sorted(runs)[:k]
    mean, _ = data.joint_ric([names])

    def fn(q, rs, lv):
        return iref.joint_ric_query(q, rs, lv, compat=10)

    want = iref.mean_over_queries(qrels, [runs[n] for n in names], fn)
    assert math.isclose(mean[0], want, rel_tol=TOL, abs_tol=TOL)
