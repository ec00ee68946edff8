"""Issue 47: what a newcomer meets on day one (errors, outputs and their suffixes, order)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import fasteval
from fasteval.cli import main
from fasteval.errors import InputFormatError
from fasteval.io import stored
from tests.conftest import SAMPLE_DATA, one_line_error

QRELS = str(SAMPLE_DATA / "sample.qrels")
RUNS = str(SAMPLE_DATA / "sample_runs.parquet")


def _run(args: list[str]):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="fasteval")


def _run_text(run_id: str = "sample1") -> str:
    df = pl.read_parquet(RUNS).filter(pl.col("run_id") == run_id)
    return "".join(
        f"{q} Q0 {d} {k} {s} {run_id}\n"
        for q, d, k, s in df.select("query_id", "doc_id", "rank", "score").iter_rows()
    )


@pytest.fixture(scope="module")
def truncated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gzip run cut in the middle of its stream."""
    p = tmp_path_factory.mktemp("trunc") / "trunc.gz"
    p.write_bytes(gzip.compress(_run_text().encode())[:3000])
    return p


# ----------------------------------------------------------------- 1: a truncated .gz run


@pytest.mark.parametrize("cmd", [["eval", "-m", "map"], ["compare", "-m", "map"], ["hsa"]])
def test_a_truncated_gzip_run_is_an_input_error_not_ctrl_c(cmd, truncated: Path) -> None:
    args = [cmd[0], QRELS, truncated, *cmd[1:]]
    if cmd[0] == "compare":
        args.insert(3, RUNS)  # a second input to compare against
    err = one_line_error(_run(args), "trunc.gz", "not a valid gzip file")
    assert "interrupted" not in err


def test_evaluate_names_the_truncated_file(truncated: Path) -> None:
    with pytest.raises(InputFormatError, match=r"trunc\.gz: not a valid gzip file"):
        fasteval.evaluate(QRELS, truncated, ["map"])


# ----------------------------------------------------------------- 2: -o and its suffix


@pytest.mark.parametrize(
    ("args", "name", "check"),
    [
        (["hsa", QRELS, RUNS], "h.parquet", "parquet"),
        (["ric", QRELS, RUNS], "r.csv", ","),
        (["ric", QRELS, RUNS], "r.json", "json"),
        (["compare", QRELS, RUNS, "-m", "map"], "c.csv", ","),
        (["compare", QRELS, RUNS, "-m", "map"], "c.md", "|"),
        (["ndeval", QRELS, RUNS], "n.parquet", "parquet"),
        (["eval", QRELS, RUNS, "-m", "map"], "e.parquet", "parquet"),
    ],
)
def test_an_output_holds_what_its_suffix_says(args, name, check, tmp_path: Path) -> None:
    if args[0] == "ndeval":  # ndeval reads diversity qrels
        args = ["ndeval", str(_diversity_qrels(tmp_path)), RUNS]
    out = tmp_path / name
    res = _run([*args, "-o", out])
    assert res.exit_code == 0, res.output
    if check == "parquet":
        assert stored.verify_file(out)[1]  # sound: what `fasteval verify` checks
        assert pl.read_parquet(out).height > 0
    elif check == "json":
        assert json.loads(out.read_text())
    elif check == ",":
        head = out.read_text().splitlines()[0]
        assert "," in head and "\t" not in head, head
    else:
        assert out.read_text().lstrip().startswith(check)


def _diversity_qrels(tmp_path: Path) -> Path:
    lines = [
        f"{q} {s} {d} 1"
        for q, s, d in pl.read_csv(
            QRELS, separator=" ", has_header=False, new_columns=["q", "i", "d", "r"]
        )
        .filter(pl.col("r") > 0)
        .select("q", pl.lit(1).alias("s"), "d")
        .iter_rows()
    ]
    p = tmp_path / "div.qrels"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize(
    ("args", "name", "needle"),
    [
        (["hsa", QRELS, RUNS], "h.jsonl", "cannot write jsonl"),
        (["ric", QRELS, RUNS], "r.xlsx", "cannot tell the format"),
        (["compare", QRELS, RUNS], "c.parquet", "cannot write parquet"),
        (["fuse", RUNS, "-m", "combsum"], "f.csv", "cannot write csv"),
        (["ingest", RUNS], "a.csv", "cannot write csv"),
        (["hsa", QRELS, RUNS, "--format", "json"], "h.tsv", "--format is json"),
        (["eval", QRELS, RUNS, "--format", "trec"], "e.parquet", "--format is trec"),
        (["fuse-study", QRELS, RUNS, "--summary", "{tmp}/s.json"], "f.parquet", "--summary"),
    ],
)
def test_a_suffix_the_command_cannot_write_is_refused_first(
    args, name, needle, tmp_path: Path
) -> None:
    out = tmp_path / name
    args = [str(a).replace("{tmp}", str(tmp_path)) for a in args]
    one_line_error(_run([*args, "-o", out]), needle)
    assert list(tmp_path.iterdir()) == []  # refused before any work


def test_without_o_the_formats_keep_their_defaults() -> None:
    res = _run(["ric", QRELS, RUNS])
    assert res.exit_code == 0 and res.stdout.startswith("run_id\tRIC"), res.output


# ----------------------------------------------------------------- 3: the order asked


ASKED = ["P_10", "map", "ndcg_cut_10", "recip_rank"]


@pytest.mark.parametrize("per_query", [True, False])
def test_measures_come_back_in_the_order_asked(per_query: bool) -> None:
    df = fasteval.evaluate(QRELS, RUNS, ASKED, per_query=per_query)
    for (_run_id, _q), block in df.group_by(["run_id", "query_id"], maintain_order=True):
        assert block["measure"].to_list() == ASKED
    # the rows trec_eval's order gives, moved: the same values
    trec = fasteval.evaluate(QRELS, RUNS, ["map", "recip_rank", "P_10", "ndcg_cut_10"])
    keys = ["run_id", "query_id", "measure"]
    if per_query:
        assert trec.sort(keys).equals(df.sort(keys))
    assert trec.filter(pl.col("run_id") == "sample1")["measure"].to_list()[:4] != ASKED


def test_expanded_names_keep_their_place_and_a_repeat_its_first() -> None:
    ev = fasteval.Evaluator(QRELS, ["RIC", "P.5,10", "AP", "P_5"])
    first = ev.evaluate(RUNS, per_query=False).filter(pl.col("run_id") == "sample1")
    assert first["measure"].to_list() == ["RIC", "P_5", "P_10", "AP"]


def test_trec_text_keeps_trec_eval_order() -> None:
    res = _run(["eval", QRELS, RUNS, "-m", "P_10", "-m", "map"])
    names = [line.split()[0] for line in res.stdout.splitlines()[:3]]
    assert names == ["runid", "map", "P_10"], res.stdout


# ----------------------------------------------------------------- 8: qrels where a run belongs


@pytest.mark.parametrize("cmd", ["eval", "compare", "hsa", "ric"])
def test_qrels_given_as_a_run_earn_the_qrels_hint(cmd: str) -> None:
    err = one_line_error(_run([cmd, QRELS, QRELS]), "looks like qrels", "give the qrels first")
    assert "sample.qrels" in err


def test_qrels_given_as_a_run_in_python() -> None:
    with pytest.raises(InputFormatError, match="looks like qrels, not a run"):
        fasteval.evaluate(QRELS, QRELS, ["map"])


def test_site_folder_is_ignored() -> None:
    root = Path(__file__).resolve().parents[2]
    lines = (root / ".gitignore").read_text().split()
    assert "site/" in lines or "/site/" in lines


# ----------------------------------------------------------------- 4: suggestions


MISSPELT = ["AP@ten", "MAP@ten", "P@ten", "map@ten", "ndcg@ten", "AP(rel=2)@ten"]
MISSPELT += ["mapp", "recip_rnk", "alpha_nDGC@20", "LMJS@ten", "RIX", "PIA@10", "nDCG@x"]


def _suggestions(name: str) -> list[str] | None:
    """What "did you mean" offers for ``name``; None when it is a name (it parses)."""
    from fasteval.errors import MeasureError, ParameterError
    from fasteval.measures.catalog import parse_request

    try:
        parse_request([name])
    except MeasureError as e:
        text = str(e)
    except ParameterError:  # a content measure without its collection: a name
        return None
    else:
        return None
    said = (
        text.split("did you mean ", 1)[1].split("?", maxsplit=1)[0]
        if "did you mean" in text
        else ""
    )
    return [s.strip().strip("'") for s in said.split(" or ") if s.strip()]


@pytest.mark.parametrize("name", MISSPELT)
def test_every_suggestion_is_itself_a_valid_name(name: str) -> None:
    said = _suggestions(name)
    assert said, name  # each of these is close to a real name
    for s in said:
        assert _suggestions(s) is None, (name, s)  # a name: following it ends there


def test_a_bad_cutoff_suggests_the_measure_with_a_cutoff() -> None:
    said = _suggestions("AP@ten")
    assert said is not None and said[0] == "AP@10"


# ----------------------------------------------------------------- 5: the docs can be followed


def test_demo_workspace_holds_what_the_readme_uses_and_its_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.docs._support import REPO, docs_support

    res = _run(["demo", "--workspace", tmp_path / "ws"])
    assert res.exit_code == 0, res.output
    ws = tmp_path / "ws"
    assert (ws / "qrels.txt").read_bytes() == (SAMPLE_DATA / "sample.qrels").read_bytes()
    assert sorted(p.name for p in (ws / "runs").iterdir()) == [
        f"sample{i}.txt" for i in range(1, 9)
    ]
    assert pl.read_parquet(ws / "runs.parquet").equals(pl.read_parquet(RUNS))
    blocks = [
        b
        for b in docs_support.code_blocks((REPO / "README.md").read_text(), "README.md")
        if b.kind == "python" and b.not_runnable is None
    ]
    assert blocks
    monkeypatch.chdir(ws)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for b in blocks:  # as written, in the folder demo --workspace made
        exec(compile(b.code, f"README.md:{b.line}", "exec"), namespace)


def test_the_fusion_page_says_which_grid_points_ranx_drops() -> None:
    from fasteval.analysis.fusion.optimize import fusion_grid
    from tests.docs._support import DOCS

    ranx = {g["weights"] for g in fusion_grid("combsum", 3)}
    every = {g["weights"] for g in fusion_grid("combsum", 3, grid="simplex")}
    page = " ".join((DOCS / "fusion.md").read_text().split())
    assert f"{len(ranx)}-point weight grid" in page and f"all {len(every)}" in page
    for t in sorted(every - ranx):
        assert str(t) in page


# ----------------------------------------------------------------- 6: what made an output


def test_a_parquet_output_says_what_made_it(tmp_path: Path) -> None:
    from importlib.metadata import version

    import blake3
    import pyarrow.parquet as pq

    from fasteval.io.provenance import provenance_of

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r1.txt").write_text(_run_text("sample1"))
    (runs / "r2.txt").write_text(_run_text("sample2"))
    out = tmp_path / "e.parquet"
    res = _run(["eval", QRELS, runs, "-m", "P_10", "-m", "map", "-l", "2", "-o", out])
    assert res.exit_code == 0, res.output
    made = provenance_of(pq.read_metadata(out).metadata)
    assert made is not None
    assert made["version"] == version("fasteval") and made["command"].endswith("eval")
    assert made["measures"] == ["P_10", "map"] and made["options"]["level"] == 2
    got = {Path(i["path"]).name: i for i in made["inputs"]}
    assert sorted(got) == ["r1.txt", "r2.txt", "sample.qrels"]
    for p in (Path(QRELS), runs / "r1.txt", runs / "r2.txt"):
        assert got[p.name]["bytes"] == p.stat().st_size
        assert got[p.name]["blake3"] == blake3.blake3(p.read_bytes()).hexdigest()
    shown = _run(["verify", out])
    assert shown.exit_code == 0 and "made by fasteval" in shown.stdout, shown.output
    full = _run(["verify", "--provenance", out]).stdout
    assert got["r1.txt"]["blake3"] in full


def test_inputs_hashed_early_are_those_stamped(tmp_path: Path) -> None:
    import json

    import blake3

    from fasteval.io.provenance import Provenance

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r1.txt").write_text(_run_text("sample1"))
    made = Provenance("fasteval eval", [], {}, [QRELS, runs])
    made.start()  # hashed on its own thread from here
    made.start()  # a second call changes nothing
    (runs / "r2.txt").write_text(_run_text("sample2"))  # a file the early hashing missed
    got = {Path(i["path"]).name: i["blake3"] for i in json.loads(made.as_json())["inputs"]}
    assert sorted(got) == ["r1.txt", "r2.txt", "sample.qrels"]
    for p in (Path(QRELS), runs / "r1.txt", runs / "r2.txt"):
        assert got[p.name] == blake3.blake3(p.read_bytes()).hexdigest()
    late = Provenance("fasteval eval", [], {}, [QRELS, runs])
    assert late.as_json() == made.as_json()  # the same record, hashed at the end


def test_text_and_csv_outputs_are_unchanged(tmp_path: Path) -> None:
    printed = _run(["eval", QRELS, RUNS, "-m", "map"]).stdout
    res = _run(["eval", QRELS, RUNS, "-m", "map", "-o", tmp_path / "e.txt"])
    assert res.exit_code == 0 and (tmp_path / "e.txt").read_text() == printed
    res = _run(["eval", QRELS, RUNS, "-m", "map", "-o", tmp_path / "e.csv"])
    text = (tmp_path / "e.csv").read_text()
    assert text.startswith("run_id,query_id,measure,value\n") and "provenance" not in text


# ----------------------------------------------------------------- 7: the peers' last differences


def test_an_empty_run_through_the_provider_scores_every_qrels_query_0() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    pd = pytest.importorskip("pandas")
    from fasteval.ir_measures_provider import provider

    qrels = [ir_measures.Qrel("q1", "d1", 1), ir_measures.Qrel("q2", "d2", 1)]
    measures = [ir_measures.AP, ir_measures.P @ 5, ir_measures.nDCG @ 10, ir_measures.NumRet]
    want = ir_measures.calc_aggregate(measures, qrels, [])  # ir_measures' default provider
    want_q = sorted(map(str, ir_measures.iter_calc(measures, qrels, [])))
    empty_frame = pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
    for run in ([], {}, iter([]), empty_frame):
        assert provider.calc_aggregate(measures, qrels, run) == want
        assert sorted(map(str, provider.iter_calc(measures, qrels, run))) == want_q
    assert len(want_q) == 8 and set(want.values()) == {0}


def test_accuracy_leaves_out_a_query_with_no_relevant_document_retrieved() -> None:
    """ir_measures' Accuracy(rel=2) reports nothing for a query with no grade-2 document
    retrieved (q2 has none at all, q3 none in the top 2), and averages over the others:
    so do evaluate() and the provider, per query and overall."""
    ir_measures = pytest.importorskip("ir_measures")
    from fasteval.ir_measures_provider import provider

    grades = {"q1": [2, 0, 1, 2], "q2": [1, 0, 1, 0], "q3": [0, 1, 2, 0]}
    qrels = [
        ir_measures.Qrel(q, f"{q}d{i}", g) for q, gs in grades.items() for i, g in enumerate(gs)
    ]
    run = [
        ir_measures.ScoredDoc(q, f"{q}d{i}", float(10 - i))
        for q in grades
        for i in (1, 0, 3, 2, 5)  # q1: d1 d0 d3 d2 (a non-relevant first), d5 unjudged
    ]
    measures = [ir_measures.parse_measure(m) for m in ("Accuracy(rel=2)", "Accuracy(rel=2)@2")]
    want_q = sorted(map(str, ir_measures.accuracy.iter_calc(measures, qrels, run)))
    want = ir_measures.accuracy.calc_aggregate(measures, qrels, run)
    assert sorted(map(str, provider.iter_calc(measures, qrels, run))) == want_q
    got = provider.calc_aggregate(measures, qrels, run)
    assert got.keys() == want.keys()
    for m in want:
        assert got[m] == pytest.approx(want[m], abs=1e-12)
    # q2 and q3 (at 2) are left out; q1's value: one non-relevant above d0, none above d3
    assert len(want_q) == 3 and not any("q2" in s for s in want_q)

    qr = pl.DataFrame(
        [(q.query_id, q.doc_id, q.relevance) for q in qrels],
        schema=["query_id", "doc_id", "relevance"],
        orient="row",
    )
    rn = pl.DataFrame(
        [("r", d.query_id, d.doc_id, d.score) for d in run],
        schema=["run_id", "query_id", "doc_id", "score"],
        orient="row",
    )
    df = fasteval.evaluate(qr, rn, ["Accuracy(rel=2)"])
    rows = dict(df.select("query_id", "value").iter_rows())
    assert set(rows) == {"q1", "q3", "all"}
    assert rows["all"] == pytest.approx((rows["q1"] + rows["q3"]) / 2, abs=1e-12)


_CYCLE = """
import polars as pl
from fasteval.analysis.fusion import fuse
rows = [(run, "q1", d, i + 1, float(10 - i))
        for run, order in {"r1": "abcd", "r2": "bcad", "r3": "cab"}.items()
        for i, d in enumerate(order)]
runs = pl.DataFrame(rows, schema=["run_id", "query_id", "doc_id", "rank", "score"], orient="row")
print(",".join(fuse(runs, "condorcet", norm=None)["doc_id"].to_list()))
"""


def test_condorcet_gives_one_order_whatever_the_hash_seed() -> None:
    import os
    import subprocess
    import sys

    # a majority cycle (a > b > c > a): ranx's order changes with PYTHONHASHSEED
    here: dict[str, object] = {}
    exec(_CYCLE.replace("print(", "here['order'] = ("), {"here": here})
    order = str(here["order"])
    assert sorted(order.split(",")) == ["a", "b", "c", "d"] and order.endswith("d")
    for seed in ("1", "3"):  # the kernels are cached by the call above: 2 s each
        env = {**os.environ, "PYTHONHASHSEED": seed, "FASTEVAL_AOT": "0"}
        out = subprocess.run(
            [sys.executable, "-c", _CYCLE], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == order, seed


def test_the_fusion_page_says_condorcet_is_deterministic() -> None:
    from tests.docs._support import DOCS

    page = " ".join((DOCS / "fusion.md").read_text().split())
    assert "PYTHONHASHSEED" in page and "did not retrieve" in page
