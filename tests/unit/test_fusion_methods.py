"""Every fusion method against the slow reference; optimize_fusion against a loop."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.analysis import fusion as fu
from fasteval.cli import main
from fasteval.errors import ParameterError
from tests.reference import fusion as ref

DOCS = [f"d{i}" for i in range(8)]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

# ranx's fusion_switch names: every one must resolve
RANX_NAMES = [
    "bayesfuse",
    "bordafuse",
    "anz",
    "gmnz",
    "max",
    "med",
    "min",
    "mnz",
    "sum",
    "condorcet",
    "isr",
    "log_isr",
    "logn_isr",
    "mapfuse",
    "mixed",
    "posfuse",
    "probfuse",
    "rbc",
    "rrf",
    "segfuse",
    "slidefuse",
    "w_bordafuse",
    "w_condorcet",
    "wmnz",
    "wsum",
]
RANX_NORMS = ["borda", "max", "min-max", "min_max", "min-max-inverted", "rank", "sum", "zmuv"]
SCORE = [
    "combsum",
    "combmnz",
    "combanz",
    "combmax",
    "combmin",
    "combmed",
    "combgmnz",
    "mixed",
    "wmnz",
]
RANKS = ["rrf", "isr", "log_isr", "logn_isr", "rbc", "borda"]
PARAMS = {
    "combgmnz": {"gamma": 0.7},
    "rrf": {"k": 5.0},
    "logn_isr": {"sigma": 0.3},
    "rbc": {"phi": 0.7},
}
WEIGHTED = {"combsum", "combmnz", "combanz", "mixed", "wmnz", "rrf", "rbc", "borda"}


@st.composite
def one_query(draw):
    n_runs = draw(st.integers(1, 4))
    runs, rows = [], []
    for r in range(n_runs):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        scores = draw(
            st.lists(st.integers(-3, 5).map(float), min_size=len(docs), max_size=len(docs))
        )
        runs.append(dict(zip(docs, scores, strict=True)))
        rows += [(f"r{r}", "q", d, s) for d, s in zip(docs, scores, strict=True)]
    df = pl.DataFrame(rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    w = draw(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]), min_size=n_runs, max_size=n_runs)
    )
    return df, runs, w


def _check(out: pl.DataFrame, want: dict[str, float]) -> None:
    got = dict(zip(out["doc_id"], out["score"], strict=True))
    assert set(got) == set(want)
    for d, v in want.items():
        assert math.isclose(got[d], v, rel_tol=1e-12, abs_tol=1e-12), (d, got[d], v)
    keys = [(got[d], d.encode()) for d in out["doc_id"]]
    assert keys == sorted(keys, reverse=True)


@SETTINGS
@given(
    one_query(),
    st.sampled_from(SCORE),
    st.sampled_from(
        ["min-max", "min-max-inverted", "max", "zscore", "sum", "rank", "borda", "none"]
    ),
    st.booleans(),
)
def test_score_methods_equal_reference(data, method, norm, weighted):
    df, runs, w = data
    weights = w if weighted and method in WEIGHTED else None
    out = fu.fuse(df, method, norm=norm, weights=weights, params=PARAMS.get(method))
    _check(out, ref.fuse_any(runs, method, norm, weights, **PARAMS.get(method, {})))


@SETTINGS
@given(one_query(), st.sampled_from(RANKS), st.booleans())
def test_rank_methods_equal_reference(data, method, weighted):
    df, runs, w = data
    weights = w if weighted and method in WEIGHTED else None
    out = fu.fuse(df, method, weights=weights, params=PARAMS.get(method))
    _check(out, ref.fuse_any(runs, method, "min-max", weights, **PARAMS.get(method, {})))


def test_registry_names_every_ranx_method_with_a_citation():
    for name in RANX_NAMES:
        spec = fu.method_spec(name)
        assert spec.citation and spec.definition
    for n in RANX_NORMS:
        fu.norm_name(n)
    rows = fu.describe()
    assert {r["method"] for r in rows} == set(fu.REGISTRY)
    assert fu.method_name("w_condorcet") == "condorcet"
    assert fu.method_name("wsum") == "combsum"


def test_method_errors_are_clear():
    df = pl.DataFrame(
        {"run_id": ["a", "b"], "query_id": ["1", "1"], "doc_id": ["x", "y"], "score": [1.0, 2.0]}
    )
    with pytest.raises(ParameterError, match="rbc needs the parameter phi"):
        fu.fuse(df, "rbc")
    with pytest.raises(ParameterError, match="phi must be in"):
        fu.fuse(df, "rbc", params={"phi": 1.5})
    with pytest.raises(ParameterError, match="takes"):
        fu.fuse(df, "combsum", params={"gamma": 1})
    with pytest.raises(ParameterError, match="supervised"):
        fu.fuse(df, "probfuse", params={"n_segments": 2})
    with pytest.raises(ParameterError, match="reads ranks only"):
        fu.fuse(df, "rrf", norm="borda")


# ---------------------------------------------------------------- supervised

RUNS = pl.DataFrame(
    {
        "run_id": ["a"] * 5 + ["b"] * 4 + ["a"] * 3 + ["b"] * 3,
        "query_id": ["1"] * 9 + ["2"] * 6,
        "doc_id": ["x", "y", "z", "u", "v", "y", "x", "w", "z", "x", "y", "z", "z", "w", "x"],
        "score": [5.0, 4, 3, 2, 1, 9, 8, 7, 6, 3, 2, 1, 3, 2, 1],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["1", "1", "2", "2"],
        "doc_id": ["x", "z", "w", "y"],
        "relevance": [1, 2, 1, 0],
    }
)


def test_mapfuse_learns_the_map_fasteval_computes():
    fin = fu.prepare_fusion(RUNS, QRELS)
    tabs = fu.supervised.train_tables(fin, "mapfuse")["map_scores"]
    ev = fasteval.evaluate(QRELS, RUNS, "map", compat=10, complete=True, per_query=False)
    for r, v in zip(ev["run_id"], ev["value"], strict=True):
        assert math.isclose(tabs[r], v, abs_tol=1e-12)


def test_posfuse_and_probfuse_tables_by_hand():
    fin = fu.prepare_fusion(RUNS, QRELS)
    pos = fu.supervised.train_tables(fin, "posfuse")["probs"]
    # run a: q1 x y z u v -> 1 0 1 0 0 ; q2 x y z -> 0 0 0
    np.testing.assert_allclose(pos["a"], [0.5, 0, 0.5, 0, 0])
    # run b: q1 y x w z -> 0 1 0 1 ; q2 z w x -> 0 1 0
    np.testing.assert_allclose(pos["b"], [0, 1, 0, 1])
    prob = fu.supervised.train_tables(fin, "probfuse", n_segments=2)["probs"]
    # run a: q1 segments of 3: [1 0 1] [0 0] -> 2/3, 0; q2 segments of 2: [0 0] [0]
    np.testing.assert_allclose(prob["a"], [(2 / 3 + 0) / 2, 0])
    fused = fu.fuse(RUNS, "posfuse", train_qrels=QRELS)
    q1 = dict(zip(fused.filter(pl.col("query_id") == "1")["doc_id"], fused["score"], strict=False))
    assert math.isclose(q1["x"], 0.5 + 1.0)  # a's rank 0, b's rank 1


# ---------------------------------------------------------------- optimisation


def _loop(method: str, configs: list[dict], metric: str) -> list[float]:
    out = []
    for c in configs:
        fused = fu.fuse(RUNS, method, depth=10**6, params=c)
        ev = fasteval.evaluate(QRELS, fused, metric, compat=10, complete=True, per_query=False)
        out.append(float(ev["value"][0]))
    return out


@pytest.mark.parametrize(
    ("method", "step"),
    [
        ("wsum", 0.25),
        ("mixed", 0.5),
        ("rrf", None),
        ("rbc", 0.2),
        ("logn_isr", 0.25),
        ("borda", 0.5),
        ("condorcet", 0.5),
    ],
)
def test_batch_equals_one_configuration_at_a_time(method, step):
    got = fu.optimize_fusion(QRELS, RUNS, method, "min-max", "map", step).sort("config")
    configs = fu.fusion_grid(method, 2, step=step)
    assert got.height == len(configs)
    np.testing.assert_allclose(got["map"].to_numpy(), _loop(method, configs, "map"), atol=1e-12)


def test_best_first_and_grids():
    got = fu.optimize_fusion(QRELS, RUNS, "wsum", "min-max", "P@2", 0.5)
    assert got["P@2"].to_list() == sorted(got["P@2"].to_list(), reverse=True)
    assert [c["weights"] for c in fu.fusion_grid("wsum", 2, step=0.5)] == [
        (0.0, 1.0),
        (0.5, 0.5),
        (1.0, 0.0),
    ]
    assert len(fu.fusion_grid("wsum", 3, grid="simplex")) == 66
    assert [c["k"] for c in fu.fusion_grid("rrf", 2)] == [float(k) for k in range(10, 101, 10)]
    assert len(fu.fusion_grid("rbc", 2)) == 100
    assert fu.fusion_grid("combsum", 2, step=1.0) == [
        {"weights": (0.0, 1.0)},
        {"weights": (1.0, 0.0)},
    ]


def test_supervised_optimisation_trains_once_and_scores_each_config():
    got = fu.optimize_fusion(QRELS, RUNS, "probfuse", "min-max", "map", first=1, last=3)
    fin = fu.prepare_fusion(RUNS, QRELS)
    for row in got.iter_rows(named=True):
        n = int(row["n_segments"])
        fused = fu.fuse(
            fin,
            "probfuse",
            depth=10**6,
            params={"n_segments": n, **fu.supervised.train_tables(fin, "probfuse", n_segments=n)},
        )
        ev = fasteval.evaluate(QRELS, fused, "map", compat=10, complete=True, per_query=False)
        assert math.isclose(row["map"], float(ev["value"][0]), abs_tol=1e-12)


def test_cross_validation_chooses_on_training_queries_only():
    rng = np.random.default_rng(7)
    rows = []
    for q in range(8):
        for r in ("a", "b", "c"):
            for i, d in enumerate(rng.permutation(12)[:8]):
                rows.append((r, str(q), f"d{d}", float(10 - i) + rng.random()))
    runs = pl.DataFrame(rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(
        {
            "query_id": [str(q) for q in range(8) for _ in range(3)],
            "doc_id": [f"d{d}" for q in range(8) for d in rng.permutation(12)[:3]],
            "relevance": [1] * 24,
        }
    )
    cv = fu.cross_validate_fusion(qrels, runs, "rrf", "min-max", "map", folds=4, seed=3)
    assert cv["n_test"].sum() == 8 and (cv["n_train"] == 6).all()
    fin = fu.prepare_fusion(runs, qrels)
    configs = fu.fusion_grid("rrf", 3)
    per = []
    for c in configs:
        fused = fu.fuse(fin, "rrf", depth=10**6, params=c)
        ev = fasteval.evaluate(qrels, fused, "map", compat=10, complete=True)
        ev = ev.filter(pl.col("query_id") != "all").sort("query_id")
        per.append(dict(zip(ev["query_id"], ev["value"], strict=True)))
    # recover each fold's test queries: those not among its training ones
    qids = sorted(per[0])
    rng2 = np.random.default_rng(3)
    order = rng2.permutation(np.arange(8))
    fold_of = {fin.qids[int(i)]: k % 4 for k, i in enumerate(order)}
    for row in cv.iter_rows(named=True):
        train = [q for q in qids if fold_of[q] != row["fold"]]
        test = [q for q in qids if fold_of[q] == row["fold"]]
        means = [np.mean([p[q] for q in train]) for p in per]
        assert math.isclose(row["train"], max(means), abs_tol=1e-12)
        assert means[row["config"]] == max(means)
        assert math.isclose(
            row["test"], np.mean([per[row["config"]][q] for q in test]), abs_tol=1e-12
        )


def test_cli_optimize_fusion(tmp_path):
    runs, qrels = tmp_path / "runs.parquet", tmp_path / "qrels.tsv"
    RUNS.with_columns(pl.lit("Q0").alias("iter")).write_parquet(runs)
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS.iter_rows()))
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    for name, path in (("a", a), ("b", b)):
        sub = RUNS.filter(pl.col("run_id") == name)
        path.write_text(
            "".join(
                f"{q} Q0 {d} {i} {s} {name}\n" for i, (_, q, d, s) in enumerate(sub.iter_rows())
            )
        )
    out = tmp_path / "grid.csv"
    res = CliRunner().invoke(
        main,
        [
            "optimize-fusion",
            str(qrels),
            str(a),
            str(b),
            "--metric",
            "map",
            "--step",
            "0.5",
            "-o",
            str(out),
            "--folds",
            "2",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "cross-validated map" in res.output
    assert pl.read_csv(out).height == 3
    res = CliRunner().invoke(main, ["optimize-fusion", str(qrels), str(a), "--metric", "nope"])
    assert res.exit_code == 1 and "unknown measure" in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(
        main,
        [
            "fuse",
            str(a),
            str(b),
            "-m",
            "probfuse",
            "--param",
            "n_segments=2",
            "-o",
            str(tmp_path / "f.run"),
        ],
    )
    assert res.exit_code == 1 and "--train-qrels" in res.output
    res = CliRunner().invoke(
        main,
        [
            "fuse",
            str(a),
            str(b),
            "-m",
            "probfuse",
            "--param",
            "n_segments=2",
            "--train-qrels",
            str(qrels),
            "-o",
            str(tmp_path / "f.run"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "f.run").read_text().count("\n") == 10  # 6 + 4 candidates
