"""The `fasteval` command: outputs, formats, and one-line errors with a non-zero exit."""

from __future__ import annotations

import json

import polars as pl
import pytest
from click.testing import CliRunner

from fasteval.cli import main
from tests.conftest import one_line_error

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 0\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 x 3 1.0 r1\n2 Q0 d 1 5 r1\n2 Q0 a 2 4 r1\n"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_trec_format_matches_trec_eval_layout(runner, write):
    q, r = write("q", QRELS), write("r", RUN)
    res = runner.invoke(main, ["eval", str(q), str(r), "-m", "map", "-m", "num_ret", "-q"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == f"{'num_ret':<22}\t1\t3"
    assert lines[1] == f"{'map':<22}\t1\t0.5000"  # R=2, one relevant at rank 1
    assert lines[-1] == f"{'map':<22}\tall\t0.7500"  # (0.5 + 1) / 2


def test_default_measures_are_official_with_runid(runner, write):
    q, r = write("q", QRELS), write("r", RUN)
    res = runner.invoke(main, ["eval", str(q), str(r)])
    assert res.exit_code == 0
    assert res.output.splitlines()[0] == f"{'runid':<22}\tall\tr1"
    assert "P_1000" in res.output


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_other_formats_hold_the_long_table(runner, write, tmp_path, fmt):
    q, r = write("q", QRELS), write("r", RUN)
    out = tmp_path / f"out.{fmt}"
    res = runner.invoke(
        main, ["eval", str(q), str(r), "-m", "P@1", "--format", fmt, "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    if fmt == "csv":
        df = pl.read_csv(out, schema_overrides={"query_id": pl.String})
    elif fmt == "json":
        df = pl.DataFrame(json.loads(out.read_text()))
    else:
        df = pl.read_parquet(out)
    assert df.columns == ["run_id", "query_id", "measure", "value"]
    assert df.filter(pl.col("query_id") == "all")["value"].to_list() == [1.0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-m", "nosuch"], "unknown measure 'nosuch'"),
        (["--format", "parquet"], "needs an output path"),
    ],
)
def test_usage_errors_are_one_line(runner, write, args, needle):
    q, r = write("q", QRELS), write("r", RUN)
    res = runner.invoke(main, ["eval", str(q), str(r), *args])
    assert res.exit_code == 1
    assert needle in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr


def test_bad_input_is_one_line_naming_file_and_line(runner, write):
    q = write("q", QRELS)
    r = write("bad.run", "1 Q0 a 1 3.0 r1\n1 Q0 b 2 x r1\n")
    res = runner.invoke(main, ["eval", str(q), str(r)])
    assert res.exit_code == 1
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "bad.run:2" in err
    assert "'x'" in err


def test_missing_file(runner, write):
    q = write("q", QRELS)
    res = runner.invoke(main, ["eval", str(q), "no/such.run"])
    assert res.exit_code == 1
    assert "no such file" in res.stderr


def test_lenient_reports_what_it_skipped(runner, write):
    q = write("q", QRELS)
    r = write("r", RUN + "1 Q0 z 9 oops r1\n")
    res = runner.invoke(main, ["eval", str(q), str(r), "-m", "num_ret", "--lenient"])
    assert res.exit_code == 0
    assert "skipped 1 malformed run line(s)" in res.stderr
    assert res.stdout.splitlines()[-1] == f"{'num_ret':<22}\tall\t5"


def test_ingest_then_eval_archive_equals_eval_files(runner, write, tmp_path):
    q = write("q", QRELS)
    r1 = write("a.run", RUN)
    r2 = write("b.run", RUN.replace("r1", "r2").replace("3.0", "0.5"))
    arch = tmp_path / "arch.parquet"
    res = runner.invoke(main, ["ingest", str(r1), str(r2), "-o", str(arch)])
    assert res.exit_code == 0, res.output
    from_files = runner.invoke(main, ["eval", str(q), str(r1), str(r2), "-q", "--format", "csv"])
    from_arch = runner.invoke(main, ["eval", str(q), str(arch), "-q", "--format", "csv"])
    assert from_files.stdout == from_arch.stdout
    assert "r2" in from_arch.stdout


def test_demo_runs_on_the_shipped_sample(runner):
    res = runner.invoke(main, ["demo", "-m", "map"])
    assert res.exit_code == 0, res.output
    maps = [float(x.split("\t")[2]) for x in res.stdout.splitlines() if x.startswith("map")]
    assert len(maps) == 8
    # the sample's runs are built with increasing noise: quality must fall
    assert maps == sorted(maps, reverse=True)


def test_warmup_runs_every_kernel_family_on_the_sample(runner):
    """`fasteval warmup` goes through each part of the engine, says how long each took."""
    res = runner.invoke(main, ["warmup"])
    assert res.exit_code == 0, res.output
    for what in ("text reader", "diversity", "histogram", "RIC", "metasearch", "subsampling"):
        assert what in res.stderr
    assert "kernels ready in" in res.stderr
    assert "warning" not in res.stderr.lower()


@pytest.mark.parametrize(
    ("name", "fmt"), [("out.parquet", "parquet"), ("out.csv", "csv"), ("out.JSON", "json")]
)
def test_the_output_suffix_names_the_format_when_format_is_not_given(
    runner, write, tmp_path, name, fmt
):
    q, r = write("q", QRELS), write("r", RUN)
    out = tmp_path / name
    res = runner.invoke(main, ["eval", str(q), str(r), "-m", "map", "-o", str(out)])
    assert res.exit_code == 0, res.output
    ref = tmp_path / f"ref.{fmt}"
    res = runner.invoke(
        main, ["eval", str(q), str(r), "-m", "map", "--format", fmt, "-o", str(ref)]
    )
    assert res.exit_code == 0, res.output
    if fmt == "parquet":  # the footers name their own -o (issue 47's provenance)
        assert pl.read_parquet(out).height == 1  # a real Parquet file, not trec text
        assert pl.read_parquet(out).equals(pl.read_parquet(ref))
    else:
        assert out.read_bytes() == ref.read_bytes()


def test_an_explicit_format_that_contradicts_the_suffix_is_refused(runner, write, tmp_path):
    # issue 47: a file holds what its suffix says (trec text in out.parquet is a broken file)
    q, r = write("q", QRELS), write("r", RUN)
    out = tmp_path / "out.parquet"
    res = runner.invoke(
        main, ["eval", str(q), str(r), "-m", "map", "--format", "trec", "-o", str(out)]
    )
    one_line_error(res, "'.parquet' names parquet", "--format is trec")
    assert not out.exists()
    txt = tmp_path / "out.txt"  # a text name takes any text format
    res = runner.invoke(
        main, ["eval", str(q), str(r), "-m", "map", "--format", "csv", "-o", str(txt)]
    )
    assert res.exit_code == 0, res.output
    assert txt.read_text().startswith("run_id,")


def test_eval_progress_bar_over_batches_follows_the_rule(runner, write, tmp_path, monkeypatch):
    q = write("q", QRELS)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("a", "b"):
        (runs / name).write_text(RUN.replace(" r1", f" {name}"))
    monkeypatch.setenv("FASTEVAL_BATCH_ROWS", "1")  # a batch per file
    for flag, shown in (([], False), (["--progress"], True), (["--no-progress"], False)):
        res = runner.invoke(main, ["eval", str(q), str(runs), "-m", "map", *flag])
        assert res.exit_code == 0, res.output
        assert res.stdout.count("runid") == 2
        assert ("evaluating" in res.stderr) is shown, flag


def test_ingest_progress_bar_follows_the_rule(runner, write, tmp_path):
    r = write("r", RUN)
    for flag, shown in (([], False), (["--progress"], True), (["--no-progress"], False)):
        out = tmp_path / f"a{len(flag)}{shown}.parquet"
        res = runner.invoke(main, ["ingest", str(r), "-o", str(out), *flag])
        assert res.exit_code == 0, res.output
        assert ("reading runs" in res.stderr) is shown, flag
