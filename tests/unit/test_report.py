"""The evaluation report on small synthetic data: values, statistics, text, HTML, plots, CLI."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from fasteval.analysis.report import COLUMNS, IPREC, format_text, report
from fasteval.cli import main
from fasteval.errors import ParameterError
from fasteval.plots import report as plots
from fasteval.plots.report_html import file_stem, write_report
from tests.oracle._nist_summary import read_summary

# topic 1: R = 3 (a, c, e); topic 2: R = 1 (d)
QRELS = pl.DataFrame(
    {
        "query_id": ["1", "1", "1", "1", "2", "2"],
        "doc_id": ["a", "b", "c", "e", "a", "d"],
        "relevance": [1, 0, 2, 1, 0, 1],
    },
    schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
)


def run(name: str, ranking: dict[str, list[str]]) -> pl.DataFrame:
    rows = [
        (name, q, d, float(len(docs) - i))
        for q, docs in ranking.items()
        for i, d in enumerate(docs)
    ]
    return pl.DataFrame(rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row")


RUNS = pl.concat(
    [
        run("good", {"1": ["a", "b", "c", "x"], "2": ["d", "a"]}),  # rel at 1, 3; 1
        run("bad", {"1": ["x", "y", "e"], "2": ["a", "z", "d"]}),  # rel at 3; 3
        run("mid", {"1": ["c", "x", "y", "a", "e"], "2": ["z", "d"]}),  # rel at 1, 4, 5; 2
    ]
)


def values(rep, run_id: str, qid: str) -> dict:
    if qid == "all":
        return rep.run_summary(run_id)
    return rep.per_query.filter((pl.col("run_id") == run_id) & (pl.col("query_id") == qid)).row(
        0, named=True
    )


@pytest.mark.parametrize("compat", [8, 9, 10])
def test_hand_computed_values(compat):
    rep = report(QRELS, RUNS, compat=compat)
    g1 = values(rep, "good", "1")
    assert (g1["num_ret"], g1["num_rel"], g1["num_rel_ret"]) == (4, 3, 2)
    assert g1["map"] == pytest.approx((1 + 2 / 3) / 3, abs=1e-7)
    assert g1["Rprec"] == pytest.approx(2 / 3, abs=1e-7)
    assert g1["P_5"] == pytest.approx(2 / 5, abs=1e-7)
    assert g1["rel_ret_100"] == 2
    # interpolated precision: the precision at the n-th relevant document (1 at the
    # first, 2/3 at the second, 0 for the third, never retrieved). Recall level p needs
    # n = ceil(3p) in trec_eval 8 (integers), (long)(3p + 0.9) in 9 (at 0.7:
    # (long)2.9999999999999996 = 2) and lround(3p) in 10.
    h = 2 / 3
    expected = {
        8: [1, 1, 1, 1, h, h, h, 0, 0, 0, 0],
        9: [1, 1, 1, 1, h, h, h, h, 0, 0, 0],
        10: [1, 1, 1, 1, 1, h, h, h, h, 0, 0],
    }[compat]
    ip = [g1[c] for c in IPREC]
    np.testing.assert_allclose(ip, expected, atol=1e-7)
    m = values(rep, "mid", "1")
    assert m["map"] == pytest.approx((1 + 2 / 4 + 3 / 5) / 3, abs=1e-7)
    s = values(rep, "good", "all")
    assert s["num_q"] == 2
    assert s["num_ret"] == 6
    assert s["map"] == pytest.approx(((1 + 2 / 3) / 3 + 1) / 2, abs=1e-7)


def test_topic_statistics_and_median():
    rep = report(QRELS, RUNS)
    t = rep.topics.filter(pl.col("query_id") == "2").row(0, named=True)
    # AP on topic 2: good 1, bad 1/3, mid 1/2
    assert t["n_runs"] == 3
    assert (t["map_best"], t["map_median"], t["map_worst"]) == pytest.approx((1, 0.5, 1 / 3))
    vs = rep.vs_median("bad").filter(pl.col("query_id") == "2").row(0, named=True)
    assert vs["diff"] == pytest.approx(1 / 3 - 0.5)
    # an even number of runs: the upper of the two middle values (as NIST printed)
    two = report(QRELS, RUNS.filter(pl.col("run_id") != "mid"))
    t2 = two.topics.filter(pl.col("query_id") == "2").row(0, named=True)
    assert t2["map_median"] == pytest.approx(1.0)


def test_groups_split_the_statistics():
    rep = report(QRELS, RUNS, groups={"good": "A", "bad": "A"}, descriptions={"A": "two runs"})
    assert rep.groups == {"good": "A", "bad": "A", "mid": "runs"}
    n = dict(rep.topics.group_by("group").agg(pl.col("n_runs").max()).iter_rows())
    assert n == {"A": 2, "runs": 1}
    assert "Statistics computed over 2 two runs." in format_text(rep, "good")


def test_compat8_equals_compat9_up_to_float32_and_cutoffs():
    """On random data the two arithmetics agree to float precision wherever the
    recall cutoffs agree (the old integer ceil(i*R/10) vs (long)(0.1*i*R + 0.9))."""
    seed = 20240601
    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in range(200)]
    qrels_rows, run_rows = [], []
    for q in range(12):
        rel = rng.choice(200, size=int(rng.integers(1, 80)), replace=False)
        qrels_rows += [(str(q), docs[d], 1) for d in rel]
        for r in range(3):
            ranked = rng.choice(200, size=int(rng.integers(1, 200)), replace=False)
            run_rows += [(f"r{r}", str(q), docs[d], float(-i)) for i, d in enumerate(ranked)]
    qrels = pl.DataFrame(
        qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row"
    ).with_columns(pl.col("relevance").cast(pl.Int32))
    runs = pl.DataFrame(run_rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    a = report(qrels, runs, compat=8).per_query.sort("run_id", "query_id")
    b = report(qrels, runs, compat=9).per_query.sort("run_id", "query_id")
    assert a.select("run_id", "query_id").equals(b.select("run_id", "query_id"))
    moved = 0
    for c in COLUMNS:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if c.startswith("iprec_at_recall_"):
            p = float(c.rsplit("_", 1)[1])
            i = round(p * 10)
            r = a["num_rel"].to_numpy()
            same = (p * r + 0.9).astype(np.int64) == (r * i + 9) // 10
            moved += int((~same).sum())
            x, y = x[same], y[same]
        np.testing.assert_allclose(x, y, atol=1e-6, err_msg=f"{c} (seed {seed})")
    assert moved > 0  # the data does exercise the cutoff difference


def test_text_layout_round_trips_through_the_summary_parser(tmp_path):
    rep = report(QRELS, RUNS, compat=9)
    text = format_text(rep, "mid")
    lines = text.splitlines()
    assert lines[0] == "Queryid (Num):         1  mid"
    assert lines[2] == "    Retrieved:        5"
    assert lines[6] == "    at 0.00       1.0000 "
    assert "  At 1000 docs:   0.0020" in lines
    assert lines[-1].startswith("2       1          1       1       1         1       1")
    p = tmp_path / "summary.mid.gz"
    import gzip

    with gzip.open(p, "wt") as f:
        f.write(text)
    s = read_summary(p)
    assert s.run_id == "mid"
    assert s.n_group == 3
    for (q, m), v in s.values.items():
        row = values(rep, "mid", q)
        assert v == (str(row[m]) if isinstance(row[m], int) else f"{row[m]:.4f}"), (q, m)
    assert len(s.values) == 3 * 25
    assert s.stats["1"]["map_median"] == f"{rep.topics['map_median'][0]:.4f}"


def test_html_and_text_files(tmp_path):
    rep = report(QRELS, RUNS.with_columns(pl.col("run_id").replace("bad", "b/a d")))
    files = write_report(rep, tmp_path, "both")
    names = sorted(f.name for f in files)
    assert names == sorted(
        ["index.html", "good.txt", "good.html", "b_a_d.txt", "b_a_d.html", "mid.txt", "mid.html"]
    )
    index = (tmp_path / "index.html").read_text()
    for stem in ("good", "b_a_d", "mid"):
        assert f'href="{stem}.html"' in index
    page = (tmp_path / "b_a_d.html").read_text()
    assert "b/a d" in page
    assert page.count("data:image/png;base64,") == 2  # PR curves + difference from median
    assert "<table>" in page
    assert (tmp_path / "mid.txt").read_text() == format_text(rep, "mid")
    assert file_stem("a b/c") == "a_b_c"


def test_text_only_and_no_figures(tmp_path):
    rep = report(QRELS, RUNS)
    assert {p.suffix for p in write_report(rep, tmp_path / "t", "text")} == {".txt"}
    files = write_report(rep, tmp_path / "h", "html", figures=False)
    assert "data:image" not in files[0].read_text()
    with pytest.raises(ParameterError, match="format"):
        write_report(rep, tmp_path, "pdf")


def test_plot_files(tmp_path):
    rep = report(QRELS, RUNS)
    a = plots.precision_recall(rep, tmp_path / "pr.png")
    b = plots.precision_recall(rep, tmp_path / "pr1.png", ["good", "mid"], highlight="mid")
    c = plots.median_difference(rep, "good", tmp_path / "diff.png")
    for p in (a, b, c):
        assert p.exists()
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert p.stat().st_size > 1000


def test_bad_parameters():
    with pytest.raises(ParameterError, match="compat must be 8, 9 or 10, got 7"):
        report(QRELS, RUNS, compat=7)
    rep = report(QRELS, RUNS)
    with pytest.raises(ParameterError, match="no run 'nope'"):
        rep.vs_median("nope")


# --- CLI ----------------------------------------------------------------------------

QRELS_TXT = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 d 1\n"
RUN_TXT = "1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 c 3 1.0 r1\n2 Q0 d 1 5 r1\n"
RUN2_TXT = "1 Q0 c 1 3.0 r2\n1 Q0 x 2 2.0 r2\n2 Q0 z 1 5 r2\n2 Q0 d 2 4 r2\n"


def test_cli_text_to_stdout(write):
    q, r = write("q", QRELS_TXT), write("r", RUN_TXT)
    res = CliRunner().invoke(main, ["report", str(q), str(r)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Queryid (Num):         1  r1\n")
    assert "Queryid (Num):       all  r1" in res.output
    assert "Statistics computed over 1 runs." in res.output


def test_cli_writes_a_directory_with_groups(write, tmp_path):
    q, r1, r2 = write("q", QRELS_TXT), write("r1", RUN_TXT), write("r2", RUN2_TXT)
    g = write("groups", "# run group\nr1 manual runs\nr2 manual runs\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main,
        ["report", str(q), str(r1), str(r2), "-o", str(out), "--compat", "8", "--groups", str(g)],
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == [
        "index.html",
        "r1.html",
        "r1.txt",
        "r2.html",
        "r2.txt",
    ]
    assert "Statistics computed over 2 manual runs." in (out / "r2.txt").read_text()


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--format", "html"], "give a directory with -o DIR"),
        (["--groups", "GROUPS"], "expected 'run_id group'"),
        (["MISSING"], "MISSING"),
    ],
)
def test_cli_errors_are_one_line(write, tmp_path, extra, needle):
    q, r = write("q", QRELS_TXT), write("r", RUN_TXT)
    bad_groups = write("groups", "r1\n")
    extra = [str(bad_groups) if e == "GROUPS" else e for e in extra]
    extra = [str(tmp_path / "missing.run") if e == "MISSING" else e for e in extra]
    res = CliRunner().invoke(main, ["report", str(q), str(r), *extra])
    assert res.exit_code == 1
    err = res.output.strip()
    assert err.startswith("fasteval: error:")
    assert len(err.splitlines()) == 1
    assert needle.replace("MISSING", "missing.run") in err
