"""Issue 17: every command-line error is one line, exit 1, no traceback; Ctrl-C exits 130."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fasteval.cli import main
from tests.conftest import SAMPLE_DATA as DATA
from tests.conftest import one_line_error

QRELS = str(DATA / "sample.qrels")
RUNS = str(DATA / "sample_runs.parquet")


def _run(args: list[str]):
    return CliRunner().invoke(main, args, prog_name="fasteval")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["eval"], ("missing argument 'QRELS'", "fasteval eval -h")),
        (["eval", "--no-such", QRELS, RUNS], ("no such option '--no-such'",)),
        (["eval", "--format", "xml", QRELS, RUNS], ("'--format'", "'xml'")),
        (["hsa", "--bins", "many", QRELS, RUNS], ("'--bins'", "many")),
        (["nosuchcmd"], ("no such command 'nosuchcmd'",)),
        (["study", "subsample"], ("fasteval study subsample", "missing")),
    ],
)
def test_usage_errors_are_one_line_exit_1(args, needles):
    one_line_error(_run(args), *needles)


def test_help_and_version_still_exit_0():
    for args in (["-h"], ["eval", "-h"], ["--version"]):
        res = _run(args)
        assert res.exit_code == 0, res.output
        assert res.stdout.strip()


@pytest.mark.parametrize(
    "args",
    [
        ["hsa", QRELS, RUNS, "--plot", "{tmp}/figs"],
        ["fuse-study", QRELS, RUNS, "-o", "{tmp}/fs.parquet", "--plot", "{tmp}/fs.png"],
    ],
)
def test_missing_plots_extra_names_the_extra(args, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    one_line_error(_run(args), "matplotlib", "pip install 'fasteval[plots]'")
    assert "pip install -e '.[plots]'" in _run(args).stderr  # from a checkout too
    assert list(tmp_path.iterdir()) == []  # refused before any work


def test_report_without_matplotlib_still_writes_the_text_reports(tmp_path, monkeypatch):
    # issue 27: the text reports need no matplotlib; one warning names the extra
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    res = _run(["report", QRELS, RUNS, "-o", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    warning = [line for line in res.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1, res.stderr
    assert "matplotlib" in warning[0] and "pip install 'fasteval[plots]'" in warning[0]
    assert "pip install -e '.[plots]'" in warning[0]
    texts = sorted((tmp_path / "rep").glob("*.txt"))
    assert texts and all(p.read_text().strip() for p in texts)
    assert "<img" not in (tmp_path / "rep" / "index.html").read_text()


def test_missing_cluster_extra_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.setitem(sys.modules, "dask", None)
    res = _run(["infodiff", QRELS, RUNS, "--cluster", "local:1"])
    one_line_error(res, "pip install 'fasteval[cluster]'")


def test_ctrl_c_exits_130_with_one_line_and_no_temp_files(tmp_path, monkeypatch):
    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    # interrupted while the output is being written: the temporary file must go too
    from fasteval.io import writers

    monkeypatch.setattr(writers.ParquetOut, "write", interrupted)
    out = tmp_path / "out.parquet"
    res = _run(["eval", QRELS, RUNS, "-m", "map", "--format", "parquet", "-o", str(out)])
    assert res.exit_code == 130, res.output
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "interrupted" in err, err
    assert "Traceback" not in res.output and "Aborted" not in res.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["eval", QRELS, RUNS, "-o", "{tmp}/nodir/out.txt"],
        ["hsa", QRELS, RUNS, "-o", "{tmp}/nodir/h.tsv"],
        ["report", QRELS, RUNS, "-o", "{tmp}/nodir/rep"],
        ["study", "subsample", QRELS, RUNS, "-o", "{tmp}/nodir/st", "--reps", "1"],
        ["ingest", RUNS, "-o", "{tmp}/nodir/a.parquet"],
    ],
)
def test_missing_output_folder_is_refused_before_reading(args, tmp_path, monkeypatch):
    import fasteval.engine

    def no_reading(*_a, **_k):
        raise AssertionError("inputs were read before -o was checked")

    monkeypatch.setattr(fasteval.engine, "prepare", no_reading)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    one_line_error(_run(args), "-o", "nodir", "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_study_unknown_measure_fails_before_reading(tmp_path, monkeypatch):
    from fasteval.analysis import studies

    def no_reading(*_a, **_k):
        raise AssertionError("inputs were read before the measures were checked")

    monkeypatch.setattr(studies, "prepare_compact", no_reading)  # what a study reads with
    res = _run(["study", "subsample", QRELS, RUNS, "-m", "mapp", "-o", str(tmp_path / "st")])
    one_line_error(res, "mapp")


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("mapp", "'map'"),
        ("ndcg_cutt.10", "'ndcg_cut.10'"),
        ("alpha_nDGC@20", "'alpha_nDCG@20'"),
        ("RCI", "'RIC'"),
        ("HAS", "'HSA'"),
        ("LMSJ@10", "'LMJS@10'"),
        ("nDGC@10", "'nDCG@10'"),
    ],
)
def test_unknown_measure_suggests_close_names_in_one_short_line(name, want):
    err = one_line_error(_run(["eval", QRELS, RUNS, "-m", name]), f"unknown measure {name!r}")
    assert "did you mean" in err and want in err, err
    assert "diversity" in err and "LMJS" in err  # the families, short
    assert len(err) < 400, len(err)


# --- class 5: hints name options of the command that was run, API messages API keywords


def _diversity_files(tmp_path: Path) -> tuple[str, str]:
    qrels = tmp_path / "div.qrels"
    qrels.write_text("1 1 d1 1\n1 2 d2 1\n2 1 d3 1\n")
    run = tmp_path / "run.txt"  # rank 1 twice: ndeval's rank order rejects it
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 1 1.0 r\n2 Q0 d3 1 1.0 r\n")
    return str(qrels), str(run)


def test_hint_names_only_options_of_the_command_run(tmp_path):
    qrels, run = _diversity_files(tmp_path)
    err = one_line_error(_run(["eval", "-m", "alpha-nDCG@20", qrels, run]), "rank 1")
    # eval has no --order: the hint names the command that has it, never the API keyword
    assert "'fasteval ndeval --order traditional'" in err, err
    assert "order='traditional'" not in err and "CLI:" not in err, err
    err = one_line_error(_run(["ndeval", qrels, run]), "rank 1")
    assert "hint: --order traditional orders" in err, err


def test_api_message_keeps_the_api_keyword(tmp_path):
    import fasteval
    from fasteval.errors import InputFormatError

    qrels, run = _diversity_files(tmp_path)
    with pytest.raises(InputFormatError, match=r"order='traditional'"):
        fasteval.evaluate(qrels, run, ["alpha-nDCG@20"])


@pytest.mark.parametrize(
    ("command", "msg", "expected"),
    [
        (["eval"], "pass lenient=True (CLI: --lenient) to skip", "pass --lenient to skip"),
        (["eval"], "use --run-id filename (API: run_id_from='filename')", "use --run-id filename"),
        (
            ["eval"],
            "give it (CLI: --collection FILE; API: collection=...)",
            "give it (--collection FILE)",
        ),
        (
            ["study", "subsample"],
            "bin_by (CLI: --bin-by) needs",
            "'fasteval infodiff --bin-by' needs",
        ),
        (["ndeval"], "on_duplicate='first' (CLI: --keep-first) keeps", "--keep-first keeps"),
        (
            ["demo"],
            "pass lenient=True (CLI: --lenient) to skip",
            "'fasteval eval --lenient' to skip",
        ),
    ],
)
def test_cli_terms_translates_each_spelling(command, msg, expected):
    import click

    from fasteval.commands.common import cli_terms

    cmd: click.Command = main
    ctx = click.Context(main, info_name="fasteval")
    for name in command:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
        ctx = click.Context(cmd, info_name=name, parent=ctx)
    out = cli_terms(msg, ctx)
    assert expected in out, out
    assert "CLI:" not in out and "API:" not in out and "lenient=" not in out, out


# --- class 6: several runs in --format trec are labelled; relstring without -q says why


def _blocks(text: str) -> dict[str, list[str]]:
    """trec_eval lines grouped under the runid line that leads each block."""
    blocks: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        name, _qid, value = line.split("\t")
        if name.strip() == "runid":
            assert value not in blocks, f"run {value} labelled twice"
            current = blocks.setdefault(value, [])
        else:
            assert current is not None, f"unlabelled line before the first runid: {line!r}"
            current.append(line)
    return blocks


def test_trec_format_labels_each_run_and_keeps_one_run_as_trec_eval(tmp_path):
    import polars as pl

    import fasteval
    from fasteval.io.writers import format_trec
    from fasteval.measures.parser import parse_measures

    res = _run(["eval", "-m", "map", "-m", "P.5", "-q", QRELS, RUNS])
    assert res.exit_code == 0, res.output
    blocks = _blocks(res.stdout)
    df = fasteval.evaluate(QRELS, RUNS, ["map", "P.5"], per_query=True)
    runs = df["run_id"].unique(maintain_order=True).to_list()
    assert list(blocks) == runs and len(runs) > 1
    for run in runs:  # each block is exactly what trec_eval prints for that run alone
        one = format_trec(df.filter(pl.col("run_id") == run), parse_measures(["map", "P.5"]))
        assert "\n".join(blocks[run]) + "\n" == one
    # one run: trec_eval's text byte for byte, no label added
    run_file = tmp_path / "one.txt"
    pl.read_parquet(RUNS).filter(pl.col("run_id") == runs[0]).select(
        "query_id", pl.lit("Q0"), "doc_id", "rank", "score", "run_id"
    ).write_csv(run_file, separator=" ", include_header=False)
    res = _run(["eval", "-m", "map", "-m", "P.5", "-q", QRELS, str(run_file)])
    assert res.exit_code == 0, res.output
    assert "runid" not in res.stdout
    assert res.stdout == "\n".join(blocks[runs[0]]) + "\n"


def test_relstring_without_q_says_why_nothing_is_printed():
    res = _run(["eval", "-m", "relstring", QRELS, RUNS])
    assert res.exit_code == 0, res.output
    assert "relstring" in res.stderr and "add -q" in res.stderr, res.stderr
    res = _run(["eval", "-m", "relstring", "-q", QRELS, RUNS])
    assert "relstring" in res.stdout and "add -q" not in res.stderr
    res = _run(["eval", "-m", "all_trec", QRELS, RUNS])  # as trec_eval: silently per-query
    assert res.exit_code == 0 and "add -q" not in res.stderr


# --- class 8: one progress bar rule for every command


@pytest.mark.parametrize(
    "args",
    [
        ["infodiff", QRELS, RUNS],
        [
            "study",
            "subsample",
            QRELS,
            RUNS,
            "-m",
            "map",
            "--rates",
            "0.5",
            "--reps",
            "2",
            "--no-plot",
            "-o",
            "{tmp}/st",
        ],
        ["report", QRELS, RUNS, "--no-figures", "-o", "{tmp}/rep"],
    ],
)
def test_progress_bar_only_when_asked_or_on_a_terminal(args, tmp_path):
    def bar_shown(extra: list[str], sub: str) -> bool:
        (tmp_path / sub).mkdir()
        a = [x.replace("{tmp}", str(tmp_path / sub)) for x in args]
        res = _run([*a[:2], *extra, *a[2:]] if a[0] == "study" else [a[0], *extra, *a[1:]])
        assert res.exit_code == 0, res.output
        return "it/s]" in res.stderr or "s/it]" in res.stderr or "100%|" in res.stderr

    # CliRunner's stderr is not a terminal: no bar unless --progress
    assert not bar_shown([], "a")
    assert bar_shown(["--progress"], "b")
    assert not bar_shown(["--no-progress"], "c")


def test_commands_draw_progress_bars_through_one_helper():
    import ast

    root = Path(__file__).resolve().parents[2] / "fasteval"
    for path in [*sorted((root / "commands").glob("*.py")), root / "cli.py"]:
        if path.name == "common.py":
            continue
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef) or fn.name == "ingest_cmd":
                continue
            names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
            assert "tqdm" not in names, f"{path.name}:{fn.name} draws its own tqdm bar"


# --- arguments are checked before the inputs are read


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["infodiff", QRELS, "{missing}", "--bin-by", "mapp"], "mapp"),
        (["infodiff", QRELS, "{missing}", "--bin-by", "P.5,10"], "--bin-by needs one measure"),
        (["fuse", "{missing}", "--method", "pareto", "-o", "{tmp}/f.run"], "--qrels"),
        (
            ["fuse-study", QRELS, "{missing}", "--measure", "nosuch", "-o", "{tmp}/f.parquet"],
            "nosuch",
        ),
        (["study", "subsample", QRELS, "{missing}", "-m", "mapp", "-o", "{tmp}/st"], "mapp"),
    ],
)
def test_arguments_fail_before_the_inputs_are_read(args, needle, tmp_path):
    missing = str(tmp_path / "no-such-run.txt")  # reading it would fail with 'no such file'
    args = [a.replace("{missing}", missing).replace("{tmp}", str(tmp_path)) for a in args]
    err = one_line_error(_run(args), needle)
    assert "no such file" not in err and "no-such-run" not in err, err
