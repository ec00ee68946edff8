"""``fasteval.Evaluator``: qrels prepared once, many evaluations, the same tables as evaluate()."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import fasteval
from fasteval import parallel
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError

MEASURES = ["map", "P_5", "ndcg_cut_10", "recall_10", "bpref", "recip_rank", "num_rel_ret"]


def _qrels(rng: np.random.Generator, n_q: int = 8) -> dict[str, dict[str, int]]:
    return {
        f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(60, 25, replace=False)}
        for q in range(n_q)
    }


def _run(rng: np.random.Generator, qids: list[str]) -> dict[str, dict[str, float]]:
    # rounded scores: ties, broken by document id as trec_eval does
    return {
        q: {f"d{d}": float(np.round(rng.random(), 1)) for d in rng.choice(80, 30, replace=False)}
        for q in qids
    }


@pytest.fixture
def data() -> tuple[dict, dict]:
    rng = np.random.default_rng(26)
    qrels = _qrels(rng)
    runs = {f"r{i}": _run(rng, [f"q{q}" for q in range(8)]) for i in range(4)}
    return qrels, runs


@pytest.mark.parametrize("compat", [9, 10])
def test_reused_evaluator_equals_fresh_evaluate_on_many_inputs(data, compat) -> None:
    qrels, runs = data
    ev = fasteval.Evaluator(qrels, MEASURES, compat=compat)
    rng = np.random.default_rng(7)
    inputs = [
        runs,
        runs["r1"],
        {"x": {**runs["r0"], "unseen": {"d1": 1.0}}},  # a query the qrels lack
        {"y": {q: runs["r2"][q] for q in ["q3", "q1"]}},  # a few queries, out of order
        {"z": _run(rng, ["q0", "q7"])},
    ]
    for x in inputs:
        for per_query in (True, False):
            want = fasteval.evaluate(qrels, x, MEASURES, compat=compat, per_query=per_query)
            got = ev.evaluate(x, per_query=per_query)
            assert got.equals(want)
    # and in the other order: nothing of one evaluation leaks into the next
    for x in reversed(inputs):
        assert ev.evaluate(x).equals(fasteval.evaluate(qrels, x, MEASURES, compat=compat))


def test_every_input_kind_gives_the_same_table(data, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    qrels, runs = data
    frame = pl.DataFrame(
        [(r, q, d, s) for r, qs in runs.items() for q, ds in qs.items() for d, s in ds.items()],
        schema=["run_id", "query_id", "doc_id", "score"],
        orient="row",
    )
    text = tmp_path / "runs"
    text.mkdir()
    for (r,), part in frame.partition_by("run_id", as_dict=True).items():
        lines = [f"{q} Q0 {d} 0 {s} {r}" for _, q, d, s in part.iter_rows()]
        (text / f"{r}.txt").write_text("\n".join(lines) + "\n")
    archive = tmp_path / "a.parquet"
    from click.testing import CliRunner

    from fasteval.cli import main

    assert CliRunner().invoke(main, ["ingest", str(text), "-o", str(archive)]).exit_code == 0
    ev = fasteval.Evaluator(qrels, MEASURES)
    want = ev.evaluate(runs)
    kinds = {
        "polars": frame,
        "arrow": frame.to_arrow(),
        "pandas": frame.to_pandas(),
        "text files": sorted(text.iterdir()),
        "directory": text,
        "archive": archive,
    }
    for name, x in kinds.items():
        got = ev.evaluate(x)
        assert got.sort("run_id", maintain_order=True).equals(want), name
    assert isinstance(kinds["pandas"], pd.DataFrame)


def test_threads_sharing_one_evaluator_get_the_same_frames(data) -> None:
    qrels, runs = data
    ev = fasteval.Evaluator(qrels, [*MEASURES, "ndcg", "P.5,10"])
    inputs = [runs, runs["r0"], runs["r3"], {"a": runs["r1"], "b": runs["r2"]}]
    want = [fasteval.evaluate(qrels, x, [*MEASURES, "ndcg", "P.5,10"]) for x in inputs]
    got: dict[tuple[int, int], pl.DataFrame] = {}
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for k in range(10):
                i = (t + k) % len(inputs)
                got[t, k] = (i, ev.evaluate(inputs[i]))  # type: ignore[assignment]
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(got) == 40
    for i, df in got.values():  # type: ignore[misc]
        assert df.equals(want[i])


def test_no_query_in_common_and_empty_runs_behave_as_evaluate(data) -> None:
    qrels, runs = data
    ev = fasteval.Evaluator(qrels, MEASURES)
    stranger = {"s": {"elsewhere": {"d1": 1.0}}}
    with pytest.raises(DataMismatchError, match="no query in common") as a:
        ev.evaluate(stranger)
    with pytest.raises(DataMismatchError) as b:
        fasteval.evaluate(qrels, stranger, MEASURES)
    assert str(a.value) == str(b.value)
    for empty in ({}, []):
        with pytest.raises((InputFormatError, ParameterError)) as a:
            ev.evaluate(empty)
        with pytest.raises((InputFormatError, ParameterError)) as b:
            fasteval.evaluate(qrels, empty, MEASURES)
        assert str(a.value) == str(b.value)
    # a run with some queries outside the qrels: only the qrels queries are scored
    mixed = {"m": {**runs["r0"], "zz": {"d1": 0.5}}}
    df = ev.evaluate(mixed)
    assert "zz" not in set(df["query_id"])


def test_options_are_checked_once_when_made(data) -> None:
    qrels, _ = data
    with pytest.raises(ParameterError, match="compat must be 9 or 10"):
        fasteval.Evaluator(qrels, MEASURES, compat=8)
    with pytest.raises(ParameterError, match="max_depth must be positive"):
        fasteval.Evaluator(qrels, MEASURES, max_depth=0)
    with pytest.raises(ParameterError, match="on_duplicate"):
        fasteval.Evaluator(qrels, MEASURES, on_duplicate="last")
    with pytest.raises(ParameterError, match="unexpected keyword argument 'compact'"):
        fasteval.Evaluator(qrels, MEASURES, compact=9)


def test_small_work_stays_on_the_calling_thread_and_the_pool_is_reused(data) -> None:
    qrels, runs = data
    ev = fasteval.Evaluator(qrels, MEASURES)
    ev.evaluate(runs)
    before = threading.active_count()
    for _ in range(20):
        ev.evaluate(runs)
    assert threading.active_count() == before  # no thread started per call
    pool = parallel.pool()
    assert parallel.pool() is pool
    seen: list[str] = []
    parallel.map_threads(lambda _: seen.append(threading.current_thread().name), range(1), 1)
    assert seen == [threading.current_thread().name]


def test_dict_qrels_prepared_once_and_an_edit_is_seen(data) -> None:
    """evaluate() in a loop reuses the prepared dict qrels; an edited dict is prepared again."""
    from fasteval.engine.recent import RECENT

    qrels, runs = data
    run = runs["r0"]
    RECENT.clear()
    first = fasteval.Evaluator(qrels, MEASURES)
    again = fasteval.Evaluator({q: dict(d) for q, d in qrels.items()}, ["map"])
    assert again._state[0] is first._state[0]  # an equal dict: the same prepared qrels
    before = fasteval.evaluate(qrels, run, MEASURES)
    # one judgment edited in place: the numbers must follow the edit
    q0 = next(iter(run))
    top = max(run[q0], key=lambda d: (run[q0][d], d))
    qrels[q0][top] = 0 if qrels[q0].get(top, 0) > 0 else 2
    edited = fasteval.evaluate(qrels, run, MEASURES)
    fresh = fasteval.evaluate(
        pl.DataFrame(
            [(q, d, g) for q, ds in qrels.items() for d, g in ds.items()],
            schema=["query_id", "doc_id", "relevance"],
            orient="row",
        ),
        run,
        MEASURES,
    )
    assert edited.equals(fresh)
    assert not edited.equals(before)
    assert fasteval.Evaluator(qrels, ["map"])._state[0] is not first._state[0]


def test_bad_dict_qrels_are_not_kept() -> None:
    from fasteval.engine.recent import RECENT

    RECENT.clear()
    bad = {"q1": {"d1": "high"}}
    for _ in range(2):  # the error each time, never a kept result
        with pytest.raises(InputFormatError, match="q1"):
            fasteval.evaluate(bad, {"q1": {"d1": 1.0}}, ["map"])


@pytest.mark.parametrize("kind", ["categorical", "enum"])
@pytest.mark.parametrize("n_chunks", [1, 3])
def test_frames_of_categorical_ids_score_as_frames_of_strings(kind: str, n_chunks: int) -> None:
    """polars' categorical and enum columns (a dictionary of string views through the
    Arrow C stream, which Arrow could not cast to strings) read as their strings, in
    one chunk or several."""
    rng = np.random.default_rng(11)
    qs = [f"q{q:02d}" for q in range(12)]
    docs = [f"doc-{i}" for i in range(30)]
    qrels = pl.DataFrame(
        {
            "query_id": [q for q in qs for _ in docs[:15]],
            "doc_id": [d for _ in qs for d in docs[:15]],
            "relevance": rng.integers(0, 3, 15 * len(qs)).tolist(),
        }
    )
    run = pl.DataFrame(
        {
            "run_id": ["a-run"] * (len(qs) * len(docs)),
            "query_id": [q for q in qs for _ in docs],
            "doc_id": [d for _ in qs for d in docs],
            "score": rng.random(len(qs) * len(docs)).tolist(),
        }
    )
    ids = ["run_id", "query_id", "doc_id"]
    words = {c: run[c].unique(maintain_order=True).to_list() for c in ids}

    def recode(df: pl.DataFrame, cols: list[str]) -> pl.DataFrame:
        dtype = {c: pl.Categorical() if kind == "categorical" else pl.Enum(words[c]) for c in cols}
        return df.with_columns(pl.col(c).cast(dtype[c]) for c in cols)

    coded = recode(run, ids)
    if n_chunks > 1:
        step = coded.height // n_chunks + 1
        coded = pl.concat(
            [coded.slice(i, step) for i in range(0, coded.height, step)], rechunk=False
        )
        assert coded.n_chunks() == n_chunks
    want = fasteval.Evaluator(qrels, ["map", "P_5", "ndcg"]).evaluate(run)
    got = fasteval.Evaluator(recode(qrels, ["query_id", "doc_id"]), ["map", "P_5", "ndcg"])
    assert_frame_equal(got.evaluate(coded), want)
    assert_frame_equal(fasteval.evaluate(qrels, coded, ["map", "P_5", "ndcg"]), want)


def test_small_tables_stay_exact_call_after_call(data) -> None:
    """One Evaluator's tables, call after call: a second run gets its own name and
    values, other queries or measures their own rows, and editing a returned frame
    changes nothing later."""
    qrels, runs = data
    ev = fasteval.Evaluator(qrels, MEASURES)
    first = ev.evaluate({"a": runs["r0"]})
    again = ev.evaluate({"b": runs["r1"]})
    assert again["run_id"].unique().to_list() == ["b"]
    assert_frame_equal(again, fasteval.evaluate(qrels, {"b": runs["r1"]}, MEASURES))
    edited = first.with_columns(pl.lit("x").alias("query_id"))
    first[0, "measure"] = "edited"
    assert edited["query_id"].unique().to_list() == ["x"]
    assert_frame_equal(
        ev.evaluate({"a": runs["r0"]}), fasteval.evaluate(qrels, {"a": runs["r0"]}, MEASURES)
    )
    fewer = {q: d for q, d in runs["r0"].items() if q != "q3"}  # one query less
    assert_frame_equal(ev.evaluate({"a": fewer}), fasteval.evaluate(qrels, {"a": fewer}, MEASURES))
    other = {q: d for q, d in runs["r0"].items() if q != "q5"}  # as many groups, one other
    assert_frame_equal(ev.evaluate({"a": other}), fasteval.evaluate(qrels, {"a": other}, MEASURES))
    for i in range(19):
        some = {q: d for q, d in runs["r0"].items() if q <= f"q{i % 8}"}
        ev2 = fasteval.Evaluator(qrels, MEASURES[: 1 + i // 8])
        assert_frame_equal(
            ev2.evaluate({"a": some}), fasteval.evaluate(qrels, {"a": some}, MEASURES[: 1 + i // 8])
        )


@pytest.mark.parametrize(
    ("measures", "compat", "per_query"),
    [
        (["all_trec"], 9, True),  # relstring's text rows, integer measures, runid
        (["all_trec"], 10, False),
        (["map", "P_5", "Accuracy(rel=2)@5"], 10, True),  # undefined rows left out
    ],
)
def test_the_engines_table_renders_and_converts_as_its_frame(
    measures: list[str], compat: int, per_query: bool, tmp_path: Path
) -> None:
    """The command renders trec_eval's text and writes Parquet from the engine's own
    table (no polars); both, and its frame, are those of the frame ``evaluate`` returns."""
    import pyarrow.parquet as pq

    from fasteval.engine.table import Long
    from fasteval.io.writers import format_trec, write_table
    from fasteval.measures.catalog import parse_request

    data = Path(fasteval.__file__).parent / "data"
    runs = pl.read_parquet(data / "sample_runs.parquet").filter(
        pl.col("run_id").is_in(pl.col("run_id").unique().sort().head(3).implode())
    )
    req = parse_request(measures, compat=compat)
    ev = fasteval.Evaluator(data / "sample.qrels", req, compat=compat)
    table = ev.table(runs, per_query=per_query)
    assert isinstance(table, Long)
    frame = ev.evaluate(runs, per_query=per_query)
    assert_frame_equal(table.to_polars(), frame)
    assert table.height == frame.height > 0
    write_table(table, "parquet", tmp_path / "rows.parquet")
    write_table(frame, "parquet", tmp_path / "frame.parquet")
    ours, theirs = (pq.read_table(tmp_path / f"{n}.parquet") for n in ("rows", "frame"))
    assert ours.schema.equals(theirs.schema)
    assert ours.equals(theirs)
    assert table.to_arrow().equals(frame.to_arrow())
    for labels in (False, True):
        text = format_trec(table, req.ranking, in_order=True, run_labels=labels)
        assert text == format_trec(frame, req.ranking, in_order=True, run_labels=labels)
        assert text.count("runid") == (3 if labels and not req.ranking.runid else 0) + (
            3 if req.ranking.runid else 0
        )


def test_evaluate_takes_every_option_with_its_default():
    """evaluate() hands its option keywords to the Evaluator by EvalOptions' field names."""
    import dataclasses
    import inspect

    from fasteval.options import DEFAULTS

    params = inspect.signature(fasteval.evaluate).parameters
    for f in dataclasses.fields(DEFAULTS):
        assert params[f.name].default == getattr(DEFAULTS, f.name), f.name


def test_hsa_and_do_are_refused_when_parsed_naming_the_function_that_computes_them():
    from fasteval.errors import MeasureError
    from fasteval.measures.catalog import parse_request

    with pytest.raises(MeasureError, match=r"^HSA, DO are not per-query .*\n.*histogram_analysis"):
        parse_request(["map", "hsa", "DO", "HSA"])
