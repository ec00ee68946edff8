"""Issue 17, "wrong results with exit 0": inputs the readers used to accept silently.

One class per test group: runs that share a run id across files, a run file
given as qrels, a UTF-8 byte-order mark, ids that are not UTF-8, the value
quoted for a bad score on a long line, non-run files in a folder of runs,
``run_id_from="filename"`` suffixes, and a header line.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fasteval
from fasteval.errors import FastevalWarning, InputFormatError
from fasteval.io import diversity, qrels_jg, tables, zscores
from fasteval.options import EvalOptions
from tests.conftest import shared_path

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
RUN_A = "1 Q0 a 1 3.0 same\n1 Q0 b 2 2.0 same\n2 Q0 c 1 1.0 same\n"
RUN_B = "1 Q0 b 1 3.0 same\n1 Q0 a 2 2.0 same\n2 Q0 c 1 1.0 same\n"


def gz(path: Path, text: bytes) -> Path:
    path.write_bytes(gzip.compress(text))
    return path


# -- two files, one run id ----------------------------------------------------------------


def test_two_text_files_with_one_run_tag_is_an_error_naming_both(write):
    a = write("a.txt", RUN_A)
    b = write("b.txt", RUN_B)
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs([a, b])
    msg = str(e.value)
    assert "run id 'same'" in msg and "a.txt" in msg and "b.txt" in msg
    assert "--run-id filename" in msg and "run_id_from='filename'" in msg
    assert "repeated" not in msg and "twice" not in msg  # not blamed on a document


def test_two_files_with_one_run_tag_fail_in_evaluate_too(write):
    q = write("q.txt", QRELS)
    a = write("a.txt", RUN_A)
    b = write("b.txt", RUN_B)
    with pytest.raises(InputFormatError, match="run id 'same'"):
        fasteval.evaluate(q, [a, b], ["map"])
    # documents differ between the files: before, this scored one merged run
    with pytest.raises(InputFormatError, match="run id 'same'"):
        fasteval.evaluate(q, [a, b], ["map"], on_duplicate="first")
    by_file = fasteval.evaluate(q, [a, b], ["map"], run_id_from="filename", per_query=False)
    assert sorted(by_file["run_id"].to_list()) == ["a", "b"]


def test_one_run_id_in_two_parquet_archives_or_text_and_parquet(tmp_path, write):
    a = write("a.txt", RUN_A)
    b = write("b.txt", RUN_B)
    pa_a = tmp_path / "a.parquet"
    pa_b = tmp_path / "b.parquet"
    fasteval.load_runs(a).write_parquet(pa_a)
    fasteval.load_runs(b).write_parquet(pa_b)
    for pair in ([pa_a, pa_b], [a, pa_b]):
        with pytest.raises(InputFormatError) as e:
            fasteval.load_runs(pair)
        assert "run id 'same'" in str(e.value)
        assert pair[0].name in str(e.value) and pair[1].name in str(e.value)


def test_ingest_style_batches_catch_a_run_id_across_batches(write):
    # `fasteval ingest` reads a folder in batches and concatenates them
    a = tables.run_columns([write("a.txt", RUN_A)])
    b = tables.run_columns([write("b.txt", RUN_B)])
    with pytest.raises(InputFormatError, match=r"run id 'same'.*a.txt.*b.txt"):
        tables.concat_runs([a, b])


def test_same_file_name_in_two_folders_with_run_id_from_filename(tmp_path):
    for d, text in (("x", RUN_A), ("y", RUN_B)):
        (tmp_path / d).mkdir()
        (tmp_path / d / "run.txt").write_text(text)
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs([tmp_path / "x" / "run.txt", tmp_path / "y" / "run.txt"],
                           run_id_from="filename")  # fmt: skip
    assert "run id 'run'" in str(e.value) and "rename" in str(e.value)


def test_diversity_runs_check_run_ids_too(write):
    q = write("div.qrels", "1 1 a 1\n1 2 b 1\n2 1 c 1\n")
    a = write("a.txt", RUN_A)
    b = write("b.txt", RUN_B)
    with pytest.raises(InputFormatError, match="run id 'same'"):
        fasteval.diversity_evaluate(q, [a, b])


@pytest.mark.realdata
def test_trec_web_2012_baselines_all_tagged_indri():
    folder = shared_path("trec_web_2009_2014", "baseline_runs_2012")
    with pytest.raises(InputFormatError) as e:
        tables.run_columns([folder])
    assert "run id 'indri'" in str(e.value) and "--run-id filename" in str(e.value)
    runs = tables.run_columns([folder], EvalOptions(run_id_from="filename"))
    assert sorted(runs.run_names) == sorted(
        p.name.removesuffix(".gz").removesuffix(".txt") for p in folder.iterdir()
    )
    assert len(runs.run_names) == 8


# -- a run file given as qrels --------------------------------------------------------------


@pytest.mark.parametrize("reader", ["qrels", "diversity", "qrels_jg"])
def test_a_run_file_as_qrels_is_recognised(write, reader):
    r = write("run.txt", "1 Q0 a 1 12.5 myrun\n1 Q0 b 2 11.0 myrun\n")
    read = {
        "qrels": fasteval.load_qrels,
        "diversity": diversity.load_diversity_qrels,
        "qrels_jg": qrels_jg.read_qrels_jg,
    }[reader]
    with pytest.raises(InputFormatError) as e:
        read(r)
    msg = str(e.value)
    assert "run.txt" in msg and "looks like a run file" in msg and "Q0" in msg


def test_a_run_file_as_qrels_fails_evaluate(write):
    r = write("run.txt", "1 Q0 a 1 12.5 myrun\n1 Q0 b 2 11.0 myrun\n")
    with pytest.raises(InputFormatError, match="looks like a run file"):
        fasteval.evaluate(r, r, ["map"])


def test_qrels_with_an_extra_column_are_still_qrels(write):
    q = write("q.txt", "1 0 a 1 extra\n1 0 b 0 extra\n")
    assert fasteval.load_qrels(q)["relevance"].to_list() == [1, 0]


# -- byte-order mark ----------------------------------------------------------------------


@pytest.mark.parametrize("compress", [False, True])
def test_utf8_bom_is_stripped(tmp_path, compress):
    qtext = b"\xef\xbb\xbf" + QRELS.encode()
    rtext = b"\xef\xbb\xbf" + RUN_A.encode()
    if compress:
        q, r = gz(tmp_path / "q.gz", qtext), gz(tmp_path / "r.gz", rtext)
    else:
        q, r = tmp_path / "q.txt", tmp_path / "r.txt"
        q.write_bytes(qtext)
        r.write_bytes(rtext)
    assert fasteval.load_qrels(q)["query_id"].to_list() == ["1", "1", "2"]
    assert fasteval.load_runs(r)["query_id"].to_list() == ["1", "1", "2"]
    d = diversity.load_diversity_qrels(q)
    assert d["query_id"].to_list() == ["1", "1", "2"]
    assert qrels_jg.read_qrels_jg(q).qid == ["1", "1", "2"]
    z = tmp_path / "z.txt"
    z.write_bytes(b"\xef\xbb\xbf1 map 0.5 0.1\n")
    assert list(zscores.read_zscores(z).table) == [("1", "map")]


# -- ids that are not UTF-8 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line2", "col"),
    [(b"1 Q0 d\xe9 2 2.0 r\n", "doc"), (b"\xff1 Q0 b 2 2.0 r\n", "query"),
     (b"1 Q0 b 2 2.0 r\xe9\n", "tag")],
)  # fmt: skip
@pytest.mark.parametrize("compress", [False, True])
def test_non_utf8_run_ids_are_an_error_with_file_line_and_offset(tmp_path, line2, col, compress):
    text = b"1 Q0 a 1 3.0 r\n" + line2
    p = gz(tmp_path / "r.gz", text) if compress else tmp_path / "r.txt"
    if not compress:
        p.write_bytes(text)
    offset = text.index(next(b for b in (b"\xe9", b"\xff") if b in text))
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs(p)
    msg = str(e.value)
    assert f"{p.name}:2" in msg and "not valid UTF-8" in msg and f"byte {offset}" in msg


def test_two_run_tags_differing_only_in_invalid_bytes_are_not_merged(tmp_path):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_bytes(b"1 Q0 a 1 3.0 r\xe9\n")
    b.write_bytes(b"1 Q0 a 1 3.0 r\xe8\n")
    with pytest.raises(InputFormatError, match="not valid UTF-8"):
        fasteval.load_runs([a, b])


def test_non_utf8_qrels_and_diversity_ids(tmp_path):
    q = tmp_path / "q.txt"
    q.write_bytes(b"1 0 a 1\n1 0 b\xe9 0\n")
    for read in (fasteval.load_qrels, diversity.load_diversity_qrels, qrels_jg.read_qrels_jg):
        with pytest.raises(InputFormatError, match=r"q.txt:2: .*not valid UTF-8.*byte 13 "):
            read(q)


def test_non_utf8_binary_columns_in_parquet(tmp_path):
    t = pa.table(
        {
            "run_id": pa.array([b"r", b"r"], pa.binary()),
            "query_id": pa.array([b"1", b"1"], pa.binary()),
            "doc_id": pa.array([b"a", b"b\xe9"], pa.binary()),
            "score": [2.0, 1.0],
        }
    )
    p = tmp_path / "runs.parquet"
    pq.write_table(t, p)
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs(p)
    assert "runs.parquet, row 2" in str(e.value) and "doc_id" in str(e.value)
    assert "not valid UTF-8" in str(e.value)
    # valid UTF-8 in binary columns is read as text
    good = t.set_column(2, "doc_id", pa.array([b"a", "b\u00e9".encode()], pa.binary()))
    pq.write_table(good, p)
    assert fasteval.load_runs(p)["doc_id"].to_list() == ["a", "b\u00e9"]


def test_utf8_ids_are_fine(write):
    r = write("r.txt", "1 Q0 caf\u00e9 1 3.0 r\u00e9\n")
    runs = fasteval.load_runs(r)
    assert runs["doc_id"].to_list() == ["caf\u00e9"] and runs["run_id"].to_list() == ["r\u00e9"]


# -- a bad score on a long line -----------------------------------------------------------


@pytest.mark.parametrize("doc_len", [10, 5000, 70000])
def test_bad_score_is_quoted_whatever_the_line_length(write, doc_len):
    r = write("r.txt", "1 Q0 a 1 1.0 r\n1 Q0 " + "d" * doc_len + " 2 1.2.3 r\n")
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs(r)
    assert "r.txt:2: score is not a finite number: '1.2.3'" in str(e.value)


def test_bad_relevance_is_quoted_on_a_long_qrels_line(write):
    q = write("q.txt", "1 0 " + "d" * 5000 + " x1\n")
    with pytest.raises(InputFormatError, match="relevance is not an integer: 'x1'"):
        fasteval.load_qrels(q)


# -- a folder of runs with other files ----------------------------------------------------


def test_folder_skips_readme_and_non_run_files_with_a_warning(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    (d / "a.txt").write_text(RUN_A)
    (d / "b.gz").write_bytes(gzip.compress(RUN_B.replace("same", "other").encode()))
    (d / "README").write_text("These are the runs of the track.\nSee the overview paper.\n")
    (d / "notes.md").write_text("# Notes\n\n* run a is the baseline\n")
    (d / "empty.txt").write_text("")
    with pytest.warns(FastevalWarning, match=r"skipped 3 file\(s\).*README.*notes.md"):
        runs = fasteval.load_runs(d)
    assert sorted(set(runs["run_id"].to_list())) == ["other", "same"]


def test_folder_with_a_broken_run_file_is_not_skipped(tmp_path):
    # a run file with a bad line is still a run file: an error, not a skip
    d = tmp_path / "runs"
    d.mkdir()
    (d / "a.txt").write_text(RUN_A + "2 Q0 d 2 oops same\n")
    with pytest.raises(InputFormatError, match=r"a\.txt:4: score is not a finite number"):
        fasteval.load_runs(d)


def test_folder_of_only_non_run_files(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    (d / "README").write_text("nothing here\n")
    with pytest.raises(InputFormatError, match="no run files"), pytest.warns(FastevalWarning):
        fasteval.load_runs(d)


@pytest.mark.parametrize(
    ("name", "run_id"),
    [("input.INQ603.gz", "input.INQ603"), ("bm25.txt", "bm25"), ("bm25.txt.gz", "bm25"),
     ("bm25.run", "bm25.run"), ("bm25", "bm25")],
)  # fmt: skip
def test_run_id_from_filename_drops_txt_and_gz(tmp_path, name, run_id):
    p = tmp_path / name
    if name.endswith(".gz"):
        gz(p, RUN_A.encode())
    else:
        p.write_text(RUN_A)
    assert fasteval.load_runs(p, run_id_from="filename")["run_id"].unique().to_list() == [run_id]


# -- a header line ------------------------------------------------------------------------


@pytest.mark.parametrize("run_id_from", ["tag", "filename"])
@pytest.mark.parametrize(
    "header", ["qid Q0 docno rank score tag", "query_id\titer\tdoc_id\trank\tscore\trun_id"]
)
def test_run_header_line_is_explained_once(write, header, run_id_from):
    r = write("r.txt", header + "\n" + RUN_A)
    with pytest.raises(InputFormatError) as e:
        fasteval.load_runs(r, run_id_from=run_id_from)
    msg = str(e.value)
    assert "r.txt:1" in msg and "header" in msg
    assert "--lenient" not in msg and "--run-id" not in msg


def test_run_header_line_skipped_when_lenient(write):
    r = write("r.txt", "qid Q0 docno rank score tag\n" + RUN_A)
    with pytest.warns(FastevalWarning, match="skipped 1 malformed run line"):
        runs = fasteval.load_runs(r, lenient=True)
    assert runs["run_id"].unique().to_list() == ["same"] and runs.height == 3


def test_qrels_header_line_is_explained(write):
    q = write("q.txt", "qid iter docno rel\n" + QRELS)
    with pytest.raises(InputFormatError, match=r"q.txt:1: .*header"):
        fasteval.load_qrels(q)
    d = write("d.txt", "topic subtopic docno judgment\n" + QRELS)
    with pytest.raises(InputFormatError, match=r"d.txt:1: .*header"):
        diversity.load_diversity_qrels(d)
    j = write("j.txt", "qid jg docno rel\n" + QRELS)
    with pytest.raises(InputFormatError, match=r"j.txt:1: .*header"):
        qrels_jg.read_qrels_jg(j)


def test_a_bad_first_grade_is_not_called_a_header(write):
    q = write("q.txt", "1 0 z 1.5\n" + QRELS)
    with pytest.raises(InputFormatError, match=r"relevance is not an integer: '1\.5'") as e:
        fasteval.load_qrels(q)
    assert "header" not in str(e.value)


def test_web_2012_folder_copy_with_readme(tmp_path):
    """The folder shape of issue 17: eight runs sharing a tag, plus a README."""
    d = tmp_path / "baseline_runs_2012"
    d.mkdir()
    for i in range(3):
        (d / f"run{i}.txt").write_text(RUN_A.replace("same", "indri"))
    (d / "README.txt").write_text("Baseline runs made with Indri.\n")
    with (
        pytest.warns(FastevalWarning, match="README.txt"),
        pytest.raises(InputFormatError, match="run id 'indri'"),
    ):
        fasteval.load_runs(d)
    with pytest.warns(FastevalWarning, match="README.txt"):
        df = fasteval.load_runs(d, run_id_from="filename")
    assert sorted(df["run_id"].unique().to_list()) == ["run0", "run1", "run2"]
