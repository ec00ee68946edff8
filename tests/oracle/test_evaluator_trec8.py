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
from tests.oracle import _harness, _pytrec

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

SOME = ["input.INQ603", "input.CL99XT", "input.uwmt8a0"]


def _check10(data, df: pl.DataFrame, mset) -> int:
    """The number of runs of ``df``, each checked against its trec_eval 10 output."""
    return _harness.check_trec_eval_10(data, df, mset)[0]


def test_compat10_every_input_kind_equals_trec_eval_10(trec8_dir, trec8_qrels, tmp_path) -> None:
    names = ["runid", *_pytrec.FAMILIES_V10, "relstring"]
    mset = fasteval.parse_measures(names, compat=10)
    ev = fasteval.Evaluator(trec8_qrels, names, compat=10)
    # all 129 runs from their files, then the same from an archive
    everything = ev.evaluate(trec8_dir / "runs")
    assert _check10(trec8_dir, everything, mset) == 129
    from click.testing import CliRunner

    from fasteval.cli import main

    # 20 runs from an archive (ingest is timed elsewhere): the same rows as from their files
    twenty = sorted((trec8_dir / "runs").iterdir())[:20]
    archive = tmp_path / "trec8.parquet"
    res = CliRunner().invoke(main, ["ingest", *map(str, twenty), "-o", str(archive)])
    assert res.exit_code == 0, res.output
    names = fasteval.load_runs(twenty)["run_id"].unique(maintain_order=True).to_list()
    assert ev.evaluate(archive).equals(everything.filter(pl.col("run_id").is_in(names)))
    # single runs held in memory, evaluated one after the other by the same Evaluator
    runs = fasteval.load_runs([trec8_dir / "runs" / f"{r}.gz" for r in SOME])
    for (run_id,), part in runs.partition_by("run_id", as_dict=True).items():
        for x in (part, part.to_arrow(), part.to_pandas()):
            assert _check10(trec8_dir, ev.evaluate(x), mset) == 1, (run_id, type(x))


def test_compat9_dicts_equal_pytrec_eval(trec8_dir, trec8_qrels) -> None:
    ev = fasteval.Evaluator(_pytrec.qrels_dict(trec8_qrels), _pytrec.FAMILIES, compat=9)
    runs = fasteval.load_runs([trec8_dir / "runs" / f"{r}.gz" for r in SOME])
    dicts = _pytrec.run_dicts(runs)
    for run_id, d in dicts.items():
        got = ev.evaluate({run_id: d})
        c = _harness.check_pytrec_eval(got, _pytrec.qrels_dict(trec8_qrels), {run_id: d})
        assert c.per_query == 50 * 90
