"""One ``fasteval.Evaluator`` per compat mode, reused over every input kind of TREC-8.

The qrels are prepared once; each evaluation must give the numbers of the
oracles: trec_eval 10's stored outputs (compat 10, every implemented line
of ``-q -m all_trec``, compared as printed strings) and pytrec_eval (compat 9).
The inputs mix the ways users hold runs: the runs directory, one archive, a
polars frame of all runs, pandas and Arrow frames and dicts of single runs.
"""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.io.writers import format_trec
from tests.conftest import shared_path
from tests.oracle import _pytrec
from tests.oracle._trec_text import as_dict, implemented, parse_lines, read_text

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

SOME = ["input.INQ603", "input.CL99XT", "input.uwmt8a0"]


@pytest.fixture(scope="module")
def data():
    return shared_path("trec8_adhoc")


@pytest.fixture(scope="module")
def qrels(data) -> pl.DataFrame:
    return fasteval.load_qrels(data / "qrels.trec8.adhoc.gz")


def _expected10(data, run_id: str) -> dict:
    text = read_text(data / "trec_eval_q_all_trec" / f"eval.{run_id}.gz")
    return as_dict(implemented(parse_lines(text)))


def _check10(data, df: pl.DataFrame, mset) -> int:
    n = 0
    for (run_id,), part in df.partition_by("run_id", as_dict=True).items():
        assert as_dict(parse_lines(format_trec(part, mset))) == _expected10(data, run_id), run_id
        n += 1
    return n


def test_compat10_every_input_kind_equals_trec_eval_10(data, qrels, tmp_path) -> None:
    names = ["runid", *_pytrec.FAMILIES_V10, "relstring"]
    mset = fasteval.parse_measures(names, compat=10)
    ev = fasteval.Evaluator(qrels, names, compat=10)
    # all 129 runs from their files, then the same from an archive
    everything = ev.evaluate(data / "runs")
    assert _check10(data, everything, mset) == 129
    from click.testing import CliRunner

    from fasteval.cli import main

    # 20 runs from an archive (ingest is timed elsewhere): the same rows as from their files
    twenty = sorted((data / "runs").iterdir())[:20]
    archive = tmp_path / "trec8.parquet"
    res = CliRunner().invoke(main, ["ingest", *map(str, twenty), "-o", str(archive)])
    assert res.exit_code == 0, res.output
    names = fasteval.load_runs(twenty)["run_id"].unique(maintain_order=True).to_list()
    assert ev.evaluate(archive).equals(everything.filter(pl.col("run_id").is_in(names)))
    # single runs held in memory, evaluated one after the other by the same Evaluator
    runs = fasteval.load_runs([data / "runs" / f"{r}.gz" for r in SOME])
    for (run_id,), part in runs.partition_by("run_id", as_dict=True).items():
        for x in (part, part.to_arrow(), part.to_pandas()):
            assert _check10(data, ev.evaluate(x), mset) == 1, (run_id, type(x))


def test_compat9_dicts_equal_pytrec_eval(data, qrels) -> None:
    ev = fasteval.Evaluator(_pytrec.qrels_dict(qrels), _pytrec.FAMILIES, compat=9)
    runs = fasteval.load_runs([data / "runs" / f"{r}.gz" for r in SOME])
    dicts = _pytrec.run_dicts(runs)
    for run_id, d in dicts.items():
        got = ev.evaluate({run_id: d})
        c = _pytrec.compare(got, _pytrec.qrels_dict(qrels), {run_id: d})
        assert not c.problems, c.report()
        assert c.per_query == 50 * 90
