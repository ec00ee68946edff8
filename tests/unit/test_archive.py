"""`fasteval ingest` streams into a sorted archive; archives are evaluated in pieces.

Every comparison is ``DataFrame.equals`` against the text files evaluated
unbatched (``batch_rows=UNBATCHED`` is :func:`fasteval.engine.ranking.evaluate_ranking`
itself). Tiny budgets (``FASTEVAL_BATCH_ROWS`` for ingest, ``batch_rows`` for
evaluate) force many batches and many row groups.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from fasteval.api import evaluate
from fasteval.cli import main
from fasteval.errors import InputFormatError
from fasteval.io import archive
from fasteval.io import batches as io_batches
from fasteval.io.tables import load_runs, run_columns
from tests.conftest import write_lines

UNBATCHED = 10**12
MEASURES = ["map", "P_10", "ndcg_cut_10", "recall_100", "recip_rank", "bpref", "ndcg", "Rprec"]
# query ids whose byte order differs from their numeric and first-appearance order
QIDS = ["10", "9", "101", "2", "q7", "Q7", "3", "30"]


def _make(tmp_path: Path, seed: int = 11, n_runs: int = 9) -> tuple[Path, list[Path]]:
    """Qrels and run files: queries out of byte order, ties, a repeated document."""
    rng = np.random.default_rng(seed)
    qlines = []
    for q in QIDS[:-1]:  # "30" is in the runs only
        for d in rng.choice(50, size=int(rng.integers(3, 20)), replace=False):
            qlines.append(f"{q} 0 d{d} {int(rng.integers(0, 3))}")
    qrels = write_lines(tmp_path / "qrels.txt", qlines)
    paths = []
    for i in range(n_runs):
        lines = []
        qs = list(rng.choice(QIDS, size=int(rng.integers(2, len(QIDS))), replace=False))
        for q in qs:
            docs = list(rng.choice(50, size=int(rng.integers(1, 25)), replace=False))
            if i == 2:
                docs.append(docs[0])  # a repeated document (on_duplicate="first")
            scores = np.round(rng.random(len(docs)), 1)  # few distinct scores: ties
            lines += [
                f"{q} Q0 d{d} {k} {s} run{i}"
                for k, (d, s) in enumerate(zip(docs, scores, strict=True))
            ]
        p = tmp_path / (f"r{i}.txt" + (".gz" if i % 2 else ""))
        paths.append(write_lines(p, lines))
    return qrels, paths


def _ingest(paths: list[Path], out: Path, rows: int, *args: str) -> Any:
    env = {io_batches.BATCH_ROWS_ENV: str(rows)}
    return CliRunner().invoke(main, ["ingest", *map(str, paths), "-o", str(out), *args], env=env)


@pytest.mark.parametrize("kw", [{}, {"on_duplicate": "first", "complete": True, "compat": 10}])
def test_ingest_then_eval_equals_text_eval(tmp_path: Path, kw: dict[str, Any]) -> None:
    qrels, paths = _make(tmp_path)
    if not kw:
        paths.pop(2)  # the run with a repeated document is an error by default
    out = tmp_path / "a.parquet"
    res = _ingest(paths, out, 40)
    assert res.exit_code == 0, res.output
    ref = evaluate(qrels, paths, MEASURES, batch_rows=UNBATCHED, **kw)
    for budget in (UNBATCHED, 1, 30, 100):
        got = evaluate(qrels, out, MEASURES, batch_rows=budget, **kw)
        assert got.equals(ref), budget
    # the archive holds the rows of the text files, with their runs in input order
    assert load_runs(out)["run_id"].unique(maintain_order=True).to_list() == [
        f"run{i}" for i in ([0, 1, 3, 4, 5, 6, 7, 8] if not kw else range(9))
    ]
    assert load_runs(out).height == load_runs(paths).height


def test_archive_layout_sorted_typed_and_tagged(tmp_path: Path) -> None:
    _, paths = _make(tmp_path)
    out = tmp_path / "a.parquet"
    res = _ingest(paths, out, 40)
    assert res.exit_code == 0, res.output
    assert "9 runs" in res.stderr
    info = archive.archive_info(out)
    assert info is not None and info["version"] == archive.VERSION
    f = pq.ParquetFile(out)
    assert f.metadata.num_row_groups > 3
    schema = f.schema_arrow
    assert str(schema.field("run_id").type).startswith("dictionary")
    assert str(schema.field("query_id").type).startswith("dictionary")
    assert str(schema.field("doc_id").type) == "large_string"
    assert f.metadata.row_group(0).column(0).compression == "LZ4"
    # required columns (no definition levels to decode), but rank; scores byte-split
    assert [c for c in schema.names if schema.field(c).nullable] == ["rank"]
    assert "BYTE_STREAM_SPLIT" in f.metadata.row_group(0).column(4).encodings
    df = pl.read_parquet(out).with_row_index("i")
    text = load_runs(paths)
    assert df.height == text.height
    # run (input order), then query in byte order, then within a group trec_eval's ranking
    # order (score descending, doc id descending by bytes), or input order in a group that
    # repeats a document (run2's)
    run_pos = {f"run{i}": i for i in range(9)}
    key = df.select(
        pl.col("run_id").cast(pl.String).replace_strict(run_pos).alias("r"),
        pl.col("query_id").cast(pl.String).cast(pl.Binary).alias("q"),
    )
    assert key.equals(key.sort(["r", "q"], maintain_order=True))
    repeats = pl.col("doc_id").is_duplicated().any().over("run_id", "query_id")
    grouped_text = text.with_row_index("i").sort(
        pl.col("run_id").replace_strict(run_pos),
        pl.col("query_id").cast(pl.Binary),
        pl.when(repeats).then(0.0).otherwise(pl.col("score")),
        pl.when(repeats).then(pl.lit(b"")).otherwise(pl.col("doc_id").cast(pl.Binary)),
        "i",
        descending=[False, False, True, True, False],
    )
    ties = grouped_text.filter(~repeats).select("run_id", "query_id", "score")
    assert ties.is_duplicated().any()  # ties decided by doc id
    assert grouped_text.filter(repeats).height > 0
    cols = ["query_id", "doc_id", "rank", "score"]
    assert df.select(pl.col("query_id").cast(pl.String), *cols[1:]).equals(
        grouped_text.select(cols)
    )
    # every row group ends where a (run, query) group ends
    ends = np.cumsum([f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)])
    r, q = df["run_id"].cast(pl.String).to_list(), df["query_id"].cast(pl.String).to_list()
    for e in ends[:-1]:
        assert (r[e - 1], q[e - 1]) != (r[e], q[e])


def test_archive_pieces_are_really_streamed(tmp_path: Path, monkeypatch: Any) -> None:
    qrels, paths = _make(tmp_path, seed=3)
    paths.pop(2)
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    ref = evaluate(qrels, out, MEASURES, batch_rows=UNBATCHED)
    batches = io_batches.plan_batches([out], 60)
    assert len(batches) == 1 and batches[0].pieces and batches[0].units[0].archive
    planned = archive.row_group_pieces(out, 60)
    assert len(planned.groups) > 2 and planned.verified  # ingest wrote a digest

    def whole(*_: object, **__: object) -> None:
        raise AssertionError("read the whole archive")

    pieces: list[list[int]] = []
    checks: set[Any] = set()
    real = io_batches.read_row_groups  # (each piece decoded by io.batches.archive_piece)

    def piece(path: Any, groups: list[int], columns: Any = None, verified: Any = None) -> Any:
        assert verified is not None  # the digest is checked: the pages are not, twice
        pieces.append(groups)
        checks.add(verified)
        return real(path, groups, columns, verified=verified)

    monkeypatch.setattr(archive, "read_archive", whole)
    monkeypatch.setattr(io_batches, "read_row_groups", piece)
    assert evaluate(qrels, out, MEASURES, batch_rows=60).equals(ref)
    assert len(pieces) > 2
    # one digest check, joined (and matched) before the result was returned
    assert len(checks) == 1 and checks.pop().matched
    # mixed with text files: the archive is its own batch among them
    more = [paths[0].with_name("x.txt")]
    write_lines(more[0], [x.replace("run0", "extra") for x in paths[0].read_text().splitlines()])
    monkeypatch.undo()
    ref2 = evaluate(qrels, [*more, out], MEASURES, batch_rows=UNBATCHED)
    monkeypatch.setattr(archive, "read_archive", whole)
    assert evaluate(qrels, [*more, out], MEASURES, batch_rows=60).equals(ref2)


def _two_cores_and_an_archive(tmp_path: Path, monkeypatch: Any) -> tuple[Path, Path, Any]:
    """Qrels, an archive of many row groups and its evaluation unbatched; from here on the
    kernels see two cores, whatever this machine has (a one-thread block still gets one)."""
    from fasteval import parallel

    qrels, paths = _make(tmp_path, seed=3)
    paths.pop(2)
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    ref = evaluate(qrels, out, MEASURES, batch_rows=UNBATCHED)
    one = parallel._kernel_threads  # a kernel_threads(1) block's, else two
    monkeypatch.setattr(parallel, "threads", lambda: getattr(one, "n", None) or 2)
    return qrels, out, ref


def test_archive_pieces_are_scored_one_a_thread_their_kernels_serial(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Each piece is read and scored on a piece thread of its own, its kernels on that
    thread alone; the pieces come back in order, so the result is the whole archive's."""
    import threading

    from fasteval import parallel
    from fasteval.engine import stream

    qrels, out, ref = _two_cores_and_an_archive(tmp_path, monkeypatch)

    seen: list[tuple[str, int]] = []
    real = stream._Stream.scored

    def scored(self: Any, cols: Any, unit: int) -> Any:
        seen.append((threading.current_thread().name, parallel.threads()))
        return real(self, cols, unit)

    monkeypatch.setattr(stream._Stream, "scored", scored)
    assert evaluate(qrels, out, MEASURES, batch_rows=60).equals(ref)
    assert len(seen) == len(archive.row_group_pieces(out, 60 // stream.PIECE_SHARE).groups) > 2
    assert all(name.startswith("fasteval-piece") and n == 1 for name, n in seen)


def test_archives_are_scored_on_every_thread_of_the_shared_pool_at_once(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Evaluations running on all the shared pool's threads (a caller's workers) read their
    archives' pieces on threads of their own: none waits for a pool thread it holds."""
    import threading

    from fasteval import parallel

    qrels, out, ref = _two_cores_and_an_archive(tmp_path, monkeypatch)
    pool = parallel.pool()
    got: list[Any] = []

    def every_thread() -> None:
        n = pool._max_workers
        jobs = [pool.submit(evaluate, qrels, out, MEASURES, batch_rows=60) for _ in range(n)]
        got.extend(j.result() for j in jobs)

    caller = threading.Thread(target=every_thread, daemon=True)
    caller.start()
    caller.join(60)
    assert not caller.is_alive(), "an evaluation waits for the pool it runs on"
    assert len(got) == pool._max_workers and all(g.equals(ref) for g in got)


def test_an_error_inside_an_archive_piece_is_the_unbatched_message(tmp_path: Path) -> None:
    qrels, paths = _make(tmp_path)  # paths[2] repeats a document
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    with pytest.raises(InputFormatError) as whole:
        evaluate(qrels, out, MEASURES, batch_rows=UNBATCHED)
    with pytest.raises(InputFormatError) as pieces:
        evaluate(qrels, out, MEASURES, batch_rows=30)
    assert str(pieces.value) == str(whole.value)
    assert "appears more than once" in str(whole.value) and "a.parquet, row" in str(whole.value)


@pytest.mark.parametrize("bad", ["null", "inf"])
def test_a_bad_row_in_a_later_archive_piece_is_named_as_in_the_whole(
    tmp_path: Path, bad: str
) -> None:
    import pyarrow as pa

    qrels, paths = _make(tmp_path, seed=3)
    paths.pop(2)
    good = tmp_path / "good.parquet"
    assert _ingest(paths, good, 25).exit_code == 0
    f = pq.ParquetFile(good)
    groups = [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)]
    table = f.read()
    row = int(np.cumsum(groups)[-2]) + 1  # in the last row group: a later piece
    score = table.column("score").to_pylist()
    score[row] = None if bad == "null" else float("inf")
    table = table.set_column(4, "score", pa.array(score, pa.float64()))
    out = tmp_path / "a.parquet"
    meta = {archive.META_KEY: f.schema_arrow.metadata[archive.META_KEY]}
    with pq.ParquetWriter(out, table.schema.with_metadata(meta)) as w:
        at = 0
        for n in groups:  # the same row groups: (run, query) groups whole
            w.write_table(table.slice(at, n))
            at += n
    assert archive.archive_info(out) is not None
    with pytest.raises(InputFormatError) as whole:
        evaluate(qrels, out, MEASURES, batch_rows=UNBATCHED)
    assert f"a.parquet, row {row + 1}: " in str(whole.value)
    assert len(io_batches.plan_batches([out], 30)[0].units) == 1
    with pytest.raises(InputFormatError) as pieces:
        evaluate(qrels, out, MEASURES, batch_rows=30)
    assert str(pieces.value) == str(whole.value)


def test_a_run_id_in_two_inputs_is_an_error_in_streaming_ingest(tmp_path: Path) -> None:
    _, paths = _make(tmp_path, n_runs=4)
    # two text files naming one run, in what would be different batches
    twin = write_lines(tmp_path / "twin.txt", [paths[0].read_text().splitlines()[0]])
    out = tmp_path / "a.parquet"
    res = _ingest([*paths, twin], out, 10)
    assert res.exit_code == 1
    assert "run id 'run0' is given by two files" in res.output
    assert "r0.txt" in res.output and "twin.txt" in res.output
    assert not out.exists()
    # a run met again in a later batch (a Parquet table after the text files)
    table = tmp_path / "t.parquet"
    load_runs([paths[3]]).write_parquet(table)
    res = _ingest([*paths, table], out, 10)
    assert res.exit_code == 1
    assert "run id 'run3' is given by two files" in res.output and "t.parquet" in res.output
    assert not out.exists()
    # run ids from file names: the same name in two folders
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        write_lines(tmp_path / d / "same.txt", [f"2 Q0 d{i} {i} 1.0 t{d}" for i in range(30)])
    res = _ingest([tmp_path / "x", tmp_path / "y"], out, 10, "--run-id", "filename")
    assert res.exit_code == 1 and "run id 'same'" in res.output and "rename" in res.output


def test_an_interrupted_ingest_leaves_no_file(tmp_path: Path, monkeypatch: Any) -> None:
    _, paths = _make(tmp_path, n_runs=6)
    bad = write_lines(tmp_path / "r9.txt", ["2 Q0 d1 1 not-a-score run9"])  # the last batch
    out = tmp_path / "a.parquet"
    out.write_bytes(b"an older archive")
    res = _ingest([*paths, bad], out, 20)
    assert res.exit_code == 1 and "r9.txt:1: score is not a finite number" in res.output
    assert out.read_bytes() == b"an older archive"  # untouched
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # Ctrl-C in the middle of writing
    calls = []

    def interrupt(self: archive.ArchiveWriter, cols: object) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(self, cols)  # type: ignore[arg-type]

    real = archive.ArchiveWriter.write
    monkeypatch.setattr(archive.ArchiveWriter, "write", interrupt)
    res = _ingest(paths, tmp_path / "b.parquet", 20)
    assert res.exit_code == 130 and len(calls) == 2
    assert not (tmp_path / "b.parquet").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # and the writer on its own
    with pytest.raises(KeyboardInterrupt), archive.ArchiveWriter(tmp_path / "c.parquet") as w:
        real(w, run_columns([paths[0]]))
        raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir() if "c.parquet" in p.name] == []


def test_a_foreign_parquet_file_is_read_whole_and_evaluates_the_same(tmp_path: Path) -> None:
    qrels, paths = _make(tmp_path, seed=5)
    paths.pop(2)
    ref = evaluate(qrels, paths, MEASURES, batch_rows=UNBATCHED)
    # shuffled rows (groups in many places), small row groups, plain strings: not ours
    rows = load_runs(paths).with_row_index("i")
    shuffled = rows.sample(fraction=1.0, shuffle=True, seed=1).drop("i")
    # runs keep their first appearance (the table's run order); queries interleave
    first = {r: k for k, r in enumerate(rows["run_id"].unique(maintain_order=True))}
    shuffled = shuffled.sort(pl.col("run_id").replace_strict(first), maintain_order=True)
    foreign = tmp_path / "foreign.parquet"
    shuffled.write_parquet(foreign, row_group_size=20)
    assert archive.archive_info(foreign) is None
    batches = io_batches.plan_batches([foreign], 30)
    assert len(batches) == 1 and not batches[0].pieces
    for budget in (UNBATCHED, 30):
        assert evaluate(qrels, foreign, MEASURES, batch_rows=budget).equals(ref)
    # a fasteval archive of an earlier layout (version 0) is foreign too
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    t = pq.read_table(out)
    header = t.schema.metadata[archive.META_KEY]
    meta = {archive.META_KEY: header.replace(b'"version": 1', b'"version": 0')}
    pq.write_table(t.replace_schema_metadata(meta), tmp_path / "v0.parquet")
    assert archive.archive_info(tmp_path / "v0.parquet") is None
    assert evaluate(qrels, tmp_path / "v0.parquet", MEASURES, batch_rows=30).equals(ref)


def test_an_archive_of_the_first_version_1_layout_reads_the_same(tmp_path: Path) -> None:
    """Archives written before the columns were required and scores byte-split (every
    column nullable, scores plain) are read as before, their digest checked."""
    import pyarrow as pa

    from fasteval.io.writers import write_parquet_table

    qrels, paths = _make(tmp_path, seed=5)
    paths.pop(2)
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    f = pq.ParquetFile(out, read_dictionary=["run_id", "query_id"])
    t = f.read()
    nullable = pa.schema([pa.field(c.name, c.type) for c in t.schema])
    first = tmp_path / "first.parquet"
    write_parquet_table(
        t.cast(nullable),
        first,
        row_group_size=f.metadata.row_group(0).num_rows,
        metadata={archive.META_KEY: t.schema.metadata[archive.META_KEY]},
        compression="lz4",
        use_dictionary=["run_id", "query_id"],
        column_encoding={"rank": "DELTA_BINARY_PACKED"},
    )
    old = pq.ParquetFile(first)
    assert all(old.schema_arrow.field(c).nullable for c in old.schema_arrow.names)
    assert "BYTE_STREAM_SPLIT" not in old.metadata.row_group(0).column(4).encodings
    assert archive.archive_info(first) is not None and archive.row_group_pieces(first, 30).verified
    ref = evaluate(qrels, paths, MEASURES, batch_rows=UNBATCHED)
    for budget in (UNBATCHED, 30):
        assert evaluate(qrels, first, MEASURES, batch_rows=budget).equals(ref)
    assert load_runs(first).equals(load_runs(out))


def test_an_archive_of_a_newer_layout_is_refused_in_one_line(tmp_path: Path) -> None:
    qrels, paths = _make(tmp_path, seed=5)
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    t = pq.read_table(out)
    header = t.schema.metadata[archive.META_KEY]
    meta = {archive.META_KEY: header.replace(b'"version": 1', b'"version": 9')}
    pq.write_table(t.replace_schema_metadata(meta), tmp_path / "v9.parquet")
    with pytest.raises(InputFormatError, match=r"v9\.parquet: an archive of layout version 9"):
        evaluate(qrels, tmp_path / "v9.parquet", MEASURES)
    res = CliRunner().invoke(main, ["eval", str(qrels), str(tmp_path / "v9.parquet")])
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert "written by a newer fasteval" in res.output and "Traceback" not in res.output


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_ingest_then_eval_equals_text_eval(tmp_path: Path, trec8_dir: Path) -> None:
    runs = sorted((trec8_dir / "runs").glob("*.gz"))[:5]
    qrels = trec8_dir / "qrels.trec8.adhoc.gz"
    out = tmp_path / "trec8.parquet"
    res = _ingest(runs, out, 60_000)  # one or two files a batch
    assert res.exit_code == 0, res.output
    assert pq.ParquetFile(out).metadata.num_row_groups >= 3
    ref = evaluate(qrels, runs, MEASURES, batch_rows=UNBATCHED)
    for budget in (UNBATCHED, 70_000):
        assert evaluate(qrels, out, MEASURES, batch_rows=budget).equals(ref)
    kw: dict[str, Any] = {"complete": True, "compat": 10, "per_query": False}
    ref = evaluate(qrels, runs, MEASURES, batch_rows=UNBATCHED, **kw)
    assert evaluate(qrels, out, MEASURES, batch_rows=70_000, **kw).equals(ref)


@pytest.mark.parametrize("dup", [False, True])
def test_dictionary_ids_read_as_their_decoded_strings(dup: bool) -> None:
    """Run and query ids kept dictionary-encoded (chunks with their own dictionaries, a
    dictionary repeating a value) give the columns of the decoded strings."""
    import pyarrow as pa

    from fasteval.io.tables import runs_from_table

    def chunk(runs: list[str], qids: list[str], words: list[str]) -> pa.Table:
        def enc(values: list[str]) -> pa.DictionaryArray:
            # odd rows take the last entry of a repeated value
            last = [len(words) - 1 - words[::-1].index(v) for v in values]
            first = [words.index(v) for v in values]
            idx = pa.array([last[i] if i % 2 else first[i] for i in range(len(values))], pa.int32())
            return pa.DictionaryArray.from_arrays(idx, pa.array(words))

        n = len(runs)
        return pa.table(
            {
                "run_id": enc(runs),
                "query_id": enc(qids),
                "doc_id": pa.array([f"d{i}" for i in range(n)]),
                "score": pa.array(np.arange(n, dtype=np.float64)),
            }
        )

    words = ["b", "a", "q1", "q2", "c"] + (["a"] if dup else [])
    t1 = chunk(["b", "b", "a", "a", "b"], ["q2", "q2", "q1", "q2", "q1"], words)
    t2 = chunk(["c", "a", "a"], ["q1", "q1", "q2"], list(reversed(words)))
    table = pa.concat_tables([t1, t2])
    plain = pa.table(
        {c: table.column(c).cast(pa.large_string()) for c in ("run_id", "query_id", "doc_id")}
        | {"score": table.column("score")}
    )
    got, ref = runs_from_table(table, "t"), runs_from_table(plain, "t")
    assert got.run_names == ref.run_names == ["b", "a", "c"]
    assert np.array_equal(got.run, ref.run)
    assert got.qid.to_arrow().equals(ref.qid.to_arrow())
    assert got.doc.to_arrow().equals(ref.doc.to_arrow())


def test_ingest_holds_one_batch_of_runs_at_a_time(tmp_path: Path, monkeypatch: Any) -> None:
    """Each write gets the runs of one planned batch, never everything."""
    _, paths = _make(tmp_path)
    sizes = [len(run_columns([p])) for p in paths]
    seen: list[int] = []
    real = archive.ArchiveWriter.write

    def spy(self: archive.ArchiveWriter, cols: Any) -> None:
        seen.append(len(cols))
        real(self, cols)

    monkeypatch.setattr(archive.ArchiveWriter, "write", spy)
    assert _ingest(paths, tmp_path / "a.parquet", 60).exit_code == 0
    # one write per planned batch (rows estimated from file sizes, see engine.stream)
    plan = io_batches.plan_batches(paths, 60, split=False)
    size = dict(zip(paths, sizes, strict=True))
    assert seen == [sum(size[u.item] for u in b.units) for b in plan]
    assert len(seen) > 3 and max(seen) < sum(sizes) / 2


def test_read_runs_reads_only_the_row_groups_of_the_runs_asked_for(tmp_path: Path) -> None:
    _, paths = _make(tmp_path, seed=3)
    paths.pop(2)
    out = tmp_path / "a.parquet"
    assert _ingest(paths, out, 25).exit_code == 0
    whole = pl.from_arrow(archive.read_archive(out))
    names = whole["run_id"].unique(maintain_order=True).to_list()
    assert len(names) > 2
    import pyarrow.parquet as pq

    n_groups = pq.ParquetFile(out).metadata.num_row_groups
    for pick in ([names[0]], names[1:3], [names[-1], "no such run"]):
        (groups,), verified, _ = archive.run_row_groups(out, pick)
        assert verified
        assert 0 < len(groups) < n_groups
        got = pl.from_arrow(archive.read_runs(out, pick, ["run_id", "query_id", "doc_id"]))
        want = whole.filter(pl.col("run_id").is_in(pick)).select("run_id", "query_id", "doc_id")
        assert got.cast({"run_id": pl.String, "query_id": pl.String}).equals(
            want.cast({"run_id": pl.String, "query_id": pl.String})
        )
    # an id above every run id (byte order) is in no row group's range: nothing is read
    assert archive.run_row_groups(out, ["~ no such run"]).groups == [[]]
    assert archive.read_runs(out, ["~ no such run"]).num_rows == 0
