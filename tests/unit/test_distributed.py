"""The cluster path (fasteval.distributed) against the local path: bit-identical tables.

A LocalCluster of 2 single-threaded worker processes on 127.0.0.1 is shared by
the module. Every comparison is bit for bit (floats compared as their 64-bit
patterns, NaN included), over several splits into blocks. One test kills a
worker process mid-study; another interrupts a study and resumes it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from fasteval import distributed as fd
from fasteval import evaluate, information_difference
from fasteval.analysis import studies
from fasteval.analysis import studies as st
from fasteval.analysis import variants as var
from fasteval.cli import main
from fasteval.distributed import evaluation as fde
from fasteval.distributed import studies as fds
from fasteval.errors import ParameterError
from tests.conftest import SAMPLE_DATA as DATA

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"


# --------------------------------------------------------------------------- helpers


def same_bits(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """Equal schema, rows, order and bits (floats by their bit patterns)."""
    assert a.schema == b.schema
    assert a.height == b.height
    for name in a.columns:
        x, y = a[name], b[name]
        if x.dtype in (pl.Float64, pl.Float32):
            xa, ya = x.to_numpy(), y.to_numpy()
            assert np.array_equal(xa.view(np.uint64), ya.view(np.uint64)), name
        else:
            assert x.to_list() == y.to_list(), name


def same_study(a: st.StudyResult, b: st.StudyResult) -> None:
    for x, y in zip(a, b, strict=True):
        same_bits(x, y)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    c = distributed.Client(cluster)
    c.wait_for_workers(2, timeout=60)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def textdata(tmp_path_factory) -> tuple[Path, Path]:
    """Small generated text runs: ties, a query outside the qrels, a query some runs miss."""
    rng = np.random.default_rng(5)
    d = tmp_path_factory.mktemp("gen")
    qids = ["1", "2", "3", "10", "11"]
    lines = []
    for q in qids:
        for k in range(40):
            lines.append(f"{q} 0 D{q}-{k} {int(rng.integers(-1, 3))}")
    (d / "qrels.txt").write_text("\n".join(lines) + "\n")
    runs = d / "runs"
    runs.mkdir()
    for r in range(7):
        out = []
        for q in [*qids, "99"]:
            if q == "11" and r % 3 == 0:
                continue
            docs = rng.choice(60, size=int(rng.integers(5, 50)), replace=False)
            scores = np.round(rng.random(docs.shape[0]), 1)  # many ties
            for rank, (doc, sc) in enumerate(zip(docs, scores, strict=True), 1):
                out.append(f"{q} Q0 D{q}-{doc} {rank} {sc:.6f} gen{r}")
        (runs / f"run{r}.txt").write_text("\n".join(out) + "\n")
    return d / "qrels.txt", runs


# --------------------------------------------------------------------------- no dask needed


def test_missing_blocks_cover_exactly_the_missing_reps() -> None:
    assert fds._missing_blocks(7, set(), 3) == [(0, 3), (3, 6), (6, 7)]
    assert fds._missing_blocks(7, {1, 2, 5}, 3) == [(0, 1), (3, 5), (6, 7)]
    assert fds._missing_blocks(3, {0, 1, 2}, 2) == []


def test_cluster_address_from_option_or_env(monkeypatch) -> None:
    monkeypatch.delenv(fd.ENV_VAR, raising=False)
    assert fd.cluster_address(None) is None
    monkeypatch.setenv(fd.ENV_VAR, " tcp://h:8786 ")
    assert fd.cluster_address(None) == "tcp://h:8786"
    assert fd.cluster_address("local:2") == "local:2"
    monkeypatch.setenv(fd.ENV_VAR, "")
    assert fd.cluster_address(None) is None
    assert fd.with_cluster(studies.subsample, None) is studies.subsample


def test_without_dask_a_clear_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ParameterError, match="pip install 'fasteval\\[cluster\\]'"):
        fd.study("subsample", QRELS, RUNS, client="tcp://127.0.0.1:1")


def test_frames_are_refused_on_a_cluster() -> None:
    with pytest.raises(ParameterError, match="paths or URLs"):
        fd.Source.of(QRELS, [pl.read_parquet(RUNS)])


def test_eval_blocks_read_only_their_own_runs(textdata, monkeypatch) -> None:
    """The plan lists whole runs by file; a block task opens only its own files."""
    qrels, runs = textdata
    files = sorted(runs.iterdir())
    # a second file of run gen2 (an error for the readers): listed with the first
    extra = runs.parent / "zz_more_of_gen2.txt"
    extra.write_text("1 Q0 D1-0 1 0.5 gen2\n")
    try:
        spec = fd.EvalSpec(fd.Source.of(qrels, [runs, extra, RUNS], "tag"))
        groups = fde._eval_plan(spec)
    finally:
        extra.unlink()
    assert groups[:7] == [[str(f)] for f in files[:2]] + [[str(files[2]), str(extra)]] + [
        [str(f)] for f in files[3:]
    ]
    assert groups[7:] == [[str(RUNS)]]  # tables after the text files, as the readers read
    spec = fd.EvalSpec(fd.Source.of(qrels, runs, "tag"))
    opened: list[str] = []
    real = fde.fetch_one
    monkeypatch.setattr(fde, "fetch_one", lambda x: opened.append(x) or real(x))
    block = fde._eval_block("t-eval-test", spec, [str(files[4]), str(files[5])], ["map"], {}, 1)
    assert opened == [str(qrels), str(files[4]), str(files[5])]
    assert block["run_id"].unique(maintain_order=True).to_list() == ["gen4", "gen5"]
    whole = evaluate(qrels, runs, ["map"])
    same_bits(block, whole.filter(pl.col("run_id").is_in(["gen4", "gen5"])))


# --------------------------------------------------------------------------- studies


@pytest.mark.parametrize("block", [1, 3, None])
def test_subsample_study_identical_whatever_the_split(client, block) -> None:
    kw = {"rates": [0.1, 0.5, 1.0], "reps": 5, "seed": 11}
    local = studies.subsample(QRELS, RUNS, ["map", "P_10"], **kw)
    remote = fd.study("subsample", QRELS, RUNS, ["map", "P_10"], client=client, block=block, **kw)
    same_study(local, remote)


def test_pool_depth_and_leave_out_identical(client) -> None:
    local = studies.pool_depth(QRELS, RUNS, "ndcg", depths=[1, 5, 20], seed=2)
    same_study(
        local, fd.study("pool-depth", QRELS, RUNS, "ndcg", client=client, depths=[1, 5, 20], seed=2)
    )
    groups = {f"sample{i}": f"g{i % 3}" for i in range(1, 9)}
    for kw in (
        {"rates": [0.25, 0.5], "reps": 3},
        {"groups": groups},
        {"groups": groups, "rates": [0.4], "reps": 4},
    ):
        local = studies.leave_out(QRELS, RUNS, "map", depth=20, seed=4, **kw)
        remote = fd.study(
            "leave-out", QRELS, RUNS, "map", client=client, depth=20, seed=4, block=2, **kw
        )
        same_study(local, remote)


def test_parquet_archive_by_url(client, tmp_path) -> None:
    local = studies.subsample(QRELS, RUNS, "map", rates=[0.3], reps=3, seed=1)
    remote = fd.study(
        "subsample",
        QRELS.as_uri(),
        RUNS.as_uri(),
        "map",
        client=client,
        rates=[0.3],
        reps=3,
        seed=1,
    )
    same_study(local, remote)


class FailOn:
    """Scores like AdhocScorer, but raises on the variant whose kept judgments hash to ``bad``."""

    def __init__(
        self, measures: list[str], bad: bytes, sleep: float = 0.0, fail_after: float = 0.0
    ) -> None:
        self.inner = var.AdhocScorer(measures)
        self.names = self.inner.names
        self.bad = bad
        self.sleep = sleep
        self.fail_after = fail_after

    def __call__(self, enc):
        time.sleep(self.sleep)
        if enc.qr_rows.tobytes() == self.bad:
            time.sleep(self.fail_after)  # the other units finish meanwhile
            msg = "simulated failure"
            raise RuntimeError(msg)
        return self.inner(enc)


@pytest.fixture
def by_value():
    import cloudpickle

    mod = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(mod)
    yield
    cloudpickle.unregister_pickle_by_value(mod)


def test_interrupted_study_resumes_keeping_finished_work(client, tmp_path, by_value) -> None:
    from fasteval.engine import prepare

    kw = {"rates": [0.2, 1.0], "reps": 6, "seed": 8}
    prep = prepare(QRELS, RUNS)
    rng = st.unit_rng(8, "subsample", round(0.2 * 1_000_000), 4)
    bad = var.apply_mask(prep.enc, var.subsample_mask(prep.enc, 0.2, rng)).qr_rows.tobytes()
    out = tmp_path / "study"
    with pytest.raises(RuntimeError, match="simulated failure"):
        fd.study(
            "subsample",
            QRELS,
            RUNS,
            client=client,
            scorer=FailOn(["map"], bad),
            out_dir=out,
            block=1,
            retries=0,
            **kw,
        )
    assert (out / "setting=1.parquet").exists()  # the finished setting is kept
    assert not (out / "setting=0.2.parquet").exists()
    parts = sorted(p.name for p in out.glob("parts/setting=0.2/*.parquet"))
    assert parts == [f"reps={r:06d}-{r + 1:06d}.parquet" for r in (0, 1, 2, 3, 5)]
    done = out / "setting=1.parquet"
    mtime = done.stat().st_mtime_ns
    local = studies.subsample(QRELS, RUNS, ["map"], **kw)
    # resume on the cluster: finished settings and blocks are reused, the rest computed
    remote = fd.study("subsample", QRELS, RUNS, ["map"], client=client, out_dir=out, block=2, **kw)
    same_study(local, remote)
    assert done.stat().st_mtime_ns == mtime
    assert not (out / "parts").exists()
    # and the folder is the local path's: a local resume loads it and agrees
    again = studies.subsample(QRELS, RUNS, ["map"], out_dir=out, **kw)
    same_study(local, again)


def test_local_study_folder_resumes_on_the_cluster(client, tmp_path) -> None:
    kw = {"rates": [0.3, 0.7], "reps": 3, "seed": 5}
    out = tmp_path / "s"
    local = studies.subsample(QRELS, RUNS, ["map"], out_dir=out, **kw)
    (out / "setting=0.7.parquet").unlink()
    remote = fd.study("subsample", QRELS, RUNS, ["map"], client=client, out_dir=out, **kw)
    same_study(local, remote)
    with pytest.raises(ParameterError, match="different study"):
        fd.study(
            "subsample",
            QRELS,
            RUNS,
            ["map"],
            client=client,
            out_dir=out,
            rates=[0.3],
            reps=3,
            seed=5,
        )


# --------------------------------------------------------------------------- infodiff and eval


@pytest.mark.parametrize("block", [1, 5, None])
def test_information_difference_identical(client, block) -> None:
    local = information_difference(QRELS, RUNS)
    remote = fd.information_difference(QRELS, RUNS, client=client, block=block)
    same_bits(local, remote)
    pairs = [("sample3", "sample1"), ("sample2", "sample8"), ("sample1", "sample1")]
    same_bits(
        information_difference(QRELS, RUNS, pairs=pairs),
        fd.information_difference(QRELS, RUNS, pairs, client=client, block=block),
    )


def test_infodiff_cli_identical(client, textdata) -> None:
    qrels, runs = textdata
    address = client.scheduler.address
    for extra in ([], ["--bin-by", "map", "--bins", "3"], ["--top", "5"]):
        args = ["infodiff", str(qrels), str(runs), "--format", "csv", *extra]
        a = CliRunner().invoke(main, args)
        b = CliRunner().invoke(main, [*args, "--cluster", address])
        assert a.exit_code == 0, a.output
        assert b.exit_code == 0, b.output
        assert a.output == b.output


@pytest.mark.parametrize(
    "kw",
    [
        {"measures": None},
        {"measures": ["map", "ndcg_cut.10", "P.5,10", "RIC"], "block": 2},
        {"measures": ["official"], "complete": True, "block": 1},
        {"measures": ["official"], "compat": 10, "complete": True, "block": 3},
        {"measures": ["map", "bpref"], "per_query": False, "relevance_level": 2},
    ],
)
def test_evaluate_identical(client, textdata, kw) -> None:
    qrels, runs = textdata
    kw = dict(kw)
    block = kw.pop("block", None)
    measures = kw.pop("measures")
    local = evaluate(qrels, runs, measures, **kw)
    remote = fd.evaluate(qrels, runs, measures, client=client, block=block, **kw)
    same_bits(local, remote)
    if block == 1:  # a Parquet archive (by URL) gives the same table too
        same_bits(
            evaluate(QRELS, RUNS, measures, **kw),
            fd.evaluate(QRELS.as_uri(), RUNS.as_uri(), measures, client=client, block=3, **kw),
        )


@pytest.mark.slow
def test_eval_and_study_cli_identical(client, textdata, tmp_path, monkeypatch) -> None:
    qrels, runs = textdata
    address = client.scheduler.address
    args = ["eval", str(qrels), str(runs), "-m", "official", "-q", "--run-id", "filename"]
    a = CliRunner().invoke(main, args)
    b = CliRunner().invoke(main, [*args, "--cluster", address])
    assert a.exit_code == 0, a.output
    assert a.output == b.output
    bad = CliRunner().invoke(main, [*args[:3], "-m", "alpha_nDCG@20", "--cluster", address])
    assert bad.exit_code == 1
    assert "ad-hoc measures only" in bad.output
    study = ["study", "subsample", str(QRELS), str(RUNS), "-m", "map", "--rates", "0.2,0.6"]
    study += ["--reps", "3", "--no-plot"]
    a = CliRunner().invoke(main, [*study, "-o", str(tmp_path / "a")])
    monkeypatch.setenv("FASTEVAL_CLUSTER", address)  # the environment variable works too
    b = CliRunner().invoke(main, [*study, "-o", str(tmp_path / "b")])
    assert a.exit_code == 0, a.output
    assert b.exit_code == 0, b.output
    for f in ("summary.parquet", "full.parquet", "setting=0.2.parquet", "setting=0.6.parquet"):
        same_bits(pl.read_parquet(tmp_path / "a" / f), pl.read_parquet(tmp_path / "b" / f))
    monkeypatch.setenv("FASTEVAL_CLUSTER", "tcp://127.0.0.1:9")  # nothing listens there
    c = CliRunner().invoke(main, [*study, "-o", str(tmp_path / "c")])
    assert c.exit_code == 1
    assert "cannot connect" in c.output


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_subsample_identical(client, trec8_dir) -> None:
    qrels, runs = trec8_dir / "qrels.trec8.adhoc.gz", trec8_dir / "runs"
    kw = {"rates": [0.1, 0.5], "reps": 2, "seed": 3}
    local = studies.subsample(qrels, runs, ["map", "P_10"], **kw)
    remote = fd.study("subsample", qrels, runs, ["map", "P_10"], client=client, block=1, **kw)
    same_study(local, remote)


# ------------------------------------------------- failure (last: it kills a worker)


def test_worker_killed_mid_study(client, tmp_path, by_value) -> None:
    kw = {"rates": [0.3, 0.6], "reps": 6, "seed": 21}
    local = studies.subsample(QRELS, RUNS, ["map"], **kw)
    out = tmp_path / "k"
    slow = FailOn(["map"], b"never", sleep=0.25)
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["res"] = fd.study(
                "subsample", QRELS, RUNS, client=client, scorer=slow, out_dir=out, block=1, **kw
            )
        except BaseException as e:  # pragma: no cover - reported below
            result["err"] = e

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(out.glob("parts/*/*.parquet"))) < 2:
        time.sleep(0.05)
    assert t.is_alive(), "the study finished before a worker could be killed"
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    t.join(120)
    assert not t.is_alive()
    assert "err" not in result, result.get("err")
    same_study(local, result["res"])
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker
    assert victim not in client.run(os.getpid).values()


def test_cluster_refuses_judgment_group_qrels(tmp_path):
    """`eval -R qrels_jg --cluster` is a clear one-line error, not a worker traceback."""
    from click.testing import CliRunner

    from fasteval.cli import main

    q = tmp_path / "q.jg"
    q.write_text("1 0 d1 1\n")
    r = tmp_path / "r.run"
    r.write_text("1 Q0 d1 1 1.0 x\n")
    res = CliRunner().invoke(
        main, ["eval", "-R", "qrels_jg", str(q), str(r), "--cluster", "local:1"]
    )
    assert res.exit_code == 1
    assert "--cluster reads plain qrels only" in res.output
