"""Qrels variants as masks: exactness against re-evaluating a written-out qrels file."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fasteval.analysis import variants as var
from fasteval.api import evaluate
from fasteval.engine import compute, prepare, to_frame
from fasteval.measures.parser import parse_measures
from tests.conftest import SAMPLE_DATA as DATA

MEASURES = ["map", "P_10", "ndcg", "bpref", "Rprec", "recip_rank", "num_rel", "infAP"]


def _same_rows(got: pl.DataFrame, want: pl.DataFrame) -> bool:
    """The same rows, whatever the measures' order (evaluate() returns the order asked,
    the study's frames trec_eval's)."""
    keys = ["run_id", "query_id", "measure"]
    return got.sort(keys).equals(want.sort(keys)) and got.height == want.height > 0


@pytest.fixture(scope="module")
def prep():
    return prepare(DATA / "sample.qrels", DATA / "sample_runs.parquet")


def test_full_mask_reproduces_scores_exactly(prep) -> None:
    mset = parse_measures(MEASURES)
    full = compute(prep.enc, mset)
    enc2 = var.apply_mask(prep.enc, np.ones(prep.enc.qr_rel.shape[0], bool))
    ev = compute(enc2, mset)
    assert np.array_equal(ev.values, full.values)
    assert np.array_equal(ev.summary, full.summary)
    rng = np.random.default_rng(0)
    keep = var.subsample_mask(prep.enc, 1.0, rng)
    assert keep.all()


def _write_qrels(df, path: Path) -> Path:
    lines = [f"{q} 0 {d} {r}" for q, d, r in df.iter_rows()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("seed", range(12))
def test_mask_equals_written_qrels(prep, tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    enc = prep.enc
    kind = seed % 3
    if kind == 0:
        keep = var.subsample_mask(enc, float(rng.choice([0.05, 0.2, 0.5, 0.9])), rng)
    elif kind == 1:
        keep = var.pool_depth_mask(enc, int(rng.integers(1, 30)))
    else:  # arbitrary masks, some queries lose every judgment
        keep = rng.random(enc.qr_rel.shape[0]) < 0.3
        q = var.judgment_query(enc)
        keep[np.isin(q, rng.choice(q, 3))] = False
    assert 0 < keep.sum() < keep.shape[0]
    path = _write_qrels(var.variant_qrels(prep.qrels, enc, keep), tmp_path / "v.qrels")
    want = evaluate(path, DATA / "sample_runs.parquet", MEASURES)
    got = to_frame(compute(var.apply_mask(enc, keep), parse_measures(MEASURES)))
    assert _same_rows(got, want)


def test_subsample_rule_hand_checked(prep) -> None:
    enc = prep.enc
    q = var.judgment_query(enc)
    assert np.unique(q).size > 1
    for rate in (0.01, 0.1, 0.33, 0.5, 0.99):
        keep = var.subsample_mask(enc, rate, np.random.default_rng(7))
        for qi in np.unique(q):
            g = enc.qr_rel[q == qi]
            k = keep[q == qi]
            n_rel = int((g >= 1).sum())
            n_non = int((g < 1).sum())
            assert int(k[g >= 1].sum()) == min(n_rel, max(1, math.ceil(rate * n_rel)))
            assert int(k[g < 1].sum()) == min(n_non, max(10, math.ceil(rate * n_non)))


def test_subsample_reference_same_keys(prep) -> None:
    """The kept set is 'shuffle (sort by the drawn keys), keep the first n' per query and class."""
    enc = prep.enc
    keep = var.subsample_mask(enc, 0.3, np.random.default_rng(11))
    key = np.random.default_rng(11).random(enc.qr_rel.shape[0])
    want = np.zeros_like(keep)
    for qi in range(enc.qr_off.shape[0] - 1):
        a, b = enc.qr_off[qi], enc.qr_off[qi + 1]
        for is_rel, floor_ in ((True, 1), (False, 10)):
            idx = [j for j in range(a, b) if (enc.qr_rel[j] >= 1) == is_rel]
            idx.sort(key=lambda j: key[j])
            n = min(len(idx), max(floor_, math.ceil(0.3 * len(idx))))
            for j in idx[:n]:
                want[j] = True
    assert np.array_equal(keep, want)


def _tiny(tmp_path: Path):
    qrels = tmp_path / "q"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 d 0\n1 0 e 1\n2 0 a 1\n2 0 x 0\n2 0 z 1\n")
    rows = [
        ("1", "a", 3, "A"), ("1", "b", 2, "A"), ("1", "c", 1, "A"),
        ("1", "d", 3, "B"), ("1", "a", 2, "B"),
        ("1", "e", 3, "C"),
        ("2", "x", 3, "A"), ("2", "a", 2, "A"),
        ("2", "z", 3, "C"),
    ]  # fmt: skip
    runs = pl.DataFrame(
        {
            "run_id": [r[3] for r in rows],
            "query_id": [r[0] for r in rows],
            "doc_id": [r[1] for r in rows],
            "score": [float(r[2]) for r in rows],
        }
    )
    return prepare(qrels, runs)


def _kept_docs(p, keep) -> set[tuple[str, str]]:
    df = var.variant_qrels(p.qrels, p.enc, keep)
    return set(zip(df["query_id"], df["doc_id"], strict=True))


def test_pool_depth_hand_checked(tmp_path: Path) -> None:
    p = _tiny(tmp_path)
    assert _kept_docs(p, var.pool_depth_mask(p.enc, 1)) == {
        ("1", "a"), ("1", "d"), ("1", "e"), ("2", "x"), ("2", "z")
    }  # fmt: skip
    assert _kept_docs(p, var.pool_depth_mask(p.enc, 2)) == {
        ("1", "a"), ("1", "b"), ("1", "d"), ("1", "e"), ("2", "x"), ("2", "a"), ("2", "z")
    }  # fmt: skip
    only_b = np.array([n == "B" for n in p.enc.run_names])
    assert _kept_docs(p, var.pool_depth_mask(p.enc, 1, pool_runs=only_b)) == {("1", "d")}


def test_leave_out_hand_checked(tmp_path: Path) -> None:
    p = _tiny(tmp_path)
    names = p.enc.run_names
    out_a = np.array([n == "A" for n in names])
    # depth 2: A alone pooled b (q1) and x (q2... also z? no, z is C's); a is shared with B (q1)
    kept = _kept_docs(p, var.leave_out_mask(p.enc, out_a, depth=2))
    assert kept == {("1", "a"), ("1", "c"), ("1", "d"), ("1", "e"), ("2", "z")}
    # c (rank 3 in A) is not in the depth-2 pool, so it is kept; at depth 3 it goes too
    kept3 = _kept_docs(p, var.leave_out_mask(p.enc, out_a, depth=3))
    assert ("1", "c") not in kept3
    out_c = np.array([n == "C" for n in names])
    kept_c = _kept_docs(p, var.leave_out_mask(p.enc, out_c, depth=1))
    assert kept_c == {("1", "a"), ("1", "b"), ("1", "c"), ("1", "d"), ("2", "a"), ("2", "x")}


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_mask_equals_written_qrels(tmp_path: Path, trec8_dir: Path) -> None:
    t8 = trec8_dir
    runs = sorted((t8 / "runs").iterdir())[:12]
    p = prepare(t8 / "qrels.trec8.adhoc.gz", runs)
    mset = parse_measures(["map", "ndcg", "P_10", "bpref"])
    for seed in range(3):
        keep = var.subsample_mask(p.enc, 0.1 + 0.3 * seed, np.random.default_rng(seed))
        path = _write_qrels(var.variant_qrels(p.qrels, p.enc, keep), tmp_path / "v")
        want = evaluate(path, runs, ["map", "ndcg", "P_10", "bpref"])
        got = to_frame(compute(var.apply_mask(p.enc, keep), mset))
        assert _same_rows(got, want)
