"""Batched (streaming) ranking evaluation equals the unbatched path, frame for frame.

``evaluate(..., batch_rows=HUGE)`` takes the unbatched path (one batch is
:func:`fasteval.engine.ranking.evaluate_ranking` itself); small budgets cut the
runs into batches of whole runs. Every comparison is ``DataFrame.equals``.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from fasteval.api import evaluate
from fasteval.cli import main
from fasteval.engine import stream
from fasteval.errors import DataMismatchError, FastevalError, InputFormatError, ParameterError
from fasteval.io.batches import BATCH_ROWS_ENV, PieceReader, plan_batches
from fasteval.io.files import Workspace
from fasteval.io.tables import run_columns
from fasteval.io.trec import parse_run_files, parse_run_piece
from tests.conftest import write_lines

UNBATCHED = 10**12
MEASURES = ["map", "P_10", "ndcg_cut_10", "recall_100", "recip_rank", "bpref", "ndcg"]
# query ids whose byte order differs from their numeric and first-appearance order
QIDS = ["10", "9", "101", "2", "q7", "Q7", "3", "30"]


def _qrels_text(rng: np.random.Generator) -> str:
    lines = []
    for q in [*QIDS[:-1], "only-qrels"]:  # "30" is in the runs only
        docs = rng.choice(60, size=int(rng.integers(3, 25)), replace=False)
        lines += [f"{q} 0 d{d} {int(rng.integers(0, 3))}" for d in docs]
    return "\n".join(lines) + "\n"


def _run_lines(rng: np.random.Generator, tag: str, queries: list[str] | None = None) -> list[str]:
    lines = []
    qs = queries or list(rng.choice(QIDS, size=int(rng.integers(2, len(QIDS))), replace=False))
    for q in qs:
        docs = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
        # few distinct scores: ties broken by document id
        scores = np.round(rng.random(len(docs)), 1)
        lines += [
            f"{q} Q0 d{d} {i} {s} {tag}" for i, (d, s) in enumerate(zip(docs, scores, strict=True))
        ]
    return lines


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Qrels and 9 run files: plain and gzipped, one of a single line, one large."""
    rng = np.random.default_rng(7)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels_text(rng))
    paths = []
    for i in range(8):
        lines = _run_lines(rng, f"run{i}")
        p = tmp_path / (f"r{i}.txt" + (".gz" if i % 2 else ""))
        paths.append(write_lines(p, lines))
    paths.append(write_lines(tmp_path / "one.txt", ["9 Q0 d3 1 0.5 oneline"]))
    big = _run_lines(rng, "big", QIDS * 3)  # repeated queries: many rows, same groups
    seen: set[tuple[str, str]] = set()
    big = [x for x in big if (k := (x.split()[0], x.split()[2])) not in seen and not seen.add(k)]
    big.sort(key=lambda x: QIDS.index(x.split()[0]))  # each query's lines together
    paths.insert(3, write_lines(tmp_path / "big.txt", big))
    return qrels, paths


def _same(qrels: object, runs: object, budgets: list[int], **kw: object) -> pl.DataFrame:
    ref = evaluate(qrels, runs, MEASURES, batch_rows=UNBATCHED, **kw)  # type: ignore[arg-type]
    for b in budgets:
        got = evaluate(qrels, runs, MEASURES, batch_rows=b, **kw)  # type: ignore[arg-type]
        assert got.equals(ref), (b, kw)
    return ref


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"complete": True},
        {"compat": 10, "complete": True},
        {"per_query": False},
        {"max_depth": 5, "judged_only": True},
        {"relevance_level": 2},
    ],
)
def test_batches_equal_unbatched(archive: tuple[Path, list[Path]], kw: dict) -> None:
    qrels, paths = archive
    # 1: every run its own batch (the one-line run too); 3: the big file alone, the
    # rest two or three per batch; the big file is larger than both budgets
    assert len(plan_batches(list(paths), 1)) == len(paths)
    assert len(plan_batches(list(paths), 3)) > 2
    ref = _same(qrels, paths, [1, 3], **kw)
    assert ref["run_id"].unique(maintain_order=True).to_list()[:4] == [
        "run0",
        "run1",
        "run2",
        "big",
    ]


def test_relstring_and_zscores(archive: tuple[Path, list[Path]], tmp_path: Path) -> None:
    qrels, paths = archive
    ref = evaluate(qrels, paths, ["map", "relstring"], batch_rows=UNBATCHED)
    got = evaluate(qrels, paths, ["map", "relstring"], batch_rows=1)
    assert "text" in ref.columns
    assert got.equals(ref)
    z = tmp_path / "z.txt"
    z.write_text("".join(f"{q} map 0.25 0.5\n" for q in QIDS[:4]))
    a = evaluate(qrels, paths, ["map", "P_5"], zscores=z, batch_rows=UNBATCHED)
    b = evaluate(qrels, paths, ["map", "P_5"], zscores=z, batch_rows=2)
    assert b.equals(a)


def test_one_run_in_two_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    qrels = write_lines(tmp_path / "qrels", _qrels_text(rng).splitlines())
    half1 = _run_lines(rng, "split", ["10", "9"])
    half2 = _run_lines(rng, "split", ["2", "3"])
    paths = [
        write_lines(tmp_path / "a", half1),
        write_lines(tmp_path / "b", _run_lines(rng, "other")),
        write_lines(tmp_path / "c.gz", half2),
    ]
    batches = plan_batches(list(paths), 1, split=False)
    assert [[Path(u.item).name for u in b.units] for b in batches] == [["a", "c.gz"], ["b"]]
    # split: every file in pieces, the run in four batches, aggregated at the end
    assert [len(b.units) for b in plan_batches(list(paths), 1)] == [1, 1, 1]
    # two files giving one run id are an error (nothing merged silently), batched or
    # not, and the message names both files
    for budget in (1, 2, 10**6):
        with pytest.raises(InputFormatError, match=r"run id 'split' is given by two files"):
            evaluate(qrels, paths, ["map"], batch_rows=budget)


def test_same_run_in_two_archives_falls_back_to_unbatched(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    qrels = write_lines(tmp_path / "qrels", _qrels_text(rng).splitlines())

    def frame(lines: list[str]) -> pl.DataFrame:
        rows = [x.split() for x in lines]
        return pl.DataFrame(
            {
                "run_id": [r[5] for r in rows],
                "query_id": [r[0] for r in rows],
                "doc_id": [r[2] for r in rows],
                "score": [float(r[4]) for r in rows],
            }
        )

    a = frame(_run_lines(rng, "same", ["10", "9"]) + _run_lines(rng, "x", ["2"]))
    b = frame(_run_lines(rng, "same", ["2", "3"]))
    pa_path = tmp_path / "a.parquet"
    a.write_parquet(pa_path)
    # one run id from two inputs is an error, batched or not (nothing merged silently)
    for budget in (1, UNBATCHED):
        with pytest.raises(InputFormatError, match=r"run id 'same' is given by two files"):
            evaluate(qrels, [pa_path, b], MEASURES, batch_rows=budget)


def test_mixed_text_and_tables_keep_the_readers_order(archive: tuple[Path, list[Path]]) -> None:
    qrels, paths = archive
    rows = [x.split() for x in gzip.decompress(paths[1].read_bytes()).decode().splitlines()]
    df = pl.DataFrame(
        {
            "run_id": ["frame"] * len(rows),
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "score": [float(r[4]) for r in rows],
        }
    )
    ref = _same(qrels, [df, paths[0], paths[2]], [1])
    assert ref["run_id"].unique(maintain_order=True).to_list() == ["run0", "run2", "frame"]


def test_run_ids_from_file_names(archive: tuple[Path, list[Path]]) -> None:
    qrels, paths = archive
    ref = _same(qrels, paths, [1, 4], run_id_from="filename")
    assert "r1" in set(ref["run_id"])  # .txt and .gz dropped


def test_a_run_without_qrels_queries_is_an_error_in_a_later_batch(
    archive: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    qrels, paths = archive
    stray = write_lines(tmp_path / "stray", ["30 Q0 d1 1 0.5 stray"])
    with pytest.raises(DataMismatchError, match="stray"):
        evaluate(qrels, [*paths, stray], MEASURES, batch_rows=1)
    with pytest.raises(DataMismatchError):
        evaluate(qrels, [*paths, stray], MEASURES, batch_rows=UNBATCHED)


def test_duplicate_document_still_raises_in_a_batch(
    archive: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    qrels, paths = archive
    dup = write_lines(tmp_path / "dup", ["9 Q0 d1 1 0.5 dup", "9 Q0 d1 2 0.4 dup"])
    with pytest.raises(Exception, match="appears more than once"):
        evaluate(qrels, [*paths, dup], MEASURES, batch_rows=1)
    kept = evaluate(qrels, [*paths, dup], MEASURES, batch_rows=1, on_duplicate="first")
    ref = evaluate(qrels, [*paths, dup], MEASURES, batch_rows=UNBATCHED, on_duplicate="first")
    assert kept.equals(ref)


def test_budget_from_the_environment(
    archive: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels, paths = archive
    calls: list[tuple[int, int]] = []
    monkeypatch.setenv(BATCH_ROWS_ENV, "1")
    got = evaluate(qrels, paths, MEASURES, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (len(paths), len(paths))
    assert [d for d, _ in calls] == sorted({d for d, _ in calls})
    assert len(calls) == len(paths)
    assert got.equals(evaluate(qrels, paths, MEASURES, batch_rows=UNBATCHED))
    monkeypatch.setenv(BATCH_ROWS_ENV, "many")
    with pytest.raises(ParameterError, match=BATCH_ROWS_ENV):
        evaluate(qrels, paths, MEASURES)
    with pytest.raises(ParameterError, match="batch_rows must be positive"):
        evaluate(qrels, paths, MEASURES, batch_rows=0)


def test_budget_estimates_rows_from_sizes(archive: tuple[Path, list[Path]]) -> None:
    _, paths = archive
    sizes = {
        Path(u.item).name: u.rows for b in plan_batches(list(paths), UNBATCHED) for u in b.units
    }
    n_big = len(paths[3].read_text().splitlines())
    # ~48 bytes a line estimated, the gzip trailer read for compressed files
    assert 0.3 * n_big <= sizes["big.txt"] <= 3 * n_big
    n1 = len(gzip.decompress(paths[1].read_bytes()).splitlines())
    assert 0.3 * n1 <= sizes["r1.txt.gz"] <= 3 * n1


def test_cli_batched_output_is_the_same(
    archive: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels, paths = archive
    args = ["eval", str(qrels), *map(str, paths), "-q", "-m", "map", "-m", "ndcg"]
    monkeypatch.setenv(BATCH_ROWS_ENV, str(UNBATCHED))
    ref = CliRunner().invoke(main, args)
    monkeypatch.setenv(BATCH_ROWS_ENV, "1")
    got = CliRunner().invoke(main, [*args, "--quiet"])
    assert ref.exit_code == 0, ref.output
    assert got.exit_code == 0, got.output
    assert got.stdout == ref.stdout
    assert "evaluating" not in got.stderr  # no bar: quiet, and not a terminal anyway


@pytest.mark.realdata
@pytest.mark.slow
def test_trec8_runs_batched_equal_unbatched(trec8_dir: Path) -> None:
    runs = sorted((trec8_dir / "runs").glob("*.gz"))[:8]
    qrels = trec8_dir / "qrels.trec8.adhoc.gz"
    # 20,000: each file (~50,000 lines) in pieces; 120,000: two or three files a batch
    _same(qrels, runs, [20_000, 120_000])
    _same(qrels, runs, [20_000], complete=True, compat=10, per_query=False)


def test_file_pieces_keep_query_groups_whole(archive: tuple[Path, list[Path]]) -> None:
    _, paths = archive
    for p in (paths[3], paths[1]):  # plain and gzip
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        for size in (1, 100, 10**6):
            reader = PieceReader(p, size)
            pieces = [bytes(buf[:n]) for buf, n in reader.pieces()]
            assert b"".join(pieces) == data
            qs = [{ln.split()[0] for ln in x.splitlines()} for x in pieces]
            assert sum(len(x) for x in qs) == len(set().union(*qs))  # no query in two pieces
            if size == 1:
                assert all(len(x) == 1 for x in qs)


def test_a_piece_stays_whole_while_the_next_is_read(
    archive: tuple[Path, list[Path]],
) -> None:
    """The next piece is read on a thread while one is in use, into the other buffer:
    the piece in use is not overwritten, and the next one is ready when asked for."""
    _, paths = archive
    for p in (paths[3], paths[1]):  # plain and gzip
        reader = PieceReader(p, 100)
        read = reader._next
        done: list[int] = []

        def spy(*a: Any, read: Any = read, done: list[int] = done) -> tuple[Any, int, int]:
            got = read(*a)
            done.append(got[2])
            return got  # type: ignore[no-any-return]

        reader._next = spy  # type: ignore[method-assign]
        seen: list[bytes] = []
        for k, (buf, n) in enumerate(reader.pieces()):
            before = bytes(buf[:n])
            if done[k] >= 0:  # not the last piece: the next is read meanwhile
                deadline = time.monotonic() + 10
                while len(done) <= k + 1 and time.monotonic() < deadline:
                    time.sleep(0.001)
                assert len(done) > k + 1
            assert bytes(buf[:n]) == before  # the next piece went to the other buffer
            seen.append(before)
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        assert len(seen) > 2 and b"".join(seen) == data


def test_a_piece_parses_as_those_lines_of_the_whole_file(
    archive: tuple[Path, list[Path]],
) -> None:
    _, paths = archive
    for p in (paths[3], paths[1]):  # plain and gzip
        whole = parse_run_files([p])
        reader = PieceReader(p, 300)
        got: list[str] = []
        n_pieces = 0
        lines = 0
        for buf, n in reader.pieces():
            n_pieces += 1
            cols, counted = parse_run_piece(buf, n, p, lines_before=lines)
            assert counted == int(np.count_nonzero(buf[:n] == 10))
            lines += counted
            assert cols.run_names == whole.run_names
            assert cols.source.where(0) == whole.source.where(len(got))
            got.extend(cols.doc.value(i) for i in range(len(cols)))
            lo = len(got) - len(cols)
            assert np.array_equal(cols.score, whole.score[lo : len(got)])
        assert got == [whole.doc.value(i) for i in range(len(whole))]
        assert n_pieces > 2


def test_a_query_met_again_later_in_a_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    qrels = write_lines(tmp_path / "qrels", _qrels_text(rng).splitlines())
    lines = _run_lines(rng, "unsorted", ["10", "9", "2"])
    lines += [x.replace("d", "e", 1) for x in _run_lines(rng, "unsorted", ["10"])]
    lines = [
        f"{x.split()[0]} Q0 e{i} 0 0.3 unsorted" if x.split()[2].startswith("e") else x
        for i, x in enumerate(lines)
    ]
    p = write_lines(tmp_path / "unsorted.gz", lines)
    other = write_lines(tmp_path / "o", _run_lines(rng, "o"))
    # the (run, "10") group in two pieces: that file is read again whole, the other not
    with pytest.MonkeyPatch.context() as mp:
        read = []
        mp.setattr(
            stream, "run_columns", lambda items, o: read.append(items) or run_columns(items, o)
        )
        ref = _same(qrels, [p, other], [1])
    assert read == [[p]]
    n10 = ref.filter((pl.col("run_id") == "unsorted") & (pl.col("query_id") == "10"))
    assert n10.height == len(MEASURES)


def test_errors_in_a_piece_name_the_whole_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    qrels = write_lines(tmp_path / "qrels", _qrels_text(rng).splitlines())
    good = _run_lines(rng, "t", ["10", "9", "2", "3"])
    cases = {
        "bad score": ([*good, "q7 Q0 d1 0 nan? t"], 1),
        "tag": ([*good, "q7 Q0 d1 0 0.5 other"], 1),
        "duplicate": ([*good, "q7 Q0 d1 0 0.5 t", "q7 Q0 d1 1 0.4 t"], 2),
    }
    for name, (lines, at) in cases.items():
        p = write_lines(tmp_path / f"{name}.txt", lines)
        with pytest.raises(FastevalError) as whole:
            evaluate(qrels, [p], MEASURES, batch_rows=UNBATCHED)
        with pytest.raises(FastevalError) as pieces:
            evaluate(qrels, [p], MEASURES, batch_rows=1)
        assert f"{p}:{len(good) + at}" in str(whole.value), name
        assert str(pieces.value).split(" (")[0] == str(whole.value).split(" (")[0], name


def test_a_later_piece_is_checked_against_the_files_first_line(tmp_path: Path) -> None:
    # the whole file is not read again to word these: each message must be the whole read's
    rng = np.random.default_rng(17)
    qrels = write_lines(tmp_path / "qrels", _qrels_text(rng).splitlines())
    good = _run_lines(rng, "t", ["10", "9", "2", "3"])
    cases = {
        "tag inside a piece": ["q7 Q0 d1 0 0.5 t", "q7 Q0 d2 1 0.4 other"],
        "tag leading a piece": ["q7 Q0 d1 0 0.5 other", "q7 Q0 d2 1 0.4 t"],
        "a header-like line": ["q7 Q0 d1 rank score t", "q7 Q0 d2 1 0.4 t"],
    }
    for name, tail in cases.items():
        p = write_lines(tmp_path / f"{name}.txt", [*good, *tail])
        with pytest.raises(FastevalError) as whole:
            evaluate(qrels, [p], MEASURES, batch_rows=UNBATCHED)
        with pytest.raises(FastevalError) as pieces:
            evaluate(qrels, [p], MEASURES, batch_rows=1)
        assert f"{p}:{len(good) + 1}" in str(whole.value) or name == "tag inside a piece"
        assert str(pieces.value) == str(whole.value), name


def test_a_workspace_is_reused_and_changes_nothing(archive: tuple[Path, list[Path]]) -> None:
    _, paths = archive
    ws = Workspace()
    first = parse_run_files([paths[0], paths[1]], workspace=ws)
    storage = first.doc.buf
    second = parse_run_files([paths[2]], workspace=ws)  # smaller: fits the same storage
    assert np.shares_memory(storage, second.doc.buf)
    fresh = parse_run_files([paths[2]])
    assert second.run_names == fresh.run_names
    for a, b in ((second.doc, fresh.doc), (second.qid, fresh.qid)):
        assert [a.value(i) for i in range(len(a))] == [b.value(i) for i in range(len(b))]
    assert np.array_equal(second.score, fresh.score)
    assert second.rank.equals(fresh.rank)
    assert [second.source.where(i) for i in range(len(second))] == [
        fresh.source.where(i) for i in range(len(fresh))
    ]
