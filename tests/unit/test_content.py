"""Content-based evaluation (SPEC 9): collections, measures, completion, selection, study."""

from __future__ import annotations

import gzip
import io
import json
import math
import random
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.analysis import content as ac
from fasteval.analysis import content_study as cs
from fasteval.errors import InputFormatError, MeasureError, ParameterError, SchemaError
from fasteval.io.collection import (
    Analyzer,
    analyze,
    from_texts,
    read_collection,
    write_collection,
)
from fasteval.io.writers import write_qrels
from fasteval.measures.content import ContentMeasure, parse_content_measure
from tests.conftest import shared_path
from tests.reference import content_naive as ref

# --------------------------------------------------------------------------- fixtures


def _world(seed: int, n_docs: int = 40, n_q: int = 4, n_runs: int = 3, subtopics: bool = False):
    """Random collection, qrels and runs with missing and empty documents and score ties."""
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(30)]
    ids = [f"d{i}" for i in range(n_docs)]
    texts = [" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 12))) for _ in ids]
    coll = from_texts(ids, texts)
    qrels = []
    for q in range(n_q):
        for d in rnd.sample([*ids, "missing1", "missing2"], 12):
            if subtopics:
                for s in range(1, 4):
                    qrels.append((f"q{q}", s, d, rnd.choice([0, 0, 1, 2])))
            else:
                qrels.append((f"q{q}", d, rnd.choice([0, 1, 2])))
    if subtopics:
        qrels.append(("qz", 1, "d1", 0))
    else:
        qrels.append(("qz", "d1", 0))  # a query without a relevant document
    runs = []
    for r in range(n_runs):
        for q in [*(f"q{i}" for i in range(n_q)), "qz"]:
            for d in rnd.sample([*ids, "x1", "x2"], 25):
                runs.append((f"R{r}", q, d, float(rnd.randint(0, 10))))
    cols = ["query_id", "subtopic", "doc_id", "relevance"] if subtopics else None
    qdf = pl.DataFrame(qrels, schema=cols or ["query_id", "doc_id", "relevance"], orient="row")
    rdf = pl.DataFrame(runs, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    docs = {d: coll.counts_of(d) for d in ids}
    return coll, docs, qdf, rdf


def _ranking(rdf: pl.DataFrame, run: str, q: str) -> list[str]:
    """trec_eval order (score descending, doc id descending); scores are small integers."""
    sub = rdf.filter((pl.col("run_id") == run) & (pl.col("query_id") == q))
    rows = sorted(zip(sub["doc_id"], sub["score"], strict=True), key=lambda x: (x[1], x[0]))
    return [d for d, _ in reversed(rows)]


def _judged(qdf: pl.DataFrame) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q, d, g in qdf.select("query_id", "doc_id", "relevance").iter_rows():
        out.setdefault(q, {})[d] = max(g, out.get(q, {}).get(d, g))
    return out


# --------------------------------------------------------------------------- analyzer and readers


def test_analyzer_equals_python_regex_on_every_code_point() -> None:
    chars = [chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000]
    text = " ".join(chars)
    c = from_texts(["all"], [text])
    want: dict[str, int] = {}
    for t in analyze(text):
        want[t] = want.get(t, 0) + 1
    assert c.counts_of("all") == want
    # per character too (context-free agreement)
    fast = pl.Series(chars).str.to_lowercase().str.extract_all(r"[a-z0-9]+").to_list()
    bad = [ch for ch, f in zip(chars, fast, strict=True) if analyze(ch) != (f or [])]
    assert bad == []


def test_analyzer_mixed_text_matches_reference() -> None:
    rnd = random.Random(7)
    alphabet = "abcXYZ019 _-.,ÄÖüßİıKΣσς\u212a\u0130\t\n"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60))) for _ in range(300)]
    ids = [str(i) for i in range(300)]
    c = from_texts(ids, texts)
    for i, t in zip(ids, texts, strict=True):
        want: dict[str, int] = {}
        for w in re.findall(r"[a-z0-9]+", t.lower()):
            want[w] = want.get(w, 0) + 1
        assert c.counts_of(i) == want


def test_stop_list_and_stemmer() -> None:
    pytest.importorskip("snowballstemmer")
    a = Analyzer(frozenset({"the"}), "english")
    c = from_texts(["a", "b"], ["The running runs THE cats", "the runner"], analyzer=a)
    assert c.counts_of("a") == {"run": 2, "cat": 1}
    assert c.counts_of("b") == {"runner": 1}
    assert a.tokens("The running cats") == ["run", "cat"]
    with pytest.raises(ParameterError, match="unknown stemmer"):
        from_texts(["a"], ["x"], analyzer=Analyzer(stemmer="klingon"))


def test_csr_layout_and_collection_model() -> None:
    c = from_texts(["a", "b", "c"], ["b a a", None, "c a"])
    assert c.vocabulary == ["a", "b", "c"]
    assert c.doc_off.tolist() == [0, 2, 2, 4]
    assert c.terms.tolist() == [0, 1, 0, 2]
    assert c.counts.tolist() == [2, 1, 1, 1]
    assert c.doc_len.tolist() == [3, 0, 2]
    np.testing.assert_allclose(c.collection_lm, [3 / 5, 1 / 5, 1 / 5])
    assert c.index_of(["c", "zz", "a"]).tolist() == [2, -1, 0]


def test_readers_agree(tmp_path: Path) -> None:
    ids = ["d1", "d2", "d3"]
    texts = ["Hello world", "second doc here", ""]
    pl.DataFrame({"doc_id": ids, "text": texts}).write_parquet(tmp_path / "c.parquet")
    pl.DataFrame({"doc_id": ids, "text": texts}).write_csv(tmp_path / "c.csv")
    with open(tmp_path / "c.jsonl", "w") as f:
        for i, t in zip(ids, texts, strict=True):
            f.write(json.dumps({"doc_id": i, "text": t}) + "\n")
    sgml = "".join(
        f"<DOC>\n<DOCNO> {i} </DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
        for i, t in zip(ids, texts, strict=True)
    )
    with gzip.open(tmp_path / "c.sgml.gz", "wt") as f:
        f.write(sgml)
    base = from_texts(ids, texts)
    for name in ("c.parquet", "c.csv", "c.jsonl", "c.sgml.gz"):
        c = read_collection(tmp_path / name)
        assert c.doc_ids.to_pylist() == ids, name
        assert [c.counts_of(i) for i in ids] == [base.counts_of(i) for i in ids], name
    write_collection(base, tmp_path / "idx.parquet")
    back = read_collection(tmp_path / "idx.parquet")
    assert back.vocabulary == base.vocabulary
    assert back.doc_off.tolist() == base.doc_off.tolist()
    assert back.terms.tolist() == base.terms.tolist()
    assert back.counts.tolist() == base.counts.tolist()
    assert back.analyzer == base.analyzer


def test_reader_errors(tmp_path: Path) -> None:
    pl.DataFrame({"id": ["a"], "text": ["x"]}).write_csv(tmp_path / "bad.csv")
    with pytest.raises(SchemaError, match=r"bad\.csv: a collection needs columns doc_id and text"):
        read_collection(tmp_path / "bad.csv")
    pl.DataFrame({"doc_id": ["a", "b", "a"], "text": ["x", "y", "z"]}).write_csv(tmp_path / "d.csv")
    with pytest.raises(InputFormatError, match=r"d\.csv: document id 'a' appears more than once"):
        read_collection(tmp_path / "d.csv")
    (tmp_path / "s.sgml").write_text("<DOC>\n<TEXT>no id</TEXT>\n</DOC>\n")
    with pytest.raises(InputFormatError, match=r"s\.sgml:1: <DOC> without <DOCNO>"):
        read_collection(tmp_path / "s.sgml")
    with pytest.raises(InputFormatError, match="no such collection"):
        read_collection(tmp_path / "nope.parquet")
    with pytest.raises(ParameterError, match="unknown classic collection"):
        read_collection("classic:nope")


@pytest.mark.realdata
def test_classic_collection_tokenized_exactly() -> None:
    from fasteval.io.classic import load

    root = shared_path("classic")
    k = load(root, "cf")
    c = read_collection(root / "cf")
    assert len(c) == 1239
    for d, t in list(zip(k.doc_ids, k.texts, strict=True))[::50]:
        want: dict[str, int] = {}
        for w in analyze(t):
            want[w] = want.get(w, 0) + 1
        assert c.counts_of(d) == want


# --------------------------------------------------------------------------- measure names


def test_parse_content_measure() -> None:
    assert parse_content_measure("LMJS@20") == ContentMeasure("LMJS", 20)
    assert parse_content_measure("lmkl@5").name == "LMKL@5"  # type: ignore[union-attr]
    m = parse_content_measure("LMKL(lambda=0.2)@10")
    assert m == ContentMeasure("LMKL", 10, 0.2)
    assert m.name == "LMKL(lambda=0.2)@10"
    assert parse_content_measure("LMJS_IA@20").intent_aware  # type: ignore[union-attr]
    assert parse_content_measure("LMJS") == ContentMeasure("LMJS", 20)
    assert parse_content_measure("map") is None
    assert parse_content_measure("P@10") is None
    with pytest.raises(MeasureError, match="lambda must be in"):
        parse_content_measure("LMKL(lambda=1.5)@10")
    with pytest.raises(MeasureError, match="only LMKL takes a lambda"):
        parse_content_measure("LMJS(lambda=0.5)@10")
    with pytest.raises(MeasureError, match="k must be >= 1"):
        parse_content_measure("LMJS@0")


# --------------------------------------------------------------------------- measures vs reference


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_measures_equal_reference(seed: int) -> None:
    coll, docs, qdf, rdf = _world(seed)
    names = ["LMJS@5", "LMKL@5", "LMKL(lambda=0.3)@3", "LMKL(lambda=0)@50", "LMJS@1000", "LMJS@1"]
    ev = ac.evaluate_content(qdf, rdf, coll, names)
    judged = _judged(qdf)
    checked = 0
    for row in ev.table.filter(pl.col("query_id") != "all").iter_rows(named=True):
        rk = _ranking(rdf, row["run_id"], row["query_id"])
        j = judged[row["query_id"]]
        cm = parse_content_measure(row["measure"])
        assert cm is not None
        if cm.family == "LMJS":
            want = ref.lmjs(docs, j, rk, cm.k)
        else:
            want = ref.lmkl(docs, j, rk, cm.k, cm.lam)
        got = row["value"]
        if math.isnan(want):
            assert math.isnan(got)
        else:
            assert abs(got - want) <= 1e-12, (row, want)
            checked += 1
    assert checked > 50
    # the all rows: means over the queries with a value
    per = ev.table.filter(pl.col("query_id") != "all")
    means = per.group_by(["run_id", "measure"]).agg(pl.col("value").fill_nan(None).mean())
    alls = ev.table.filter(pl.col("query_id") == "all").join(means, on=["run_id", "measure"])
    np.testing.assert_allclose(alls["value"], alls["value_right"], rtol=0, atol=1e-15)


def test_intent_aware_equals_reference() -> None:
    coll, docs, qdf, rdf = _world(5, subtopics=True)
    ev = ac.evaluate_content(qdf, rdf, coll, ["LMJS_IA@5", "LMJS@5"])
    by_sub: dict[str, dict[str, dict[str, int]]] = {}
    for q, s, d, g in qdf.iter_rows():
        by_sub.setdefault(q, {}).setdefault(str(s), {})[d] = g
    judged = _judged(qdf)
    n = 0
    for row in ev.table.filter(pl.col("query_id") != "all").iter_rows(named=True):
        rk = _ranking(rdf, row["run_id"], row["query_id"])
        if row["measure"] == "LMJS_IA@5":
            want = ref.lmjs_ia(docs, by_sub[row["query_id"]], rk, 5)
        else:
            want = ref.lmjs(docs, judged[row["query_id"]], rk, 5)
        if math.isnan(want):
            assert math.isnan(row["value"])
        else:
            assert abs(row["value"] - want) <= 1e-12
            n += 1
    assert n >= 20


def test_report_counts_missing_documents_and_nan_queries() -> None:
    coll, _, qdf, rdf = _world(1)
    ev = ac.evaluate_content(qdf, rdf, coll, ["LMJS@5", "LMJS@1000"])  # 1000: every row read
    rep = ev.report
    assert rep.skipped_within_depth["LMJS@5"] < rep.skipped_within_depth["LMJS@1000"]
    n_missing = rdf.filter(~pl.col("doc_id").is_in(coll.doc_ids.to_pylist())).height
    assert rep.ranked_not_in_collection == n_missing
    no_text = {d for d in coll.doc_ids.to_pylist() if not coll.counts_of(d)}
    assert rep.ranked_without_text == rdf.filter(pl.col("doc_id").is_in(list(no_text))).height
    assert rep.skipped_within_depth["LMJS@1000"] == n_missing + rep.ranked_without_text
    assert rep.nan_queries[ac.REASON_NO_RELEVANT] == 1  # qz
    assert rep.nan_groups[ac.REASON_NO_RELEVANT] == 3  # qz in each of 3 runs
    assert any("not in the collection" in line for line in rep.lines())
    qz = ev.table.filter(pl.col("query_id") == "qz")
    assert qz.height == 6 and qz["value"].is_nan().all()


def test_relevant_documents_all_missing_is_nan_with_its_reason() -> None:
    coll = from_texts(["a", "b"], ["x y", "y z"])
    qdf = pl.DataFrame({"query_id": ["1", "2"], "doc_id": ["gone", "a"], "relevance": [1, 1]})
    rdf = pl.DataFrame(
        {"run_id": ["r"] * 2, "query_id": ["1", "2"], "doc_id": ["a", "a"], "score": [1.0, 1.0]}
    )
    ev = ac.evaluate_content(qdf, rdf, coll, "LMJS@5")
    assert ev.report.nan_queries[ac.REASON_NOT_IN_COLLECTION] == 1
    assert ev.report.relevant_not_in_collection == 1
    v = dict(ev.table.select("query_id", "value").iter_rows())
    assert math.isnan(v["1"]) and v["2"] == pytest.approx(1.0, abs=1e-15) and v["all"] == v["2"]


def test_lmjs_ia_needs_subtopics() -> None:
    coll, _, qdf, rdf = _world(1)
    with pytest.raises(ParameterError, match="LMJS_IA needs diversity qrels"):
        ac.evaluate_content(qdf, rdf, coll, "LMJS_IA@5")


# ------------------------------------------------------------------ completion and selection


def test_f1_threshold_equals_reference() -> None:
    rnd = random.Random(3)
    for _ in range(300):
        n = rnd.randint(1, 12)
        s = [rnd.choice([0.1, 0.2, 0.3, 0.5, 0.7]) for _ in range(n)]
        y = [rnd.random() < 0.4 for _ in range(n)]
        assert ac.f1_threshold(np.array(s), np.array(y)) == ref.threshold(s, y)


@pytest.mark.parametrize("seed", [1, 4])
def test_completion_equals_reference(seed: int) -> None:
    coll, docs, qdf, rdf = _world(seed)
    data = ac.prepare_content(qdf, rdf, coll)
    comp = ac.complete(data, depth=10)
    cq = ac.completed_qrels(data, comp)
    judged = _judged(qdf)
    runs = rdf["run_id"].unique().sort().to_list()
    total = 0
    for q in judged:
        want = ref.complete(docs, judged[q], [_ranking(rdf, r, q) for r in runs], 10)
        got = set(cq.filter(pl.col("query_id") == q)["doc_id"].to_list()) - set(judged[q])
        assert got == want, q
        total += len(want)
    assert total > 0
    # every real judgment is kept, unchanged
    real = qdf.join(cq, on=["query_id", "doc_id"], how="left")
    assert (real["relevance"] == real["relevance_right"]).all()


@pytest.mark.parametrize("seed", [1, 2])
def test_selection_equals_reference(seed: int) -> None:
    coll, docs, qdf, rdf = _world(seed)
    data = ac.prepare_content(qdf, rdf, coll)
    runs = rdf["run_id"].unique().sort().to_list()
    sel = ac.select(data, depth=1, max_depth=20)
    ids = coll.doc_ids.to_pylist()
    judged = _judged(qdf)
    for qi, q in enumerate(data.enc.qids):
        got = [ids[d] for d in sel.doc[sel.query == qi].tolist()]
        want = ref.select(docs, judged[q], [_ranking(rdf, r, q) for r in runs], 1, 20)
        assert got == want, q


def test_complete_and_select_write_qrels(tmp_path: Path) -> None:
    coll, _, qdf, rdf = _world(2)
    cq = ac.complete_qrels(qdf, rdf, coll, depth=10)
    write_qrels(cq, tmp_path / "c.qrels")
    back = pl.read_csv(
        tmp_path / "c.qrels", separator=" ", has_header=False, new_columns=["q", "i", "d", "r"]
    )
    assert back.height == cq.height
    used, summary = ac.select_judgments(qdf, rdf, coll, depth=2)
    assert used.height <= qdf.height
    assert (summary["judged"] <= summary["pool20"]).all()
    with pytest.raises(ParameterError, match="depth"):
        ac.select(ac.prepare_content(qdf, rdf, coll), depth=30)


# --------------------------------------------------------------------------- study


def test_content_study_resumes(tmp_path: Path) -> None:
    coll, _, qdf, rdf = _world(3, n_docs=60, n_q=6, n_runs=5)
    out = tmp_path / "study"
    r1 = cs.content_study(
        qdf, rdf, coll, ["map", "LMJS@5"], rates=[0.3, 1.0], reps=3, out_dir=out, depth=10
    )
    names = set(r1.summary["measure"].to_list())
    assert names == {"a:map", "b:LMJS@5", "c:map"}
    # at rate 1 the reduced qrels are the full qrels: curve a is exactly 1
    a1 = r1.summary.filter(
        (pl.col("measure") == "a:map") & (pl.col("x") == 1.0) & (pl.col("statistic") == "tau")
    )
    assert a1["mean"].to_list() == [1.0]
    files = sorted(p.name for p in out.glob("setting=*.parquet"))
    assert files == ["setting=0.3.parquet", "setting=1.parquet"]
    stamp = (out / "setting=0.3.parquet").stat().st_mtime_ns
    r2 = cs.content_study(
        qdf, rdf, coll, ["map", "LMJS@5"], rates=[0.3, 1.0], reps=3, out_dir=out, depth=10
    )
    assert (out / "setting=0.3.parquet").stat().st_mtime_ns == stamp
    assert r2.units.equals(r1.units)
    with pytest.raises(ParameterError, match="holds a different study"):
        cs.content_study(qdf, rdf, coll, ["map", "LMJS@5"], rates=[0.3], reps=3, out_dir=out)
    with pytest.raises(MeasureError, match="one label measure"):
        cs.content_study(qdf, rdf, coll, ["map", "ndcg", "LMJS@5"], reps=1)


def test_completed_variant_scores_like_reparsed_qrels() -> None:
    """Curve c: the augmented-qrels variant equals evaluating the completed qrels file."""
    import fasteval

    coll, _, qdf, rdf = _world(4, n_docs=60, n_q=5, n_runs=4)
    ctx = cs.plan(qdf, rdf, coll, ["map", "LMJS@5"], depth=10)
    rng = np.random.default_rng(0)
    from fasteval.analysis import variants as var

    # several variants in a row: the buffers the variants share are rewritten each time
    for rate in (0.5, 0.2, 0.8):
        keep = var.subsample_mask(ctx.data.enc, rate, rng)
        enc_c, _ = cs.completed_variant(ctx, keep)
        got = ctx.scorer(enc_c)[:, 0]
        cq = ac.completed_qrels(ctx.data, ac.complete(ctx.data, keep, depth=10), keep)
        df = fasteval.evaluate(cq, rdf, ["map"], per_query=False)
        want = dict(df.select("run_id", "value").iter_rows())
        np.testing.assert_allclose(got, [want[r] for r in ctx.data.enc.run_names], atol=1e-12)


def test_content_study_units_independent_of_thread_count() -> None:
    """Units run concurrently (one per thread) give the rows of the sequential loop, in order."""
    from fasteval.parallel import kernel_threads

    coll, _, qdf, rdf = _world(5, n_docs=60, n_q=6, n_runs=5)
    args = (qdf, rdf, coll, ["map", "LMJS@5", "LMKL@5"])
    with kernel_threads(1):
        one = cs.content_study(*args, rates=[0.2, 0.5, 1.0], reps=4, depth=10)
    with kernel_threads(2):
        two = cs.content_study(*args, rates=[0.2, 0.5, 1.0], reps=4, depth=10)
        split = cs.content_study(*args, rates=[0.2, 0.5, 1.0], reps=4, depth=10, concurrent=False)
    assert one.units.height == 3 * 4 * 4 * 2
    assert two.units.equals(one.units)
    assert split.units.equals(one.units)
    # rate 1: every repetition keeps every judgment, so its curves are the same in each rep
    full = (
        one.units.filter(pl.col("x") == 1.0)
        .group_by("measure", "statistic")
        .agg(pl.col("value").n_unique().alias("n"))
    )
    assert full["n"].to_list() == [1] * full.height


def test_content_study_with_diversity_qrels() -> None:
    """alpha_nDCG@20 with LMJS_IA: curve a is the subsampling study's, b and c as evaluated."""
    from fasteval.analysis import studies as st
    from fasteval.analysis import variants as var

    coll, _, qdf, rdf = _world(6, n_docs=60, n_q=6, n_runs=5, subtopics=True)
    # ndeval orders by rank (ties in score broken by row order here)
    rank = pl.col("score").rank("ordinal", descending=True).over("run_id", "query_id")
    rdf = rdf.with_columns(rank.cast(pl.Int64).alias("rank"))
    names = ["alpha_nDCG@20", "LMJS_IA@5"]
    res = cs.content_study(qdf, rdf, coll, names, rates=[0.3, 1.0], reps=3, depth=10)
    assert set(res.units["measure"].to_list()) == {
        "a:alpha_nDCG@20",
        "b:LMJS_IA@5",
        "c:alpha_nDCG@20",
    }
    tau = res.units.filter(pl.col("statistic") == "tau")
    a = tau.filter(pl.col("measure") == "a:alpha_nDCG@20").sort("x", "rep")
    assert a.filter(pl.col("x") == 1.0)["value"].to_list() == [1.0] * 3
    # the masks are the diversity subsampling study's (same seed): same tau for curve a
    sub = st.subsample(qdf, rdf, ["alpha_nDCG@20"], rates=[0.3, 1.0], reps=3).units
    sub = sub.filter((pl.col("statistic") == "tau") & (pl.col("measure") == "alpha_nDCG@20"))
    np.testing.assert_allclose(a["value"], sub.sort("x", "rep")["value"], atol=1e-12)
    # one unit by hand: b from the reduced qrels file, c from the completed one
    ctx = cs.plan(qdf, rdf, coll, names, depth=10)
    div = ctx.div
    assert div is not None
    keep_d = var.subsample_mask(div.scorer.enc, 0.3, np.random.default_rng(3))
    keep = np.zeros(ctx.data.enc.qr_rel.shape[0], bool)
    keep[div.to_content[keep_d]] = True
    sc = ac.score_groups(ctx.data, ctx.content, keep)
    b = dict(zip(ctx.data.enc.run_names, ac.run_means(ctx.data.enc, sc.values)[:, 0], strict=True))
    reduced = div.scorer.variant_qrels(keep_d)
    want_b = ac.content_evaluate(reduced, rdf, coll, "LMJS_IA@5", per_query=False)
    for run, value in want_b.select("run_id", "value").iter_rows():
        assert b[run] == pytest.approx(value, abs=1e-12)
    _, c, n_pred = cs._diversity_curves(ctx, div, keep, sc)
    completed = ac.completed_qrels(ctx.data, ac.complete(ctx.data, keep, depth=10), keep)
    assert completed.height >= reduced.height + n_pred
    want_c = fasteval.diversity_evaluate(completed, rdf, ["alpha_nDCG@20"], per_query=False)
    got_c = dict(zip(ctx.data.enc.run_names, c, strict=True))
    for run, value in want_c.select("run_id", "value").iter_rows():
        assert got_c[run] == pytest.approx(value, abs=1e-12)
    with pytest.raises(MeasureError, match="LMJS_IA needs diversity qrels"):
        cs.plan(qdf, rdf, coll, ["map", "LMJS_IA@5"])


# --------------------------------------------------------------------------- threads, API, CLI


@pytest.mark.parametrize("subtopics", [False, True])
def test_one_pass_scoring_equals_stored_result_models(subtopics: bool) -> None:
    """score_lists (result model built and scored at once) equals the stored-model path."""
    coll, _, qdf, rdf = _world(11, n_docs=80, n_q=6, n_runs=4, subtopics=subtopics)
    ms = ac.parse_content_measures(["LMJS@4", "LMKL@4", "LMKL(lambda=0)@30", "LMJS@1"])
    if subtopics:
        ms += ac.parse_content_measures(["LMJS_IA@4", "LMJS_IA@30"])
    data = ac.prepare_content(qdf, rdf, coll, diversity=subtopics)
    rng = np.random.default_rng(1)
    for keep in (None, rng.random(data.enc.qr_rel.shape[0]) < 0.5):
        data.cache.clear()
        fused = ac.score_groups(data, ms, keep)
        assert not data.cache  # nothing stored
        stored = ac.score_groups(data, ms, keep, reuse_results=True)
        assert data.cache
        a, b = fused.values, stored.values
        assert np.array_equal(np.isnan(a), np.isnan(b))
        assert np.abs(a[~np.isnan(a)] - b[~np.isnan(b)]).max() <= 1e-14
        assert np.array_equal(fused.skipped, stored.skipped)
        assert np.array_equal(fused.empty_result, stored.empty_result)


def test_independent_of_thread_count_on_many_chunks() -> None:
    import numba

    coll, _, qdf, rdf = _world(9, n_docs=300, n_q=30, n_runs=12)
    names = ["LMJS@10", "LMKL@10"]
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ac.content_evaluate(qdf, rdf, coll, names)
        numba.set_num_threads(max(2, old))
        many = ac.content_evaluate(qdf, rdf, coll, names)
    finally:
        numba.set_num_threads(old)
    a, b = one["value"].to_numpy(), many["value"].to_numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.array_equal(a[~np.isnan(a)], b[~np.isnan(b)])


def test_evaluate_with_a_collection_mixes_label_and_content_measures() -> None:
    coll, _, qdf, rdf = _world(2)
    # what the collection lacks is reported, never dropped silently
    with pytest.warns(fasteval.FastevalWarning, match="not in the collection"):
        df = fasteval.evaluate(qdf, rdf, ["map", "LMJS@5"], collection=coll)
    assert df.columns == ["run_id", "query_id", "measure", "value"]
    assert set(df["measure"].to_list()) == {"map", "LMJS@5"}
    alone = fasteval.evaluate(qdf, rdf, ["map"])
    got = df.filter(pl.col("measure") == "map").sort(["run_id", "query_id"])
    assert got.equals(alone.sort(["run_id", "query_id"]))
    # per run, the all rows come last
    blocks = 0
    for _, block in df.group_by("run_id", maintain_order=True):
        q = block["query_id"].to_list()
        assert q[-2:] == ["all", "all"] and "all" not in q[:-2]
        blocks += 1
    assert blocks == rdf["run_id"].n_unique()


def test_content_measures_without_a_collection_are_a_clear_error() -> None:
    _, _, qdf, rdf = _world(2)
    with pytest.raises(fasteval.FastevalError, match="give the collection"):
        fasteval.evaluate(qdf, rdf, ["map", "LMJS@5"])


def _write_world(tmp_path: Path, seed: int = 2) -> tuple[str, str, str]:
    coll, _, qdf, rdf = _world(seed, n_docs=60, n_q=5, n_runs=4)
    write_collection(coll, tmp_path / "coll.parquet")
    write_qrels(qdf, tmp_path / "qrels.txt")
    (tmp_path / "runs").mkdir()
    for (run,), block in rdf.group_by("run_id"):
        with open(tmp_path / "runs" / f"{run}.txt", "w") as f:
            for r, q, d, s in block.iter_rows():
                f.write(f"{q} Q0 {d} 0 {s} {r}\n")
    return str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), str(tmp_path / "coll.parquet")


def test_cli_content_commands(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fasteval.cli import main

    q, r, c = _write_world(tmp_path)
    cli = CliRunner()
    res = cli.invoke(main, ["eval", q, r, "--collection", c, "-m", "LMJS@5", "-m", "map"])
    assert res.exit_code == 0, res.output
    lines = [ln.split("\t") for ln in res.output.splitlines() if "\tall\t" in ln]
    assert {ln[0].strip() for ln in lines} == {"LMJS@5", "map"}
    api = ac.content_evaluate(q, r, c, "LMJS@5", per_query=False)
    want = {row[0]: row[3] for row in api.iter_rows()}
    for name, _, value, run in lines:
        if name.strip() == "LMJS@5":
            assert float(value) == pytest.approx(want[run], abs=5e-5)
    docs = tmp_path / "docs.csv"
    pl.DataFrame({"doc_id": ["a", "b"], "text": ["x y", "y z"]}).write_csv(docs)
    res = cli.invoke(main, ["index", str(docs), "-o", str(tmp_path / "i.parquet")])
    assert res.exit_code == 0, res.output
    assert read_collection(tmp_path / "i.parquet").vocabulary == ["x", "y", "z"]
    out = tmp_path / "completed.txt"
    res = cli.invoke(
        main, ["complete-qrels", q, r, "--collection", c, "--depth", "10", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "predicted relevant" in res.output
    n_real = len(Path(q).read_text().splitlines())
    assert len(out.read_text().splitlines()) >= n_real
    out = tmp_path / "selected.txt"
    res = cli.invoke(main, ["select-judgments", q, r, "--collection", c, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "chosen by content" in res.output
    study = tmp_path / "study"
    args = ["study", "content", q, r, "--collection", c, "-m", "map", "-m", "LMJS@5"]
    args += ["--rates", "0.5,1", "--reps", "2", "-o", str(study)]
    res = cli.invoke(main, args)
    assert res.exit_code == 0, res.output
    assert (study / "summary.csv").exists() and (study / "tau.png").exists()


def test_cli_collection_passes_label_options(tmp_path: Path) -> None:
    """eval --collection: -Z, -M, -J and -l reach the label measures as in evaluate()."""
    from click.testing import CliRunner

    from fasteval.cli import main

    q, r, c = _write_world(tmp_path)
    cli = CliRunner()
    label = ["P_5", "map", "num_rel_ret"]
    qids = sorted({ln.split()[0] for ln in Path(q).read_text().splitlines() if ln.strip()})
    z = tmp_path / "z.txt"
    z.write_text("".join(f"{i} {m} 0.1 0.5\n" for i in qids for m in label))
    for flags, kw in [
        (["-Z", str(z)], {"zscores": str(z)}),
        (["-M", "3"], {"max_depth": 3}),
        (["-J"], {"judged_only": True}),
        (["-l", "2"], {"relevance_level": 2}),
    ]:
        args = ["eval", q, r, "--collection", c, "-q", "-m", "LMJS@5", "--format", "csv", *flags]
        for m in label:
            args += ["-m", m]
        res = cli.invoke(main, args)
        assert res.exit_code == 0, res.output
        got = pl.read_csv(io.StringIO(res.stdout), schema_overrides={"query_id": pl.String})
        got = got.filter(pl.col("measure") != "LMJS@5").sort(["run_id", "query_id", "measure"])
        want = fasteval.evaluate(q, r, label, **kw).sort(["run_id", "query_id", "measure"])
        plain = fasteval.evaluate(q, r, label).sort(["run_id", "query_id", "measure"])
        assert got.select("run_id", "query_id", "measure").equals(
            want.select("run_id", "query_id", "measure")
        )
        np.testing.assert_allclose(got["value"], want["value"], atol=1e-12)
        assert not np.allclose(want["value"], plain["value"]), flags  # the option matters
    res = cli.invoke(main, ["eval", q, r, "--collection", c, "--run-id", "filename"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "fasteval: error: --run-id filename is not supported with --collection (content measures)"
    ]


def test_cli_content_errors_are_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fasteval.cli import main

    q, r, c = _write_world(tmp_path)
    cli = CliRunner()
    res = cli.invoke(
        main, ["eval", q, r, "--collection", str(tmp_path / "no.parquet"), "-m", "LMJS@5"]
    )
    assert res.exit_code == 1
    assert "no.parquet: no such collection file or folder" in res.output
    assert "Traceback" not in res.output
    res = cli.invoke(main, ["eval", q, r, "--collection", c, "-m", "map"])
    assert res.exit_code == 1 and "content measures" in res.output
    res = cli.invoke(main, ["eval", q, r, "--collection", c, "-m", "LMKL(lambda=2)@5"])
    assert res.exit_code == 1 and "lambda must be in [0, 1)" in res.output
    res = cli.invoke(main, ["index", str(tmp_path / "nothing.csv"), "-o", str(tmp_path / "x")])
    assert res.exit_code == 1 and "no such collection" in res.output


def test_warmup_compiles_every_content_kernel_for_real_inputs(tmp_path: Path) -> None:
    """After `fasteval warmup`'s content step, a content evaluation compiles nothing new."""
    from fasteval import warmup
    from fasteval.kernels import content as kc

    (tmp_path / "warm").mkdir()
    step = dict(warmup.steps(tmp_path / "warm"))[
        "content measures, completion and the content study"
    ]
    step()
    kernels = [kc.build_models, kc.result_models, kc.similarity, kc.score_lists]
    before = [len(k.signatures) for k in kernels]
    assert all(before)
    q, r, c = _write_world(tmp_path)
    ac.evaluate_content(q, r, c, ["LMJS@5", "LMKL@5"])
    data = ac.prepare_content(q, r, c)
    ac.complete(data, depth=10)
    cs.content_study(None, None, None, ["map", "LMJS@5"], rates=[0.5], reps=2, data=data)
    assert [len(k.signatures) for k in kernels] == before
