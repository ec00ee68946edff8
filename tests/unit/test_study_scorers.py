"""Studies with diversity, RIC and HSA/DO scorers: exact at p = 1, mask path = written-out qrels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from fasteval.analysis import studies
from fasteval.analysis import study_scorers as ss
from fasteval.analysis import variants as var
from fasteval.analysis.hsa import histogram_analysis
from fasteval.analysis.information import ric
from fasteval.cli import main
from fasteval.engine import prepare
from fasteval.engine.diversity import diversity_evaluate, prepare_diversity
from fasteval.errors import MeasureError, ParameterError
from tests.conftest import SAMPLE_DATA as DATA
from tests.conftest import shared_path

QRELS = DATA / "sample.qrels"
RUNS = DATA / "sample_runs.parquet"
DIV_MEASURES = ["alpha_nDCG@20", "alpha_nDCG@5", "ERR_IA@20", "nERR_IA@10", "NRBP", "nNRBP",
                "MAP_IA", "P_IA@10", "strec@20", "alpha_DCG@10"]  # fmt: skip


@pytest.fixture(scope="module")
def prep():
    return prepare(QRELS, RUNS)


@pytest.fixture(scope="module")
def div_qrels(tmp_path_factory) -> Path:
    """Diversity qrels made from the sample qrels: 1-4 subtopics per relevant document."""
    rng = np.random.default_rng(42)
    lines = []
    for line in QRELS.read_text().splitlines():
        q, _, d, g = line.split()
        n_sub = 3 + int(q) % 3
        if int(g) >= 1:
            subs = rng.choice(np.arange(1, n_sub + 1), int(rng.integers(1, n_sub + 1)), False)
        else:
            subs = np.array([], int)
        for s in range(1, n_sub + 1):
            lines.append(f"{q} {s} {d} {1 if s in subs else 0}")
    p = tmp_path_factory.mktemp("div") / "div.qrels"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture(scope="module")
def div_scorer(div_qrels: Path) -> ss.DiversityScorer:
    return ss.DiversityScorer(prepare_diversity(div_qrels, RUNS), DIV_MEASURES)


def div_qrels_docs(path: Path) -> int:
    """Judged (query, document) pairs of a diversity qrels file."""
    return len({tuple(line.split()[::2]) for line in path.read_text().splitlines()})


def _masks(enc, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    kind = seed % 4
    if kind == 0:
        return var.subsample_mask(enc, float(rng.choice([0.05, 0.2, 0.5, 0.9])), rng)
    if kind == 1:
        return var.pool_depth_mask(enc, int(rng.integers(1, 30)))
    if kind == 2:
        left = rng.random(len(enc.run_names)) < 0.4
        return var.leave_out_mask(enc, left, depth=int(rng.integers(5, 50)))
    keep = rng.random(enc.qr_rel.shape[0]) < 0.3  # some queries lose every judgment
    q = var.judgment_query(enc)
    keep[np.isin(q, rng.choice(q, 3))] = False
    return keep


def _write_adhoc(df: pl.DataFrame, path: Path) -> Path:
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in df.iter_rows()))
    return path


def _summary(df: pl.DataFrame, names: list[str], runs: list[str]) -> np.ndarray:
    """``value`` of the ``all`` rows as (runs, names) (NaN where absent)."""
    out = np.full((len(runs), len(names)), np.nan)
    ri = {r: i for i, r in enumerate(runs)}
    ni = {n: i for i, n in enumerate(names)}
    for r, m, v in df.select("run_id", "measure", "value").iter_rows():
        out[ri[r], ni[m]] = v
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical, NaN where NaN."""
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# --------------------------------------------------------------------------- diversity


def test_diversity_full_mask_is_exact(div_scorer, div_qrels: Path) -> None:
    enc = div_scorer.enc
    full = div_scorer(enc)
    want = diversity_evaluate(div_qrels, RUNS, DIV_MEASURES, per_query=False)
    assert _same(full, _summary(want, div_scorer.names, enc.run_names))
    ones = np.ones(enc.qr_rel.shape[0], bool)
    assert _same(div_scorer(var.apply_mask(enc, ones)), full)
    assert _same(div_scorer(var.Masker(enc, with_jdx=False)(ones)), full)
    assert var.subsample_mask(enc, 1.0, np.random.default_rng(0)).all()


@pytest.mark.parametrize("seed", range(8))
def test_diversity_mask_equals_written_qrels(div_scorer, tmp_path: Path, seed: int) -> None:
    enc = div_scorer.enc
    keep = _masks(enc, seed)
    assert 0 < keep.sum() < keep.shape[0]
    rows = div_scorer.variant_qrels(keep)
    # whole documents go: a kept document keeps every subtopic row
    n_sub = rows.group_by("query_id", "doc_id").len()["len"]
    assert (n_sub >= 3).all()
    path = tmp_path / "v.qrels"
    path.write_text("".join(f"{q} {s} {d} {r}\n" for q, s, d, r in rows.iter_rows()))
    want = diversity_evaluate(path, RUNS, DIV_MEASURES, per_query=False)
    want_a = _summary(want, div_scorer.names, enc.run_names)
    got = div_scorer(var.apply_mask(enc, keep))
    assert _same(got, want_a)
    assert _same(div_scorer(var.Masker(enc, with_jdx=False)(keep)), want_a)


def test_diversity_mask_drops_subtopics(div_scorer) -> None:
    """A subtopic whose relevant documents are all dropped no longer counts (m shrinks)."""
    enc = div_scorer.enc
    keep = var.subsample_mask(enc, 0.05, np.random.default_rng(3))
    v = div_scorer.variant(var.apply_mask(enc, keep))
    full = div_scorer.prep
    assert (v.m_q <= full.m_q).all() and v.m_q.sum() < full.m_q.sum()
    assert v.qd_off[-1] < full.qd_off[-1]
    assert v.nrel.sum() == v.rd_sub.shape[0]
    assert (np.diff(v.sub_off) == v.m_q).all()


def test_diversity_study(div_qrels: Path) -> None:
    res = studies.subsample(
        div_qrels, RUNS, ["alpha_nDCG@20", "ERR_IA@20"], rates=[0.2, 1.0], reps=3, seed=1
    )
    one = res.units.filter(pl.col("setting") == "1")
    assert (one.filter(pl.col("statistic") == "tau")["value"] == 1.0).all()
    assert (one.filter(pl.col("statistic") == "rmse")["value"] == 0.0).all()
    low = res.units.filter((pl.col("setting") == "0.2") & (pl.col("statistic") == "rmse"))
    assert (low["value"] > 0).all()
    want = diversity_evaluate(div_qrels, RUNS, ["alpha_nDCG@20", "ERR_IA@20"], per_query=False)
    got = res.full.join(want, on=["run_id", "measure"])
    assert got.height == want.height and (got["value"] == got["value_right"]).all()
    pd = studies.pool_depth(div_qrels, RUNS, "alpha_nDCG@20", depths=[1, 5])
    assert pd.summary.height > 0
    lo = studies.leave_out(div_qrels, RUNS, ["alpha_nDCG@20", "NRBP"], rates=[0.25], reps=3)
    tau = lo.units.filter(pl.col("statistic") == "tau")
    assert tau.height == 6 and tau["value"].is_between(-1.0, 1.0).all()
    # fewer judged documents than the full diversity qrels, never more
    assert (lo.units["judgments"] <= div_qrels_docs(div_qrels)).all()
    with pytest.raises(MeasureError, match="cannot mix"):
        studies.subsample(div_qrels, RUNS, ["alpha_nDCG@20", "map"], rates=[0.5], reps=1)


# --------------------------------------------------------------------------- RIC, HSA


def test_ric_and_hsa_full_mask_is_exact(prep) -> None:
    sc = ss.scorer_for(["RIC", "HSA", "DO"], prepared=prep)
    assert list(sc.names) == ["RIC", "HSA", "DO"]
    full = sc(prep.enc)
    want_ric = ric(QRELS, RUNS)
    assert _same(full[:, 0], want_ric["RIC"].to_numpy())
    h = histogram_analysis(QRELS, RUNS)
    assert _same(full[:, 1], h["hsa"].to_numpy()) and _same(full[:, 2], h["do"].to_numpy())
    ones = np.ones(prep.enc.qr_rel.shape[0], bool)
    assert _same(sc(var.apply_mask(prep.enc, ones)), full)
    assert _same(sc(var.Masker(prep.enc)(ones)), full)


@pytest.mark.parametrize("seed", range(8))
def test_ric_hsa_mask_equals_written_qrels(prep, tmp_path: Path, seed: int) -> None:
    enc = prep.enc
    keep = _masks(enc, seed)
    path = _write_adhoc(var.variant_qrels(prep.qrels, enc, keep), tmp_path / "v.qrels")
    sc = ss.scorer_for(["RIC", "HSA", "DO"], prepared=prep)
    got = sc(var.apply_mask(enc, keep))
    assert _same(sc(var.Masker(enc)(keep)), got)
    assert _same(got[:, 0], ric(path, RUNS)["RIC"].to_numpy())
    h = histogram_analysis(path, RUNS)
    assert _same(got[:, 1], h["hsa"].to_numpy()) and _same(got[:, 2], h["do"].to_numpy())
    pq = ss.HSAScorer(prep, names=["HSA"], values="score", pooled=False, bins=10)
    hq = histogram_analysis(path, RUNS, values="score", pooled=False, bins=10)
    want = hq.filter(pl.col("query_id") == "all")["hsa"].to_numpy()
    assert _same(pq(var.apply_mask(enc, keep))[:, 0], want)


def test_adhoc_masker_equals_apply_mask(prep) -> None:
    sc = var.AdhocScorer(["map", "ndcg", "P_10", "bpref", "num_rel_ret"])
    m = var.Masker(prep.enc, with_jdx=sc.uses_jdx)
    mj = var.Masker(prep.enc)
    for seed in range(6):
        keep = _masks(prep.enc, seed)
        want = var.apply_mask(prep.enc, keep)
        assert np.array_equal(sc(m(keep)), sc(want))
        got = mj(keep)
        assert np.array_equal(got.rel, want.rel) and np.array_equal(got.jdx, want.jdx)
        assert np.array_equal(got.qr_rows, want.qr_rows)


def test_combined_study_with_nan_and_lower_is_better(prep) -> None:
    res = studies.subsample(prepared=prep, measures=["map", "RIC", "HSA", "DO"], rates=[0.1, 1.0],
                            reps=2, seed=3)  # fmt: skip
    assert set(res.units["measure"].unique()) == {"map", "RIC", "HSA", "DO"}
    rank_stats = pl.col("statistic").is_in(["tau", "tau_ap"])
    one = res.units.filter((pl.col("setting") == "1") & rank_stats)
    assert (one["value"] == 1.0).all()  # DO negated for tau_ap: still exactly 1
    full_do = res.full.filter(pl.col("measure") == "DO")["value"].to_numpy()
    h = histogram_analysis(QRELS, RUNS)
    assert _same(full_do, h["do"].to_numpy())  # reported as is, not negated


def test_nan_scores_are_left_out() -> None:
    """Runs with a NaN score are skipped in that measure's comparison."""
    from fasteval.analysis.studies import Context, Setting, run_unit

    class Half:
        names = ("x",)
        uses_jdx = False

        def __call__(self, enc):
            v = np.arange(len(enc.run_names), dtype=float)
            v[0] = np.nan
            return v[:, None]

    p = prepare(QRELS, RUNS)
    full = Half()(p.enc)
    ctx = Context(p.enc, Half(), ["x"], full, "subsample")
    rows = run_unit(ctx, Setting("0.5", 0.5, 5, 0.5, 1), 0, 0)
    tau = [r["value"] for r in rows if r["statistic"] == "tau"]
    assert tau == [1.0]


def test_scorer_for_names(prep) -> None:
    adhoc, div, wants_ric, hist = ss.split_names(["map,ric", "hsa", "alpha-nDCG@20", "P@10"])
    assert adhoc == ["map", "P@10"] and div == ["alpha-nDCG@20"] and wants_ric
    assert hist == ["HSA"]
    assert isinstance(ss.scorer_for(["map"], prepared=prep), var.AdhocScorer)
    assert isinstance(ss.scorer_for(["RIC"], prepared=prep), ss.RICScorer)
    with pytest.raises(ParameterError, match="give qrels and runs"):
        ss.scorer_for(["RIC"])
    with pytest.raises(ParameterError, match="HSAScorer names"):
        ss.HSAScorer(prep, names=["map"])


def test_cli_ric_hsa_and_diversity(div_qrels: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = CliRunner().invoke(
        main,
        ["study", "subsample", str(QRELS), str(RUNS), "-m", "RIC", "-m", "HSA", "-m", "map",
         "--rates", "0.3,1", "--reps", "2", "-o", str(out), "--no-plot"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    s = pl.read_csv(out / "summary.csv")
    assert set(s["measure"]) == {"RIC", "HSA", "map"}
    d = CliRunner().invoke(
        main,
        ["study", "pool-depth", str(div_qrels), str(RUNS), "-m", "alpha_nDCG@20",
         "--depths", "2,10", "-o", str(tmp_path / "d")],
    )  # fmt: skip
    assert d.exit_code == 0, d.output
    assert (tmp_path / "d" / "tau.png").stat().st_size > 0
    bad = CliRunner().invoke(
        main,
        ["study", "subsample", str(div_qrels), str(RUNS), "-m", "alpha_nDCG@20", "-m", "map",
         "-o", str(tmp_path / "b")],
    )  # fmt: skip
    assert bad.exit_code == 1 and "cannot mix" in bad.output and "Traceback" not in bad.output


# --------------------------------------------------------------------------- real data


@pytest.mark.realdata
@pytest.mark.slow
def test_web2012_diversity_mask_equals_written_qrels(tmp_path: Path) -> None:
    qrels = shared_path("trec_web_2009_2014", "qrels_topics", "2012", "qrels-for-ndeval.txt.gz")
    runs = sorted(shared_path("trec_web_2009_2014", "baseline_runs_2012").glob("*.gz"))
    ms = ["alpha_nDCG@20", "ERR_IA@20", "NRBP", "strec@20"]
    sc = ss.DiversityScorer.from_inputs(qrels, runs, ms, run_id_from="filename")
    for seed in range(4):
        keep = _masks(sc.enc, seed)
        rows = sc.variant_qrels(keep)
        path = tmp_path / f"v{seed}.qrels"
        path.write_text("".join(f"{q} {s} {d} {r}\n" for q, s, d, r in rows.iter_rows()))
        want_df = diversity_evaluate(path, runs, ms, per_query=False, run_id_from="filename")
        want = _summary(want_df, sc.names, sc.enc.run_names)
        assert _same(sc(var.apply_mask(sc.enc, keep)), want)


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_ric_hsa_mask_equals_written_qrels(tmp_path: Path, trec8_dir: Path) -> None:
    t8 = trec8_dir
    runs = sorted((t8 / "runs").iterdir())[:12]
    p = prepare(t8 / "qrels.trec8.adhoc.gz", runs)
    sc = ss.scorer_for(["RIC", "HSA", "DO"], prepared=p)
    for seed in range(3):
        keep = _masks(p.enc, seed)
        path = _write_adhoc(var.variant_qrels(p.qrels, p.enc, keep), tmp_path / f"v{seed}")
        got = sc(var.Masker(p.enc)(keep))
        assert _same(got[:, 0], ric(path, runs)["RIC"].to_numpy())
        h = histogram_analysis(path, runs)
        assert _same(got[:, 1], h["hsa"].to_numpy()) and _same(got[:, 2], h["do"].to_numpy())
