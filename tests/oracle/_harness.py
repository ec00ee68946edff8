"""What the whole-track oracle tests share (TREC-8 ad hoc, TREC 2003 Robust, ...).

A track folder holds ``runs/`` and, where the track has them, trec_eval's stored
outputs (``trec_eval_q_all_trec/eval.<runid>.gz``: trec_eval 10, ``-q -m
all_trec``) and NIST's 1999 summaries (``official_summary_1999``). The checks:

* :func:`check_pytrec_eval`: every per-query value and aggregate against
  pytrec_eval (trec_eval 9.0.8), to ``_pytrec.compare``'s tolerance (1e-9);
* :func:`check_trec_eval_10`: every implemented line trec_eval 10 printed,
  compared as printed strings;
* :func:`printed` and :func:`nist_1999_values`: values as the official summaries
  print them (``%6.4f``), compared as strings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

import fasteval
from fasteval.io.writers import format_trec
from tests.oracle import _pytrec
from tests.oracle._nist_summary import read_summaries
from tests.oracle._trec_text import as_dict, diff_report, implemented, parse_lines, read_text

if TYPE_CHECKING:
    from fasteval.measures.parser import MeasureSet

Key = tuple[str, str, str]  # (run, topic or "all", measure)


def load_track_runs(folder: Path, n_runs: int) -> pl.DataFrame:
    """Every run of ``folder/runs``, checked to be ``n_runs`` runs."""
    runs = fasteval.load_runs(folder / "runs")
    assert runs["run_id"].n_unique() == n_runs
    return runs


def check_pytrec_eval(
    scores: pl.DataFrame,
    qrels: pl.DataFrame | dict,
    runs: pl.DataFrame | dict,
    *,
    relevance_level: int = 1,
) -> _pytrec.Comparison:
    """``scores`` (compat=9, ``_pytrec.FAMILIES``, per query) equal pytrec_eval on the
    same qrels and runs (frames or pytrec_eval dicts); returns the counts compared."""
    if isinstance(qrels, pl.DataFrame):
        qrels = _pytrec.qrels_dict(qrels)
    if isinstance(runs, pl.DataFrame):
        runs = _pytrec.run_dicts(runs)
    c = _pytrec.compare(scores, qrels, runs, relevance_level=relevance_level)
    assert not c.problems, c.report()
    return c


def trec_eval_10_lines(folder: Path, run_id: str) -> dict[tuple[str, str], str]:
    """The implemented lines of the stored trec_eval 10 output of ``run_id``."""
    text = read_text(folder / "trec_eval_q_all_trec" / f"eval.{run_id}.gz")
    return as_dict(implemented(parse_lines(text)))


def check_trec_eval_10(folder: Path, scores: pl.DataFrame, mset: MeasureSet) -> tuple[int, int]:
    """Every run of ``scores`` printed as trec_eval prints it equals its stored
    trec_eval 10 output, line for line; returns (runs, lines) compared."""
    n_runs = n_lines = 0
    failures = []
    for (run_id,), part in scores.partition_by("run_id", as_dict=True).items():
        expected = trec_eval_10_lines(folder, run_id)
        got = as_dict(parse_lines(format_trec(part, mset)))
        n_runs += 1
        n_lines += len(expected)
        if got != expected:
            failures.append(f"{run_id}: {diff_report(expected, got, limit=5)}")
    assert not failures, f"{len(failures)} runs differ:\n" + "\n".join(failures[:20])
    return n_runs, n_lines


def printed(scores: pl.DataFrame) -> dict[Key, str]:
    """``{(run, topic or 'all', measure): value}`` printed ``%6.4f`` as trec_eval and
    NIST's summaries print it; text-only rows (relstring) are left out."""
    rows = scores.filter(pl.col("value").is_not_null())
    return {
        (r, q, m): f"{v:6.4f}"
        for r, q, m, v in rows.select("run_id", "query_id", "measure", "value").iter_rows()
    }


def nist_1999_values(folder: Path, n_topics: int, keep: Callable[[str], bool]) -> dict[Key, str]:
    """``{(run, topic or 'all', measure): value as printed}`` from the 1999 NIST
    summaries in ``folder``, for the measures ``keep`` accepts; every summary is
    checked to hold ``n_topics`` topic blocks and an 'all' block."""
    out = {}
    for run_id, s in read_summaries(folder).items():
        assert len({q for q, _ in s.values}) == n_topics + 1, run_id
        out.update({(run_id, q, m): v for (q, m), v in s.values.items() if keep(m)})
    return out


def differences(expected: dict, got: dict) -> dict:
    """``{key: (expected, got or None)}`` where ``got`` does not have the expected value."""
    return {k: (v, got.get(k)) for k, v in expected.items() if got.get(k) != v}
