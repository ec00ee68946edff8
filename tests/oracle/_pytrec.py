"""Comparing fasteval with pytrec-eval-terrier (trec_eval 9.0.8 in C) on whole tracks."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import polars as pl
import pytrec_eval

from tests.comparisons import COMPARISONS, families

# every implemented family trec_eval 9.0.8 has, with its default parameters
# (tests/comparisons.py; tests/unit/test_comparisons.py checks it against IMPLEMENTED)
FAMILIES = families("pytrec_eval")
# what trec_eval 10's all_trec prints of the ranking evaluator's numeric families
FAMILIES_V10 = sorted(
    c.family
    for c in COMPARISONS
    if "trec_eval_10" in c.oracles and c.evaluator == "ranking" and c.family != "relstring"
)
# pytrec_eval reports these per query although trec_eval only prints them in the
# summary; its per-query gm_map is log(max(AP, 1e-5)). Compared only aggregated.
SUMMARY_ONLY = {"num_q", "gm_map", "gm_bpref"}


def qrels_dict(qrels: pl.DataFrame) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q, d, r in qrels.select("query_id", "doc_id", "relevance").iter_rows():
        out.setdefault(q, {})[d] = int(r)
    return out


def run_dicts(runs: pl.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (run_id,), part in runs.partition_by("run_id", as_dict=True).items():
        run: dict[str, dict[str, float]] = {}
        for q, d, s in part.select("query_id", "doc_id", "score").iter_rows():
            run.setdefault(q, {})[d] = s
        out[run_id] = run
    return out


@dataclass
class Comparison:
    per_query: int = 0  # per-query values compared
    aggregates: int = 0  # 'all' values compared
    max_diff: float = 0.0
    problems: list[str] = field(default_factory=list)

    def report(self, limit: int = 20) -> str:
        head = (
            f"{len(self.problems)} problems; compared {self.per_query} per-query and "
            f"{self.aggregates} aggregate values; max |diff| {self.max_diff:.3g}"
        )
        return "\n".join([head, *self.problems[:limit]])


def compare(
    fe: pl.DataFrame,
    qrels: dict[str, dict[str, int]],
    runs: dict[str, dict[str, dict[str, float]]],
    *,
    relevance_level: int = 1,
    tol: float = 1e-9,
) -> Comparison:
    """Every per-query value and every aggregate of ``fe`` (fasteval, per_query=True,
    ``FAMILIES`` with default parameters) against pytrec_eval on the same data.

    Aggregates of pytrec_eval are ``pytrec_eval.compute_aggregated_measure`` over its
    per-query values (sum for num_*, geometric mean for gm_*, mean otherwise).
    """
    got = {
        (r, q, m): v
        for r, q, m, v in fe.select(["run_id", "query_id", "measure", "value"]).iter_rows()
    }
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(FAMILIES), relevance_level=relevance_level)
    c = Comparison()

    def check(key: tuple[str, str, str], want: float) -> None:
        g = got.pop(key, None)
        if g is None:
            c.problems.append(f"missing in fasteval: {key} (pytrec_eval {want!r})")
            return
        d = abs(g - want)
        c.max_diff = max(c.max_diff, d)
        if not d <= tol:
            c.problems.append(f"{key}: fasteval {g!r} pytrec_eval {want!r} (diff {d:.3g})")

    for run_id, run in runs.items():
        res = ev.evaluate(run)
        values: dict[str, list[float]] = defaultdict(list)
        for qid, by_measure in res.items():
            for m, v in by_measure.items():
                values[m].append(v)
                if m not in SUMMARY_ONLY:
                    check((run_id, qid, m), v)
                    c.per_query += 1
        for m, vs in values.items():
            check((run_id, "all", m), pytrec_eval.compute_aggregated_measure(m, vs))
            c.aggregates += 1
        if not res:
            c.problems.append(f"pytrec_eval evaluated no query of run {run_id}")
    c.problems += [f"extra in fasteval: {k} = {v!r}" for k, v in sorted(got.items())]
    return c
