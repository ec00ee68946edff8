"""``fasteval report`` against the original 1999 NIST summaries of TREC-8 ad hoc.

The summaries (``trec8_adhoc/official_summary_1999``, see its PROVENANCE.md) were
made by the trec_eval of the time (before version 9). They hold, per run, every
topic's and the overall Retrieved / Relevant / Rel_ret, interpolated precision at
11 recall levels, average precision, P at 5..1000 and R-precision, and a table of
per-topic best / median / worst (relevant retrieved at 100 and 1000, AP) over the
run's category: 20 title-only, 59 title+description, 37 full-topic automatic and
13 manual runs, 129 in all, so every median can be recomputed from the archive.
The categories are read from the summaries themselves.

What reproduces how:

* ``compat=8`` (trec_eval before 9): every number, and the text from the first
  ``Queryid`` line to the end byte for byte (the first two lines, "This run was
  [NOT] judged", say whether the run was pooled, which is not in the data).
* ``compat=9`` (trec_eval 9.0.8): everything except (a) interpolated precision
  where 9.0.8's recall cutoff ``(long)(0.1*i*R + 0.9)``, computed in double, is one
  below the old integer ``ceil(i*R/10)`` (R=33 at 0.7, R=67 at 0.3, ...), and (b)
  values within 1e-7 of a 4th-decimal rounding boundary that the old float32
  storage rounds the other way (APs plt8ah4/431, umd99a1/410). Both are checked to
  be the only differences; (b) holds for some interpolated precisions too
  (Sab8A3/437 at 0.30: 13/160 = 0.08125 exactly, stored as C float 0.081249997).
* The 20-run title group has an even size: the summaries' median is the upper of
  the two middle values, which is what ``fasteval.report`` takes.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from fasteval.analysis.report import COLUMNS, format_text, report
from tests.oracle._harness import differences
from tests.oracle._nist_summary import read_summaries

pytestmark = pytest.mark.realdata

MANUAL = [
    "8manexT3D1N0",
    "CL99SD",
    "CL99SDopt1",
    "CL99SDopt2",
    "CL99XT",
    "CL99XTopt",
    "GE8MTD2",
    "READWARE",
    "READWARE2",
    "cirtrc82",
    "disco1",
    "iit99ma1",
    "orcl99man",
]
# uwmt8a0 needs float32 scores; the other three sit on AP rounding boundaries
SPECIAL = ["uwmt8a0", "plt8ah4", "umd99a1", "tno8d4"]
FLOAT_BOUNDARY_AP = {("plt8ah4", "431", "map"), ("umd99a1", "410", "map")}


@pytest.fixture(scope="module")
def summaries(trec8_dir):
    s = read_summaries(trec8_dir / "official_summary_1999")
    assert len(s) == 129
    return s


def groups_of(summaries):
    groups = {r: s.group for r, s in summaries.items()}
    descriptions = {s.group: s.group_text for s in summaries.values()}
    return groups, descriptions


def original_body(data, run_id: str) -> str:
    with gzip.open(data / "official_summary_1999" / f"summary.{run_id}.gz", "rt") as f:
        text = f.read()
    return text[text.index("Queryid") :]


def raw(rep) -> dict[tuple[str, str, str], float]:
    """``{(run, topic or 'all', measure): value}``."""
    out = {}
    rows = [*rep.per_query.iter_rows(named=True)]
    rows += [{**r, "query_id": "all"} for r in rep.summary.iter_rows(named=True)]
    for r in rows:
        for c in COLUMNS:
            out[(r["run_id"], r["query_id"], c)] = r[c]
    return out


def printed(rep) -> dict[tuple[str, str, str], str]:
    """``{(run, topic or 'all', measure): value as the summaries print it}``."""
    out = {}
    rows = [*rep.per_query.iter_rows(named=True)]
    rows += [{**r, "query_id": "all"} for r in rep.summary.iter_rows(named=True)]
    for r in rows:
        for c in COLUMNS:
            if c.startswith("rel_ret_"):
                continue
            v = r[c]
            out[(r["run_id"], r["query_id"], c)] = str(v) if isinstance(v, int) else f"{v:.4f}"
    return out


def expected_values(summaries, runs) -> dict[tuple[str, str, str], str]:
    return {(r, q, m): v for r in runs for (q, m), v in summaries[r].values.items()}


def cutoff_moved(level: str, num_rel: int) -> bool:
    """Whether trec_eval 9's double-precision recall cutoff misses the old integer one."""
    i = round(float(level) * 10)
    return int(float(level) * num_rel + 0.9) != (num_rel * i + 9) // 10


def as_c_float(value: float) -> str:
    """The value printed after storing it as a C float, as trec_eval before 9 did."""
    return f"{np.float32(value):.4f}"


def unexplained(diffs, summaries, values) -> dict:
    out = {}
    for (run, q, m), pair in diffs.items():
        if (run, q, m) in FLOAT_BOUNDARY_AP:
            continue  # float32 accumulation from the last relevant document up
        if q != "all" and as_c_float(values[(run, q, m)]) == pair[0]:
            continue  # a rounding boundary
        if m.startswith("iprec_at_recall_"):
            level = m.rsplit("_", 1)[1]
            if q == "all":
                continue  # an average of the per-topic values checked here
            if cutoff_moved(level, int(summaries[run].values[(q, "num_rel")])):
                continue
        out[(run, q, m)] = pair
    return out


def check_compat8(data, summaries, rep, runs, full_groups):
    """Every run's text equals the summary from the first Queryid line (the
    statistics table only for runs whose whole group is in ``rep``)."""
    bad = []
    for r in runs:
        got, want = format_text(rep, r), original_body(data, r)
        if summaries[r].group not in full_groups:
            got, want = got[: got.index("Statistics")], want[: want.index("Statistics")]
        if got != want:
            bad.append(r)
    assert not bad, f"{len(bad)} runs differ from their 1999 summary: {bad[:10]}"
    assert differences(expected_values(summaries, runs), printed(rep)) == {}


def test_a_handful_of_runs(trec8_dir, summaries):
    runs = MANUAL + SPECIAL
    groups, descriptions = groups_of(summaries)
    files = [trec8_dir / "runs" / f"input.{r}.gz" for r in runs]
    qrels = trec8_dir / "qrels.trec8.adhoc.gz"
    rep8 = report(qrels, files, compat=8, groups=groups, descriptions=descriptions)
    assert sorted(rep8.runs) == sorted(runs)
    check_compat8(trec8_dir, summaries, rep8, runs, {summaries["CL99SD"].group})
    assert summaries["uwmt8a0"].values[("401", "map")] == "0.0075"  # float32 scores

    rep9 = report(qrels, files, compat=9, groups=groups, descriptions=descriptions)
    diffs = differences(expected_values(summaries, runs), printed(rep9))
    assert unexplained(diffs, summaries, raw(rep9)) == {}
    assert set(diffs) >= FLOAT_BOUNDARY_AP
    assert any(m.startswith("iprec") for _, _, m in diffs)


@pytest.mark.slow
def test_all_129_runs(trec8_dir, summaries):
    groups, descriptions = groups_of(summaries)
    qrels = trec8_dir / "qrels.trec8.adhoc.gz"
    rep8 = report(qrels, trec8_dir / "runs", compat=8, groups=groups, descriptions=descriptions)
    assert len(rep8.runs) == 129
    # group sizes as the summaries state them
    for r, s in summaries.items():
        assert rep8.topics.filter(rep8.topics["group"] == s.group)["n_runs"].max() == s.n_group, r
    check_compat8(trec8_dir, summaries, rep8, list(summaries), set(descriptions))
    # every printed number: 129 runs x 51 blocks x 25, and 129 x 50 x 10 statistics
    assert sum(len(s.values) for s in summaries.values()) == 129 * 51 * 25
    assert sum(len(t) for s in summaries.values() for t in s.stats.values()) == 129 * 50 * 10

    rep9 = report(qrels, trec8_dir / "runs", compat=9, groups=groups)
    diffs = differences(expected_values(summaries, list(summaries)), printed(rep9))
    assert unexplained(diffs, summaries, raw(rep9)) == {}
    assert set(diffs) >= FLOAT_BOUNDARY_AP
    n_iprec = sum(m.startswith("iprec") and q != "all" for _, q, m in diffs)
    assert n_iprec > 100, n_iprec  # the cutoff rule does matter on TREC-8
