"""The classic per-run evaluation report (the NIST TREC summary pages).

For each run: summary statistics (topics, retrieved, relevant, relevant
retrieved), interpolated precision at the 11 standard recall levels, average
precision over all relevant documents, precision after 5 .. 1000 documents and
R-precision, per topic and averaged over topics; and, over a set of runs (all
runs given, or each run's category), per topic the best, median and worst
relevant-retrieved counts at 100 and 1000 documents and average precision, from
which each run's difference from the median is read.

Three arithmetics are offered:

* ``compat=9`` / ``compat=10``: trec_eval 9.0.8 / 10.0, through
  :func:`fasteval.evaluate` (9 stores scores as float32).
* ``compat=8``: trec_eval before version 9 (8.1 and the versions NIST used for
  the 1990s TREC summaries). Scores as float32, like 9, and

  - the rank for recall level ``i/10`` is that of the ``ceil(i*R/10)``-th
    relevant document, in integer arithmetic (``(R*i + 9) / 10`` in C). trec_eval 9
    computes ``(long)(0.1*i*R + 0.9)`` in double, which falls one short when
    ``0.1*i*R`` lands just below an integer (R=33 at 0.7: 23.099999... + 0.9 <
    24), so 9 and 10 differ from the old summaries there;
  - per-topic values are C ``float``: average precision accumulates the precision
    at each relevant document, from the last one up, in a float32 accumulator and
    is divided by R in float32; averages over topics sum float32 values in topic
    order. This moves three TREC-8 APs across a 4th-decimal rounding boundary
    (e.g. ``plt8ah4`` topic 431: 0.49414994 in double, 0.49415001 in float).

  With ``compat=8`` every number of the 1999 TREC-8 ad hoc summaries is
  reproduced (``tests/oracle/test_report_1999.py``).

References
----------
E. M. Voorhees and D. Harman, "Overview of the Eighth Text REtrieval Conference
(TREC-8)", Appendix A (evaluation techniques and measures), NIST SP 500-246, 1999.
C. Buckley, trec_eval (versions 8.1, 9.0.8, 10.0), https://github.com/usnistgov/trec_eval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import polars as pl

from fasteval.engine import QrelsLike, RunsLike, evaluate_ranking, prepare
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.measures.parser import parse_measures
from fasteval.options import EvalOptions

RECALL_LEVELS = tuple(i / 10 for i in range(11))
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
IPREC = tuple(f"iprec_at_recall_{r:.2f}" for r in RECALL_LEVELS)
PREC = tuple(f"P_{k}" for k in CUTOFFS)
COUNTS = ("num_ret", "num_rel", "num_rel_ret")
#: per-topic columns of :attr:`Report.per_query` (besides run_id, query_id)
COLUMNS = (*COUNTS, "rel_ret_100", "rel_ret_1000", *IPREC, "map", *PREC, "Rprec")
#: what the per-topic statistics take best / median / worst of
STAT_MEASURES = ("rel_ret_100", "rel_ret_1000", "map")
DEFAULT_GROUP = "runs"


@dataclass
class Report:
    """The classic evaluation report of a set of runs.

    Attributes
    ----------
    per_query
        One row per (run, topic) the run was evaluated on: ``run_id, query_id``
        and :data:`COLUMNS` (counts as integers, ``rel_ret_100`` / ``rel_ret_1000``
        = relevant documents in the top 100 / 1000).
    summary
        One row per run: ``run_id, num_q``, the summed counts and the mean of
        every other column over the run's topics.
    topics
        Per-topic statistics over each group of runs: ``group, query_id,
        num_rel, n_runs`` and ``<m>_best, <m>_median, <m>_worst`` for ``m`` in
        :data:`STAT_MEASURES`. The median of an even number of runs is the upper
        of the two middle values (as the NIST summaries print it).
    groups
        Run id -> the name of the group its topic statistics are taken over.
    compat
        8, 9 or 10 (see the module docstring).
    """

    per_query: pl.DataFrame
    summary: pl.DataFrame
    topics: pl.DataFrame
    groups: dict[str, str]
    compat: int
    descriptions: dict[str, str] = field(default_factory=dict)

    @property
    def runs(self) -> list[str]:
        """Run ids in report order."""
        return self.summary["run_id"].to_list()

    def run_summary(self, run_id: str) -> dict[str, float]:
        """The ``all`` values of one run, by column name."""
        rows = self.summary.filter(pl.col("run_id") == run_id)
        if rows.height == 0:
            msg = f"no run {run_id!r} in this report (runs: {', '.join(self.runs[:5])} ...)"
            raise ParameterError(msg)
        return rows.row(0, named=True)

    def vs_median(self, run_id: str) -> pl.DataFrame:
        """Per topic: the run's AP, the best / median / worst AP of its group, and
        ``diff`` = AP - median AP."""
        self.run_summary(run_id)
        group = self.groups[run_id]
        mine = self.per_query.filter(pl.col("run_id") == run_id).select("query_id", "map")
        stats = self.topics.filter(pl.col("group") == group).select(
            "query_id", "num_rel", "n_runs", "map_best", "map_median", "map_worst"
        )
        return (
            stats.join(mine, on="query_id", how="left")
            .with_columns(pl.col("map").fill_null(0.0))
            .with_columns((pl.col("map") - pl.col("map_median")).alias("diff"))
        )

    def text(self, run_id: str) -> str:
        """The run's report laid out like the 1999 NIST summary pages."""
        return format_text(self, run_id)


def _check(compat: int, groups: Mapping[str, str] | None) -> None:
    if compat not in (8, 9, 10):
        msg = f"compat must be 8, 9 or 10, got {compat!r}"
        raise ParameterError(msg)
    if groups is not None and not isinstance(groups, Mapping):
        msg = f"groups must map run ids to group names, got {type(groups).__name__}"
        raise ParameterError(msg)


def report(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    *,
    compat: int = 9,
    groups: Mapping[str, str] | None = None,
    descriptions: Mapping[str, str] | None = None,
    relevance_level: int = 1,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
) -> Report:
    """Compute the classic per-run evaluation report.

    Parameters
    ----------
    qrels, runs
        As for :func:`fasteval.evaluate` (files, directories, archives, frames).
    compat
        9 (trec_eval 9.0.8, default), 10 (trec_eval 10.0) or 8 (trec_eval before
        9, as in the 1990s NIST summaries; see the module docstring).
    groups
        Run id -> group name: per-topic best / median / worst are taken over the
        runs of a run's group (NIST used the run's category, e.g. "manual").
        Runs not named keep the group ``"runs"``; default: all runs in one group.
    descriptions
        Group name -> what the text report says the statistics are over
        (default: the group name).
    relevance_level
        A grade ``>= relevance_level`` is relevant.
    on_duplicate, lenient, run_id_from
        As for :func:`fasteval.evaluate`.

    Returns
    -------
    Report
        Per (run, topic) values, per-run averages and per-topic statistics.

    Raises
    ------
    fasteval.errors.FastevalError
        For malformed input, unknown parameters and runs without a query in
        common with the qrels.
    """
    _check(compat, groups)
    if compat == 8:
        per_query, summary = _classic(
            qrels,
            runs,
            level=relevance_level,
            on_duplicate=on_duplicate,
            lenient=lenient,
            run_id_from=run_id_from,
        )
    else:
        per_query, summary = _modern(
            qrels,
            runs,
            compat=compat,
            level=relevance_level,
            on_duplicate=on_duplicate,
            lenient=lenient,
            run_id_from=run_id_from,
        )
    run_ids = summary["run_id"].to_list()
    group_of = {r: str((groups or {}).get(r, DEFAULT_GROUP)) for r in run_ids}
    topics = topic_statistics(per_query, group_of)
    return Report(
        per_query=per_query,
        summary=summary,
        topics=topics,
        groups=group_of,
        compat=compat,
        descriptions=dict(descriptions or {}),
    )


def upper_median(values: pl.Expr) -> pl.Expr:
    """The middle value; of an even count the upper of the two middle ones."""
    return values.sort().get(values.len() // 2)


def topic_statistics(per_query: pl.DataFrame, groups: Mapping[str, str]) -> pl.DataFrame:
    """Best / median / worst of :data:`STAT_MEASURES` per (group, topic)."""
    g = pl.DataFrame(
        {"run_id": list(groups), "group": list(groups.values())},
        schema={"run_id": pl.String, "group": pl.String},
    )
    aggs: list[pl.Expr] = [pl.col("num_rel").first(), pl.len().alias("n_runs")]
    for m in STAT_MEASURES:
        aggs += [
            pl.col(m).max().alias(f"{m}_best"),
            upper_median(pl.col(m)).alias(f"{m}_median"),
            pl.col(m).min().alias(f"{m}_worst"),
        ]
    return (
        per_query.join(g, on="run_id", how="left")
        .group_by("group", "query_id", maintain_order=True)
        .agg(aggs)
        .sort("group", "query_id")
    )


# --- trec_eval 9 / 10 through the engine ---------------------------------------------


def _modern(
    qrels: QrelsLike,
    runs: RunsLike,
    *,
    compat: int,
    level: int,
    on_duplicate: str,
    lenient: bool,
    run_id_from: str,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    cut = ",".join(str(k) for k in CUTOFFS)
    measures = ["num_q", *COUNTS, "map", "Rprec", "iprec_at_recall", f"P.{cut}"]
    long, _ = evaluate_ranking(
        qrels,
        runs,
        parse_measures(measures, compat=compat),
        EvalOptions(
            compat=compat,
            relevance_level=level,
            on_duplicate=on_duplicate,
            lenient=lenient,
            run_id_from=run_id_from,
        ),
    )
    wide = long.pivot(on="measure", index=["run_id", "query_id"], values="value")
    ints = [pl.col(c).round().cast(pl.Int64) for c in COUNTS]
    rel_ret = [
        (pl.col("P_100") * 100).round().cast(pl.Int64).alias("rel_ret_100"),
        (pl.col("P_1000") * 1000).round().cast(pl.Int64).alias("rel_ret_1000"),
    ]
    is_all = pl.col("query_id") == "all"
    per_query = (
        wide.filter(~is_all).with_columns(*ints, *rel_ret).select("run_id", "query_id", *COLUMNS)
    )
    # the engine's "all" rows are trec_eval's; the two relevant-retrieved counts
    # are not trec_eval measures: mean over topics like the rest
    extra = per_query.group_by("run_id", maintain_order=True).agg(
        pl.col("rel_ret_100").mean(), pl.col("rel_ret_1000").mean()
    )
    summary = (
        wide.filter(is_all)
        .with_columns(pl.col("num_q").round().cast(pl.Int64), *ints)
        .join(extra, on="run_id", how="left")
        .select("run_id", "num_q", *COLUMNS)
    )
    return per_query, summary


# --- trec_eval before 9 ------------------------------------------------------------


class _TopicGroups(NamedTuple):
    """The (run, topic) groups that retrieved something, in output order."""

    starts: np.ndarray  # first ranked position of each group
    g_run: np.ndarray  # run index of each group
    g_q: np.ndarray  # query index of each group
    n_ret: np.ndarray  # documents retrieved
    num_rel: np.ndarray  # relevant documents of the group's topic


class _Relevant(NamedTuple):
    """Every relevant retrieved document, group by group, top down."""

    rg: np.ndarray  # its group
    rank: np.ndarray  # its rank (1-based)
    nrr: np.ndarray  # per group: relevant retrieved
    first: np.ndarray  # per group: index of its first relevant document in these arrays
    kth: np.ndarray  # it is the kth relevant document of its group
    prec: np.ndarray  # precision at it (double)


def _classic(
    qrels: QrelsLike,
    runs: RunsLike,
    *,
    level: int,
    on_duplicate: str,
    lenient: bool,
    run_id_from: str,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-topic values and averages with trec_eval 8's integer cutoffs and floats."""
    prep = prepare(
        qrels,
        runs,
        compat=9,  # float32 scores, like every trec_eval before 10
        on_duplicate=on_duplicate,
        lenient=lenient,
        run_id_from=run_id_from,
    )
    enc = prep.enc
    grp = _topic_groups(enc, level)
    rel = _relevant(enc, grp, level)
    cols = _topic_columns(grp, rel)
    return _classic_per_query(enc, grp, cols), _classic_summary(enc, grp, cols)


def _topic_groups(enc: Encoded, level: int) -> _TopicGroups:
    n_q = enc.qr_off.shape[0] - 1
    judged_q = np.repeat(np.arange(n_q), np.diff(enc.qr_off))
    num_rel_q = np.bincount(judged_q, weights=enc.qr_rel >= level, minlength=n_q).astype(np.int64)
    keep = np.flatnonzero(enc.ends > enc.starts)
    g_q = enc.group_q[keep]
    return _TopicGroups(
        starts=enc.starts[keep],
        g_run=enc.group_run[keep],
        g_q=g_q,
        n_ret=(enc.ends[keep] - enc.starts[keep]).astype(np.int64),
        num_rel=num_rel_q[g_q],
    )


def _relevant(enc: Encoded, grp: _TopicGroups, level: int) -> _Relevant:
    n_g = grp.n_ret.shape[0]
    pos_g = np.repeat(np.arange(n_g), grp.n_ret)
    offs = np.concatenate([[0], np.cumsum(grp.n_ret)]).astype(np.int64)
    rank_all = np.arange(int(offs[-1]), dtype=np.int64) - np.repeat(offs[:-1], grp.n_ret) + 1
    is_rel = enc.rel[np.repeat(grp.starts, grp.n_ret) + rank_all - 1] >= level
    rg = pos_g[is_rel]
    rank = rank_all[is_rel].astype(np.int64)
    nrr = np.bincount(rg, minlength=n_g).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(nrr)[:-1]]).astype(np.int64)
    kth = np.arange(rg.shape[0], dtype=np.int64) - first[rg] + 1  # k-th relevant of its group
    return _Relevant(rg=rg, rank=rank, nrr=nrr, first=first, kth=kth, prec=kth / rank)


def _ap_and_iprec(rel: _Relevant, num_rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float32 average precision per group, and interpolated precision at each relevant document.

    From the last relevant document up: a float32 AP accumulator, and the
    running maximum of precision (the interpolated precision at that document).
    """
    f32 = np.float32
    n_g = rel.nrr.shape[0]
    step = rel.nrr[rel.rg] - rel.kth
    order = np.argsort(step, kind="stable")
    bounds = np.searchsorted(step[order], np.arange(int(rel.nrr.max(initial=0)) + 1))
    acc = np.zeros(n_g, f32)
    run_max = np.zeros(n_g, np.float64)
    iprec_at = np.zeros(rel.rg.shape[0], f32)
    for s in range(bounds.shape[0] - 1):
        idx = order[bounds[s] : bounds[s + 1]]
        gs = rel.rg[idx]
        acc[gs] = (acc[gs].astype(np.float64) + rel.prec[idx]).astype(f32)
        run_max[gs] = np.maximum(run_max[gs], rel.prec[idx])
        iprec_at[idx] = run_max[gs].astype(f32)
    safe_r = np.maximum(num_rel, 1).astype(f32)
    ap = np.where(rel.nrr > 0, acc / safe_r, f32(0)).astype(f32)
    return ap, iprec_at


def _topic_columns(grp: _TopicGroups, rel: _Relevant) -> dict[str, np.ndarray]:
    """Every :data:`COLUMNS` value per group, as trec_eval 8 computes it."""
    f32 = np.float32
    n_g = grp.n_ret.shape[0]
    num_rel = grp.num_rel
    ap, iprec_at = _ap_and_iprec(rel, num_rel)

    def rel_within(limit: np.ndarray | int) -> np.ndarray:
        lim = limit if isinstance(limit, int) else limit[rel.rg]
        return np.bincount(rel.rg[rel.rank <= lim], minlength=n_g).astype(np.int64)

    cols: dict[str, np.ndarray] = {
        "num_ret": grp.n_ret,
        "num_rel": num_rel,
        "num_rel_ret": rel.nrr,
        "rel_ret_100": rel_within(100),
        "rel_ret_1000": rel_within(1000),
    }
    for i, name in enumerate(IPREC):
        c = (num_rel * i + 9) // 10  # ceil(i * R / 10), the old integer cutoff
        c = np.maximum(c, 1)  # level 0.0: the maximum precision anywhere
        ok = c <= rel.nrr
        v = np.zeros(n_g, f32)
        v[ok] = iprec_at[rel.first[ok] + c[ok] - 1]
        cols[name] = v
    cols["map"] = ap
    for k, name in zip(CUTOFFS, PREC, strict=True):
        cols[name] = (rel_within(k) / k).astype(f32)
    rprec = np.where(num_rel > 0, rel_within(num_rel) / np.maximum(num_rel, 1), 0)
    cols["Rprec"] = rprec.astype(f32)
    return cols


def _classic_per_query(
    enc: Encoded, grp: _TopicGroups, cols: dict[str, np.ndarray]
) -> pl.DataFrame:
    ints = (*COUNTS, "rel_ret_100", "rel_ret_1000")
    run_names = np.asarray(enc.run_names, dtype=object)
    qids = np.asarray(enc.qids, dtype=object)
    return pl.DataFrame(
        {
            "run_id": pl.Series(run_names[grp.g_run], dtype=pl.String),
            "query_id": pl.Series(qids[grp.g_q], dtype=pl.String),
            **{
                c: v.astype(np.int64) if c in ints else v.astype(np.float64)
                for c, v in cols.items()
            },
        }
    ).select("run_id", "query_id", *COLUMNS)


def _classic_summary(enc: Encoded, grp: _TopicGroups, cols: dict[str, np.ndarray]) -> pl.DataFrame:
    """Per run: summed counts; averages as float32 sums in topic order, divided in float32."""
    f32 = np.float32
    g_run = grp.g_run
    n_runs = len(enc.run_names)
    nq = np.bincount(g_run, minlength=n_runs).astype(np.int64)
    run_first = np.concatenate([[0], np.cumsum(nq)[:-1]])
    within = np.arange(g_run.shape[0]) - run_first[g_run]
    summary: dict[str, object] = {
        "run_id": pl.Series(list(enc.run_names), dtype=pl.String),
        "num_q": nq,
    }
    for c in COLUMNS:
        v = cols[c]
        if c in COUNTS:
            summary[c] = np.bincount(g_run, weights=v, minlength=n_runs).astype(np.int64)
            continue
        total = np.zeros(n_runs, f32)
        for j in range(int(nq.max(initial=0))):
            sel = within == j
            total[g_run[sel]] = (total[g_run[sel]] + v[sel].astype(f32)).astype(f32)
        summary[c] = np.where(nq > 0, total / np.maximum(nq, 1).astype(f32), 0).astype(np.float64)
    return pl.DataFrame(summary).filter(pl.col("num_q") > 0).select("run_id", "num_q", *COLUMNS)


# --- text, laid out like the 1999 NIST summaries -----------------------------------


def _block(run_id: str, qid: str, row: Mapping[str, float]) -> list[str]:
    lines = [
        f"Queryid (Num):{qid:>10}  {run_id}",
        "Total number of documents over all queries",
        f"    Retrieved:{int(row['num_ret']):>9}",
        f"    Relevant:{int(row['num_rel']):>10}",
        f"    Rel_ret:{int(row['num_rel_ret']):>11}",
        "Interpolated Recall - Precision Averages:",
        *(f"    at {r:.2f}       {row[n]:.4f} " for r, n in zip(RECALL_LEVELS, IPREC, strict=True)),
        "Average precision (non-interpolated) over all rel docs",
        f"                  {row['map']:.4f} ",
        "Precision:",
        *(f"  At {k:>4} docs:   {row[n]:.4f}" for k, n in zip(CUTOFFS, PREC, strict=True)),
        "R-Precision (precision after R (= num_rel for a query) docs retrieved):",
        f"    Exact:        {row['Rprec']:.4f}",
        "",
    ]
    return lines


STATS_HEADER = [
    "         #        Relevant Retr. @ 100      Relevant Retr @ 1000        Average Precision ",
    "Topic   Rel.      Best   Median  Worst      Best   Median  Worst      Best   Median  Worst",
    "-----   ----     ------  ------  ------    ------  ------  ------    ------  ------  ------",
]


def format_text(rep: Report, run_id: str) -> str:
    """One run's report as text, laid out like the 1999 NIST summary pages.

    Per topic and for ``all``: the counts, interpolated precision at the 11
    recall levels, average precision, precision at 5..1000 documents and
    R-precision; then the per-topic statistics over the run's group.
    """
    summ = rep.run_summary(run_id)
    lines: list[str] = []
    for row in rep.per_query.filter(pl.col("run_id") == run_id).iter_rows(named=True):
        lines += _block(run_id, row["query_id"], row)
    lines += _block(run_id, "all", summ)
    group = rep.groups[run_id]
    stats = rep.topics.filter(pl.col("group") == group)
    n = int(stats["n_runs"].to_numpy().max(initial=0))
    what = rep.descriptions.get(group, group)
    if not what.endswith((".", "!", "?")):
        what += "."
    lines += [f"Statistics computed over {n} {what}", "", *STATS_HEADER]
    for t in stats.iter_rows(named=True):
        lines.append(
            f"{t['query_id']:<8}{t['num_rel']:<11}"
            f"{t['rel_ret_100_best']:<8}{t['rel_ret_100_median']:<8}{t['rel_ret_100_worst']:<10}"
            f"{t['rel_ret_1000_best']:<8}{t['rel_ret_1000_median']:<8}{t['rel_ret_1000_worst']:<8}"
            f"{t['map_best']:<8.4f}{t['map_median']:<8.4f}{t['map_worst']:<8.4f}"
        )
    return "\n".join(lines) + "\n"
