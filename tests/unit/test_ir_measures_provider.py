"""The fasteval provider for ir_measures on the packaged sample (TREC-8: tests/oracle)."""

from __future__ import annotations

import polars as pl
import pytest

irm = pytest.importorskip("ir_measures")

from fasteval.ir_measures_provider import provider, use_fasteval  # noqa: E402
from tests.conftest import SAMPLE_DATA as DATA  # noqa: E402

MEASURES = [
    irm.P @ 10,
    irm.P(rel=2) @ 5,
    irm.R @ 100,
    irm.AP,
    irm.AP @ 100,
    irm.AP(rel=2),
    irm.RR,
    irm.RR(rel=2),
    irm.Rprec,
    irm.nDCG,
    irm.nDCG @ 10,
    irm.Bpref,
    irm.infAP,
    irm.Success @ 10,
    irm.IPrec @ 0.2,
    irm.SetP,
    irm.SetR,
    irm.NumRet,
    irm.NumRel,
    irm.NumRelRet,
]


@pytest.fixture(scope="module")
def sample():
    qrels = list(irm.read_trec_qrels(str(DATA / "sample.qrels")))
    runs = pl.read_parquet(DATA / "sample_runs.parquet")
    run = [
        irm.ScoredDoc(q, d, s)
        for q, d, s in runs.filter(pl.col("run_id") == "sample3")
        .select("query_id", "doc_id", "score")
        .iter_rows()
    ]
    return qrels, run[:-150]  # drop the last query's rows: a qrels query the run lacks


def test_registered_and_claims():
    assert irm.providers.registry["fasteval"] is provider
    assert provider.supports(irm.nDCG @ 10) and provider.supports(irm.AP(rel=2))
    assert not provider.supports(irm.ERR @ 10)
    assert provider.supports(irm.nDCG(dcg="exp-log2") @ 10)  # gdeval's nDCG@k
    assert not provider.supports(irm.nDCG(dcg="exp-log2"))  # no cutoff: not gdeval's


# asked on their own: ir_measures' pytrec_eval provider would compute NumRet in the -J
# invocation when a judged_only measure comes first in its (hash-ordered) measure set
JUDGED_ONLY = [irm.nDCG(judged_only=True) @ 10, irm.AP(judged_only=True)]


@pytest.mark.parametrize("measures", [MEASURES, JUDGED_ONLY], ids=["plain", "judged_only"])
def test_equals_default_providers_on_the_sample(sample, measures):
    qrels, run = sample
    ours = provider.calc_aggregate(measures, qrels, run)
    theirs = irm.calc_aggregate(measures, qrels, run)
    for m in measures:
        assert ours[m] == pytest.approx(theirs[m], rel=1e-12, abs=1e-15), m
    per_ours = {
        (x.query_id, str(x.measure)): x.value for x in provider.iter_calc(measures, qrels, run)
    }
    per_theirs = {
        (x.query_id, str(x.measure)): x.value for x in irm.iter_calc(measures, qrels, run)
    }
    assert per_ours.keys() == per_theirs.keys()
    for k, v in per_theirs.items():
        assert per_ours[k] == pytest.approx(v, rel=1e-12, abs=1e-15), k


def test_use_fasteval_routes_the_default_pipeline(sample):
    qrels, run = sample
    use_fasteval()
    try:
        assert irm.DefaultPipeline.providers[0] is provider
        # a measure fasteval does not claim still goes to ir_measures' own providers
        got = irm.calc_aggregate([irm.AP, irm.Judged @ 10], qrels, run)
        assert got[irm.AP] == pytest.approx(provider.calc_aggregate([irm.AP], qrels, run)[irm.AP])
        assert 0.0 <= got[irm.Judged @ 10] <= 1.0
    finally:
        use_fasteval(False)
    assert provider not in irm.DefaultPipeline.providers


def test_run_sharing_no_query_scores_the_defaults(sample):
    qrels, _ = sample
    run = [irm.ScoredDoc("no-such-query", "d", 1.0)]
    got = provider.calc_aggregate([irm.AP, irm.P @ 5], qrels, run)
    assert got[irm.AP] == 0.0 and got[irm.P @ 5] == 0.0


def test_read_trec_iterators_are_read_by_fasteval_with_the_same_values(sample, tmp_path) -> None:
    from fasteval.io import adapters

    qrels, run = sample
    run_file = tmp_path / "run.txt"
    run_file.write_text("".join(f"{r.query_id} Q0 {r.doc_id} 0 {r.score!r} x\n" for r in run))
    qrels_file = str(DATA / "sample.qrels")
    want = provider.calc_aggregate(MEASURES, qrels, run)  # lists of records
    # a path: fasteval reads the file itself; the generator is never started
    gq, gr = irm.read_trec_qrels(qrels_file), irm.read_trec_run(str(run_file))
    assert adapters.is_trec_reader(gq, "qrels") and adapters.is_trec_reader(gr, "run")
    assert provider.calc_aggregate(MEASURES, gq, gr) == want
    # open files (text mode, the rest of the file): the same lines
    with open(qrels_file) as fq, open(run_file) as fr:
        got = provider.calc_aggregate(MEASURES, irm.read_trec_qrels(fq), irm.read_trec_run(fr))
    assert got == want
    # a started generator is read record by record, as any iterator
    g = irm.read_trec_run(str(run_file))
    first = next(g)
    assert not adapters.is_trec_reader(g)
    assert provider.calc_aggregate(MEASURES, qrels, [first, *g]) == want


def test_the_provider_reuses_its_prepared_qrels_only_for_equal_qrels(sample) -> None:
    qrels, _ = sample
    a = provider.evaluator(MEASURES, qrels)
    assert provider.evaluator(MEASURES, list(qrels)) is a  # equal content, another object
    changed = [*qrels[:-1], irm.Qrel(qrels[-1].query_id, qrels[-1].doc_id, 7)]
    b = provider.evaluator(MEASURES, changed)
    assert b is not a
    assert provider.evaluator(MEASURES[:3], qrels) is not a  # other measures


def test_a_qrels_dict_changed_in_place_is_prepared_again(sample) -> None:
    qrels, run = sample
    d: dict[str, dict[str, int]] = {}
    for r in qrels:
        d.setdefault(r.query_id, {})[r.doc_id] = r.relevance
    ms = [irm.AP, irm.P @ 10]
    first = provider.calc_aggregate(ms, d, run)
    assert provider.evaluator(ms, d) is provider.evaluator(ms, d)  # the same dict: reused
    q = run[0].query_id
    for doc in d[q]:  # every judgment of one query made non-relevant, in place
        d[q][doc] = 0
    changed = provider.calc_aggregate(ms, d, run)
    assert changed != first
    assert changed == provider.calc_aggregate(ms, irm_records(d), run)


def irm_records(d: dict[str, dict[str, int]]) -> list:
    return [irm.Qrel(q, doc, g) for q, docs in d.items() for doc, g in docs.items()]


@pytest.mark.parametrize(
    "measures",
    [
        [*MEASURES, irm.NumQ, irm.AP],  # a measure twice; sum aggregators (NumRet, NumQ)
        [*JUDGED_ONLY, irm.P @ 5],  # two evaluator groups
    ],
    ids=["plain", "two_groups"],
)
def test_calc_aggregate_adds_what_ir_measures_adds_in_its_order(sample, measures) -> None:
    """Our calc_aggregate (no Metric per query) gives ir_measures' own aggregation of
    our per-query values bit for bit: the same values, defaults and order of additions."""
    from ir_measures.providers.base import Evaluator as Base

    qrels, run = sample
    ev = provider.evaluator(measures, qrels)
    ours = ev.calc_aggregate(run)
    base = Base.calc_aggregate(ev, run)  # iter_calc's Metrics, aggregated by ir_measures
    assert list(ours) == list(base)
    for m in base:
        assert ours[m] == base[m], m  # exactly: same additions in the same order
    # a run missing most qrels queries: their defaults are added (the mean falls)
    few = [r for r in run if r.query_id == run[0].query_id]
    ours_few, base_few = ev.calc_aggregate(few), Base.calc_aggregate(ev, few)
    assert all(ours_few[m] == base_few[m] for m in base_few)
    m0 = measures[-1]
    assert ours_few[m0] < ours[m0]
