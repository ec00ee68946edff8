"""The compact prepared form of studies (issue 20) against the full ``prepare`` path.

``prepare_compact`` reads the runs a batch of whole runs at a time and keeps
only the evaluated positions' grades and judgment indices in narrow dtypes.
Every array must equal the compaction of the unbatched ``prepare(...).enc``,
and every study table (units, summary, full scores) must be bit for bit the
one the full ``Prepared`` gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from fasteval import studies
from fasteval.analysis import studies as st
from fasteval.analysis import variants as var
from fasteval.analysis.study_scorers import HSAScorer
from fasteval.engine import compact as cp
from fasteval.engine import prepare
from fasteval.engine.compact import Compact, prepare_compact
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError
from fasteval.io import archive as io_archive
from fasteval.io import batches as io_batches
from fasteval.io.batches import BATCH_ROWS_ENV, plan_batches


def gen_data(
    d: Path, *, seed: int = 0, n_runs: int = 7, grades: tuple[int, ...] = (-1, 0, 0, 1, 2)
) -> tuple[Path, Path]:
    """Text runs with ties, a query outside the qrels, queries some runs miss."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(9)] + ["7", "10"]  # byte order differs from numeric order
    with (d / "qrels").open("w") as f:
        for q in [*qids[:-2], "10"]:
            for k in range(int(rng.integers(15, 40))):
                f.write(f"{q} 0 d{k} {int(rng.choice(grades))}\n")
    runs = d / "runs"
    runs.mkdir()
    for r in range(n_runs):
        with (runs / f"r{r}.txt").open("w") as f:
            for q in rng.permutation(qids)[: int(rng.integers(5, len(qids) + 1))]:
                docs = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
                for i, doc in enumerate(docs):
                    f.write(f"{q} Q0 d{doc} {i} {rng.integers(0, 4) * 0.5} run{r}\n")
    return d / "qrels", runs


def same_encoded(a: Compact, b: Compact) -> None:
    for k, v in vars(a.enc).items():
        if k in ("prepared", "qp"):  # the prepared qrels they were encoded against
            continue
        w = getattr(b.enc, k)
        if isinstance(v, np.ndarray):
            assert v.dtype == w.dtype, k
            assert np.array_equal(v, w), k
        else:
            assert v == w, k
    if a.scores is None:
        assert b.scores is None
    else:
        assert b.scores is not None
        assert np.array_equal(a.scores.view(np.uint64), b.scores.view(np.uint64))


def same_study(a: st.StudyResult, b: st.StudyResult) -> None:
    for x, y in zip(a, b, strict=True):
        assert x.equals(y)  # floats bit for bit (NaN == NaN in equals)


@pytest.fixture
def no_fallback(monkeypatch):
    """Fail if prepare_compact falls back to the unbatched path."""

    def boom(*a, **k):
        raise AssertionError("fell back to the unbatched prepare")

    monkeypatch.setattr(cp, "prepare", boom)


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    return gen_data(tmp_path)


@pytest.mark.parametrize("batch_rows", [1, 150, 400])
@pytest.mark.parametrize("kw", [{}, {"complete": True}, {"compat": 10}, {"scores": True}])
def test_batched_equals_compacted_prepare(data, batch_rows, kw) -> None:
    qrels, runs = data
    assert len(plan_batches([runs], batch_rows, split=False)) > 1
    scores = kw.pop("scores", False)
    full = prepare(qrels, runs, **kw)
    a = Compact.of(full, scores=scores)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cp, "prepare", None)  # the batched path only
        b = prepare_compact(qrels, runs, batch_rows=batch_rows, scores=scores, **kw)
    same_encoded(a, b)
    assert b.enc.rel.dtype == np.int8
    assert b.enc.jdx.dtype == np.int32
    # nothing but the evaluated groups' positions, in their order
    lens = full.enc.ends - full.enc.starts
    assert b.enc.rel.shape[0] == int(lens.sum())
    assert np.array_equal(b.enc.ends - b.enc.starts, lens)
    wide = b.encoded()
    pos = np.concatenate(
        [np.arange(s, e) for s, e in zip(full.enc.starts, full.enc.ends, strict=True)]
    )
    assert np.array_equal(wide.rel, full.enc.rel[pos])
    assert wide.rel.dtype == np.int32
    assert wide.jdx.dtype == np.int64
    if scores:
        assert b.scores is not None
        assert np.array_equal(b.scores, full.runs.score[full.enc.row[pos]])
    assert (
        b.nbytes
        < sum(v.nbytes for v in vars(full.enc).values() if isinstance(v, np.ndarray))
        + len(full.runs) * 8
    )


def test_wider_grades_get_wider_types(tmp_path) -> None:
    for grades, dtype in (((0, 1, 300), np.int16), ((0, 1, 70000), np.int32)):
        d = tmp_path / str(dtype.__name__)
        d.mkdir()
        qrels, runs = gen_data(d, grades=grades)
        c = prepare_compact(qrels, runs, batch_rows=100)
        assert c.enc.rel.dtype == dtype
        same_encoded(Compact.of(prepare(qrels, runs)), c)
        kw = {"rates": [0.4], "reps": 2, "measures": ["map", "ndcg", "P_5"]}
        same_study(
            studies.subsample(prepared=prepare(qrels, runs), **kw),
            studies.subsample(prepared=c, **kw),
        )


def test_masker_on_compact_equals_apply_mask(data) -> None:
    qrels, runs = data
    full = prepare(qrels, runs)
    c = prepare_compact(qrels, runs, batch_rows=100)
    pos = np.concatenate(
        [np.arange(s, e) for s, e in zip(full.enc.starts, full.enc.ends, strict=True)]
    )
    rng = np.random.default_rng(3)
    for with_jdx in (True, False):
        m = var.Masker(c.enc, with_jdx=with_jdx)
        assert not m.wide
        assert var.Masker(full.enc).full() is full.enc
        for _ in range(4):
            keep = rng.random(full.enc.qr_rel.shape[0]) < 0.5
            want = var.apply_mask(full.enc, keep)
            got = m(keep)
            assert got.rel.dtype == np.int32
            assert np.array_equal(got.rel, want.rel[pos])
            if with_jdx:
                assert got.jdx.dtype == np.int64
                assert np.array_equal(got.jdx, want.jdx[pos])
            for k in ("qr_off", "qr_rel", "qr_rows", "in_qrels", "group_run", "group_q"):
                assert np.array_equal(getattr(got, k), getattr(want, k)), k


@pytest.mark.parametrize(
    "measures",
    [["map", "ndcg", "P_10"], ["map", "RIC", "HSA", "DO"], ["bpref", "infAP", "recip_rank"]],
)
def test_study_tables_equal_to_the_full_path(data, measures, monkeypatch, no_fallback) -> None:
    qrels, runs = data
    old = {
        "subsample": studies.subsample(
            prepared=prepare(qrels, runs), measures=measures, rates=[0.2, 0.7], reps=3, seed=4
        ),
        "pool-depth": studies.pool_depth(
            prepared=prepare(qrels, runs), measures=measures, depths=[1, 3, 10]
        ),
        "leave-out": studies.leave_out(
            prepared=prepare(qrels, runs), measures=measures, rates=[0.3], reps=3, depth=5
        ),
    }
    monkeypatch.setenv("FASTEVAL_BATCH_ROWS", "120")  # several batches
    assert len(plan_batches([runs], 120, split=False)) > 2
    new = {  # qrels and runs given: the study reads the compact form itself
        "subsample": studies.subsample(
            qrels, runs, measures=measures, rates=[0.2, 0.7], reps=3, seed=4
        ),
        "pool-depth": studies.pool_depth(qrels, runs, measures=measures, depths=[1, 3, 10]),
        "leave-out": studies.leave_out(
            qrels, runs, measures=measures, rates=[0.3], reps=3, depth=5
        ),
    }
    for kind, result in old.items():
        same_study(result, new[kind])
    assert old["subsample"].units.height > 0


def test_hsa_over_scores_needs_the_scores(data) -> None:
    qrels, runs = data
    c = prepare_compact(qrels, runs, batch_rows=100)
    with pytest.raises(ParameterError, match="scores=True"):
        HSAScorer(c, values="score")
    kw = {"rates": [0.5], "reps": 2}
    with_scores = prepare_compact(qrels, runs, batch_rows=100, scores=True)
    old = studies.subsample(
        scorer=HSAScorer(prepare(qrels, runs), names=("HSA", "DO"), values="score"), **kw
    )
    new = studies.subsample(
        scorer=HSAScorer(with_scores, names=("HSA", "DO"), values="score"), **kw
    )
    same_study(old, new)
    assert np.isfinite(new.full["value"].to_numpy()).any()


def errors_of(fn) -> str:
    with pytest.raises((InputFormatError, DataMismatchError)) as e:
        fn()
    return str(e.value)


def test_errors_are_those_of_the_unbatched_path(tmp_path) -> None:
    qrels, runs = gen_data(tmp_path)
    # a repeated document in the last run file
    last = runs / "r6.txt"
    lines = last.read_text().splitlines()
    last.write_text("\n".join([*lines, lines[0]]) + "\n")
    msg = errors_of(lambda: prepare(qrels, runs))
    assert "appears more than once" in msg
    assert msg == errors_of(lambda: prepare_compact(qrels, runs, batch_rows=100))
    # keep-first then works batch by batch, as unbatched
    same_encoded(
        Compact.of(prepare(qrels, runs, on_duplicate="first")),
        prepare_compact(qrels, runs, batch_rows=100, on_duplicate="first"),
    )
    last.write_text("\n".join(lines) + "\n")
    # a run that shares no query with the qrels
    (runs / "r7.txt").write_text("zz Q0 d1 0 1.0 lonely\nzz Q0 d2 1 0.5 lonely\n")
    msg = errors_of(lambda: prepare(qrels, runs))
    assert "share no query" in msg
    assert msg == errors_of(lambda: prepare_compact(qrels, runs, batch_rows=100))
    (runs / "r7.txt").unlink()
    # one run id in two files that land in different batches
    (runs / "r9.txt").write_text((runs / "r0.txt").read_text())
    msg = errors_of(lambda: prepare(qrels, runs))
    assert msg == errors_of(lambda: prepare_compact(qrels, runs, batch_rows=100))


def test_a_frame_and_files_together(data, no_fallback) -> None:
    qrels, runs = data
    files = sorted(runs.iterdir())
    frame = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2"],
            "doc_id": ["d1", "d2", "d1"],
            "score": [2.0, 1.0, 1.0],
            "run_id": ["frame", "frame", "frame"],
        }
    )
    items = [frame, *files]
    same_encoded(Compact.of(prepare(qrels, items)), prepare_compact(qrels, items, batch_rows=100))


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_runs_compact_study_equal(no_fallback, monkeypatch, trec8_dir) -> None:
    qrels = trec8_dir / "qrels.trec8.adhoc.gz"
    runs = sorted((trec8_dir / "runs").iterdir())[:8]
    full = prepare(qrels, runs)
    c = prepare_compact(qrels, runs, batch_rows=60_000)  # about one run per batch
    same_encoded(Compact.of(full), c)
    held = (full.runs.doc.buf, full.runs.doc.starts, full.runs.doc.ends, full.runs.score)
    held += (full.enc.rel, full.enc.row, full.enc.jdx)
    assert c.nbytes * 8 < sum(a.nbytes for a in held)
    kw = {"measures": ["map", "ndcg", "P_10"], "rates": [0.1, 0.5], "reps": 2, "seed": 1}
    old = studies.subsample(prepared=full, **kw)
    monkeypatch.setenv("FASTEVAL_BATCH_ROWS", "60000")
    same_study(old, studies.subsample(qrels, runs, **kw))
    same_study(
        studies.pool_depth(prepared=full, measures=["map", "RIC"], depths=[5, 20]),
        studies.pool_depth(prepared=c, measures=["map", "RIC"], depths=[5, 20]),
    )


@pytest.mark.parametrize("scores", [False, True])
def test_an_archive_is_compacted_piece_by_piece(tmp_path: Path, scores: bool) -> None:
    from click.testing import CliRunner

    from fasteval.cli import main

    qrels, runs = gen_data(tmp_path, seed=4)
    archive = tmp_path / "a.parquet"
    # small row groups: a run spans several pieces
    res = CliRunner().invoke(
        main, ["ingest", str(runs), "-o", str(archive)], env={BATCH_ROWS_ENV: "60"}
    )
    assert res.exit_code == 0, res.output
    a = Compact.of(prepare(qrels, archive), scores=scores)
    pieces: list[list[int]] = []
    checks: set[Any] = set()
    real = io_batches.read_row_groups

    def spy(path: Any, groups: list[int], columns: Any = None, verified: Any = None) -> Any:
        assert verified is not None  # the digest is checked: the pages are not, twice
        pieces.append(groups)
        checks.add(verified)
        return real(path, groups, columns, verified=verified)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cp, "prepare", None)  # the batched path only
        mp.setattr(io_batches, "run_columns", None)  # never the whole archive at once
        mp.setattr(io_archive, "read_archive", None)
        mp.setattr(io_batches, "read_row_groups", spy)  # the reader evaluation uses
        b = prepare_compact(qrels, archive, batch_rows=50, scores=scores)
    assert len(pieces) > 2
    assert len(checks) == 1 and checks.pop().matched  # checked once, joined before the end
    same_encoded(a, b)
    if scores:
        assert b.scores is not None and a.scores is not None
        assert np.array_equal(a.scores, b.scores)
