"""Fusion and upper bounds: hand-checked cases, the naive reference, properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.analysis import fusion as fu
from fasteval.errors import ParameterError
from tests.reference import fusion as ref

# run a: d1 d2 d3; run b: d3 d2 d4; run c: d5 d1   (query 1)
RUNS = pl.DataFrame(
    {
        "run_id": ["a"] * 3 + ["b"] * 3 + ["c"] * 2,
        "query_id": ["1"] * 8,
        "doc_id": ["d1", "d2", "d3", "d3", "d2", "d4", "d5", "d1"],
        "score": [3.0, 2.0, 1.0, 0.9, 0.5, 0.1, 10.0, 5.0],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["1", "1", "1"], "doc_id": ["d4", "d5", "d2"], "relevance": [1, 1, 0]}
)


def docs(df: pl.DataFrame) -> list[str]:
    return df["doc_id"].to_list()


def test_comb_hand_checked():
    # min-max: a = {d1 1, d2 .5, d3 0}; b = {d3 1, d2 .5, d4 0}; c = {d5 1, d1 0}
    s = fu.fuse(RUNS, "combsum")
    assert dict(zip(s["doc_id"], s["score"], strict=True)) == {
        "d1": 1.0,
        "d2": 1.0,
        "d3": 1.0,
        "d5": 1.0,
        "d4": 0.0,
    }
    assert docs(s) == ["d5", "d3", "d2", "d1", "d4"]  # ties: larger doc id first
    assert docs(fu.fuse(RUNS, "combmnz")) == ["d3", "d2", "d1", "d5", "d4"]
    anz = fu.fuse(RUNS, "combanz")
    assert docs(anz)[0] == "d5" and anz["score"][0] == 1.0
    assert s.columns == ["run_id", "query_id", "doc_id", "rank", "score"]
    assert s["rank"].to_list() == [1, 2, 3, 4, 5]
    assert s["run_id"].unique().to_list() == ["combsum"]


def test_condorcet_hand_checked():
    # d1 beats d3 and d2 (2:1); d3 vs d2 tie (c abstains); Borda order d3 d2 d1 d5 d4
    out = fu.fuse(RUNS, "condorcet")
    assert docs(out) == ["d1", "d3", "d2", "d5", "d4"]
    assert out["score"].to_list() == [5.0, 4.0, 3.0, 2.0, 1.0]


def test_naive_puts_every_retrieved_relevant_first():
    out = docs(fu.fuse(RUNS, "naive", qrels=QRELS))
    assert set(out[:2]) == {"d4", "d5"}
    assert out == ["d5", "d4", "d3", "d2", "d1"]


def test_pareto_hand_checked():
    # d4 (relevant) is only in run b, under d3 and d2: both dominate it and must precede it
    out = docs(fu.fuse(RUNS, "pareto", qrels=QRELS))
    assert out == ["d3", "d2", "d5", "d4", "d1"]


def test_pareto_respects_unanimity_over_relevance():
    runs = pl.DataFrame(
        {
            "run_id": ["a", "a", "b", "b"],
            "query_id": ["q"] * 4,
            "doc_id": ["x", "y", "x", "y"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["y"], "relevance": [1]})
    assert docs(fu.fuse(runs, "pareto", qrels=qrels)) == ["x", "y"]
    assert docs(fu.fuse(runs, "naive", qrels=qrels)) == ["y", "x"]
    # majoritarian: both runs rank x above y
    assert docs(fu.fuse(runs, "majoritarian", qrels=qrels)) == ["x", "y"]


def test_majoritarian_falls_back_to_relevance_on_a_split():
    runs = pl.DataFrame(
        {
            "run_id": ["a", "a", "b", "b"],
            "query_id": ["q"] * 4,
            "doc_id": ["x", "y", "x", "y"],
            "score": [2.0, 1.0, 1.0, 2.0],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["x"], "relevance": [1]})
    # 1:1 of 2 runs: each side has half, neither more -> relevance decides
    assert docs(fu.fuse(runs, "majoritarian", qrels=qrels)) == ["x", "y"]


def test_depth_run_ids_norms_and_errors():
    assert fu.fuse(RUNS, "combsum", depth=2).height == 2
    only_a = fu.fuse(RUNS, "combsum", run_ids=["a"])
    assert docs(only_a) == ["d1", "d2", "d3"]
    for norm in fu.NORMS:
        assert fu.fuse(RUNS, "combsum", norm=norm).height == 5
    with pytest.raises(ParameterError, match="unknown fusion method 'bordo'"):
        fu.fuse(RUNS, "bordo")
    with pytest.raises(ParameterError, match="needs qrels"):
        fu.fuse(RUNS, "naive")
    with pytest.raises(ParameterError, match="unknown run id 'zz'"):
        fu.fuse(RUNS, "combsum", run_ids=["zz"])
    with pytest.raises(ParameterError, match="depth must be positive"):
        fu.fuse(RUNS, "combsum", depth=0)
    with pytest.raises(ParameterError, match="unknown normalisation"):
        fu.fuse(RUNS, "combsum", norm="maxi")
    dup = pl.concat([RUNS, RUNS.head(1)])
    with pytest.raises(fasteval.InputFormatError, match="more than once"):
        fu.fuse(dup, "combsum")


def test_fused_run_feeds_evaluate_and_batch_agrees():
    fin = fu.prepare_fusion(RUNS, QRELS)
    batch = fu.fuse_groups(fin, [["a", "b"], ["b", "c"], [0, 1, 2]], "combmnz")
    frame = batch.to_frame()
    assert frame["run_id"].unique(maintain_order=True).to_list() == [
        "combmnz-0",
        "combmnz-1",
        "combmnz-2",
    ]
    single = fu.fuse(fin, "combmnz", run_ids=["b", "c"])
    got = frame.filter(pl.col("run_id") == "combmnz-1")
    assert got["doc_id"].to_list() == single["doc_id"].to_list()
    # the compact evaluation equals evaluating the frame with trec_eval-10 semantics
    a = batch.evaluate(["map", "P_2", "ndcg"]).sort("run_id", "query_id", "measure")
    b = fasteval.evaluate(QRELS, frame, ["map", "P_2", "ndcg"], compat=10)
    b = b.sort("run_id", "query_id", "measure")
    assert a.equals(b)


# ---------------------------------------------------------------- properties

DOCS = [f"d{i}" for i in range(12)]


@st.composite
def groups(draw, with_qrels=True):
    n_runs = draw(st.integers(1, 5))
    rows = []
    runs = []
    for r in range(n_runs):
        docs_r = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
        scores = draw(
            st.lists(st.integers(0, 6).map(float), min_size=len(docs_r), max_size=len(docs_r))
        )
        runs.append(dict(zip(docs_r, scores, strict=True)))
        rows += [(f"r{r}", "q", d, s) for d, s in zip(docs_r, scores, strict=True)]
    df = pl.DataFrame(rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    rel = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
    qrels = pl.DataFrame({"query_id": ["q"] * len(rel), "doc_id": rel, "relevance": [1] * len(rel)})
    return df, runs, qrels, set(rel)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(
    groups(),
    st.sampled_from(["combsum", "combmnz", "combanz"]),
    st.sampled_from(["min-max", "zscore", "sum", "rank", "none"]),
)
def test_comb_matches_reference(data, method, norm):
    df, runs, _, _ = data
    out = fu.fuse(df, method, norm=norm)
    want = ref.comb(runs, method, norm)
    got = dict(zip(out["doc_id"], out["score"], strict=True))
    assert set(got) == set(want)
    for d, v in want.items():
        assert math.isclose(got[d], v, rel_tol=1e-12, abs_tol=1e-12), (d, got[d], v)
    # order: fused score descending, then doc id descending
    keys = [(got[d], d.encode()) for d in out["doc_id"]]
    assert keys == sorted(keys, reverse=True)


@SETTINGS
@given(groups())
def test_upper_bound_properties(data):
    df, runs, qrels, rel = data
    union = {d for r in runs for d in r}
    naive = docs(fu.fuse(df, "naive", qrels=qrels))
    n_rel = len(union & rel)
    assert set(naive[:n_rel]) == union & rel
    pareto = docs(fu.fuse(df, "pareto", qrels=qrels))
    where = {d: i for i, d in enumerate(pareto)}
    for a in union:
        for b in union:
            if ref.dominates(runs, a, b):
                assert where[a] < where[b], (a, b)
    for method in ("condorcet", "majoritarian"):
        out = docs(fu.fuse(df, method, qrels=qrels))
        assert sorted(out) == sorted(union)
        # a Hamiltonian path: no document is strictly beaten by the one after it
        for a, b in itertools.pairwise(out):
            vab, vba = ref.votes(runs, a, b)
            if method == "condorcet":
                assert vba <= vab
            elif vba > vab and 2 * vba >= len(runs):
                pytest.fail(f"{b} has a majority over {a} but follows it")
    if len(runs) == 1:  # one voter: every pairwise method returns its ranking
        only = ref.ranked(runs[0])
        assert pareto == only
        assert docs(fu.fuse(df, "condorcet")) == only


@SETTINGS
@given(groups())
def test_naive_bound_never_below_best_run(data):
    df, _, qrels, _ = data
    measures = ["map", "P_1", "P_5", "recall_5", "recip_rank", "Rprec"]
    fused = fu.fuse(df, "naive", qrels=qrels)
    ev = fasteval.evaluate(qrels, [df, fused], measures, compat=10, per_query=False)
    ev = ev.pivot(on="measure", index="run_id", values="value")
    best = ev.filter(pl.col("run_id") != "naive").select(measures).max()
    bound = ev.filter(pl.col("run_id") == "naive").select(measures)
    assert (bound.to_numpy() >= best.to_numpy() - 1e-12).all()


def test_random_groups_are_seeded():
    a = fu.random_groups(20, 5, 10, seed=3)
    assert a == fu.random_groups(20, 5, 10, seed=3)
    assert all(len(set(g)) == 10 for g in a)
    assert np.array(a).max() < 20


# ---------------------------------------------------------------- CLI


def test_cli_fuse_writes_trec_and_parquet(tmp_path):
    from click.testing import CliRunner

    from fasteval.cli import main

    runs = tmp_path / "runs.parquet"
    RUNS.write_parquet(runs)
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.iter_rows()))
    out = tmp_path / "fused.run"
    res = CliRunner().invoke(main, ["fuse", str(runs), "-m", "CombMNZ", "-o", str(out)])
    assert res.exit_code == 0, res.output
    lines = out.read_text().splitlines()
    assert lines[0].split() == ["1", "Q0", "d3", "1", "2.0", "combmnz"]
    back = fasteval.load_runs(out)
    assert back["doc_id"].to_list() == ["d3", "d2", "d1", "d5", "d4"]
    pq = tmp_path / "fused.parquet"
    args = ["fuse", str(runs), "-m", "pareto", "--qrels", str(qrels), "-o", str(pq), "--depth", "3"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert fasteval.load_runs(pq)["doc_id"].to_list() == ["d3", "d2", "d5"]


def test_cli_fuse_errors_are_one_line(tmp_path):
    from click.testing import CliRunner

    from fasteval.cli import main

    runs = tmp_path / "runs.parquet"
    RUNS.write_parquet(runs)
    for args, want in [
        (["-m", "naive"], "needs qrels"),
        (["-m", "nope"], "unknown fusion method"),
        (["--norm", "nope"], "unknown normalisation"),
    ]:
        res = CliRunner().invoke(main, ["fuse", str(runs), "-o", str(tmp_path / "x.run"), *args])
        assert res.exit_code == 1
        assert want in res.output and "Traceback" not in res.output


def test_fusing_named_runs_of_an_archive_reads_only_their_row_groups(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from fasteval.cli import main
    from fasteval.io import archive as arc

    rng = np.random.default_rng(11)
    paths = []
    for r in range(6):
        lines = [
            f"{q} Q0 d{d} {i} {1.0 - i / 50:.4f} run{r}"
            for q in ("1", "2", "3")
            for i, d in enumerate(rng.choice(60, 40, replace=False))
        ]
        p = tmp_path / f"run{r}.txt"
        p.write_text("\n".join(lines) + "\n")
        paths.append(p)
    archive = tmp_path / "a.parquet"
    res = CliRunner().invoke(
        main, ["ingest", *map(str, paths), "-o", str(archive)], env={"FASTEVAL_BATCH_ROWS": "120"}
    )
    assert res.exit_code == 0, res.output
    import pyarrow.parquet as pq

    n_groups = pq.ParquetFile(archive).metadata.num_row_groups
    read: list[list[int]] = []
    checks = set()
    real = arc.read_batches

    def spy(path, groups, columns=None, verified=None):
        assert verified is not None  # the digest is checked: the pages are not, twice
        read.append(list(groups))
        checks.add(verified)
        return real(path, groups, columns, verified=verified)

    monkeypatch.setattr(arc, "read_batches", spy)
    monkeypatch.setattr(arc, "RUN_BATCH_ROWS", 50)  # each run spans several batches
    got = fasteval.fuse(archive, method="combsum", run_ids=["run1", "run4"])
    assert read and len({g for gs in read for g in gs}) < n_groups
    assert len(checks) == 1 and checks.pop().matched  # checked once, joined before the rows
    want = fasteval.fuse([paths[1], paths[4]], method="combsum")
    assert got.drop("run_id").equals(want.drop("run_id"))
