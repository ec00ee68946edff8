"""Novelty and diversity evaluation with ndeval's numbers (TREC Web track 2009-2014).

Measures (ndeval 4.5; Clarke et al. SIGIR 2008 and ICTIR 2009; Chapelle et al.
CIKM 2009; Agrawal et al. WSDM 2009). Judgments are binary per subtopic
(relevant iff ``grade >= relevance_level``; ndeval clamps grades above 1 to 1);
``m`` counts the query's subtopics with at least one relevant document (the
others are ignored); ``J_i(r)`` is 1 when the document at rank ``r`` is
relevant to subtopic ``i``, ``C_i(r)`` the number of such documents in ranks
``1..r``. The novelty-biased gain is ``NG(r) = sum_i J_i(r) (1 - alpha)^C_i(r-1)``.

* ``alpha_DCG@k`` = ``sum_{r<=k} NG(r) / log2(r + 1)``, divided for ``k >= 2``
  by the same sum for a ranking covering all ``m`` subtopics at every rank
  (ndeval's "ideal ideal" normalisation, which it skips at ``k = 1``).
* ``ERR_IA@k``: as alpha_DCG with the discount ``1 / r``.
* ``alpha_nDCG@k``, ``nERR_IA@k``: divided by the value of the ideal ranking,
  built greedily as ndeval builds it (at each rank the document with the
  largest gain; ties to the larger docno); 0 when the run's value is 0.
* ``NRBP`` = ``(1 - (1 - alpha) beta) / m * sum_r beta^(r-1) NG(r)`` over the
  whole ranking; ``nNRBP`` = NRBP / NRBP of the ideal ranking (NaN, as in
  ndeval, for a query without any relevant document).
* ``MAP_IA`` = mean over subtopics of the average precision for that subtopic.
* ``P_IA@k`` = ``sum_{r<=k} sum_i J_i(r) / (k m)``; ``strec@k`` = share of the
  ``m`` subtopics covered by the first ``k`` documents.

Ordering of a run (``order=``): ``"rank"`` (ndeval's default: the rank column, a rank
twice for a query an error), ``"traditional"`` (ndeval ``-traditional``: score, then
docno descending) or ``"pyndeval"`` (score, then docno ascending, as pyndeval); they
differ only among tied scores or where the ranks disagree with the scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.columns import (
    QrelsColumns,
    RunColumns,
    StrColumn,
    null_mask,
    numeric_numpy,
    offsets,
)
from fasteval.engine.encode import Encoded, encode
from fasteval.engine.inputs import as_list, check_runs_retrieved
from fasteval.engine.table import long_table
from fasteval.errors import InputFormatError, ParameterError
from fasteval.io.diversity import DiversityQrels, diversity_qrels_columns
from fasteval.io.tables import run_columns
from fasteval.kernels import diversity as kd
from fasteval.measures.diversity import FAMILIES, DiversityMeasure, parse_diversity_measures
from fasteval.options import EvalOptions, options_of
from fasteval.parallel import gc_paused

ORDERS = ("rank", "traditional", "pyndeval")


@dataclass
class DiversityPrepared:
    """Diversity qrels and runs joined for the kernels.

    ``enc``: the rankings by (run, query); ``seq[p]``: the relevant entry at ordered
    position ``p`` (-1: none). Query ``q`` has ``m_q[q]`` subtopics
    (``sub_value[sub_off[q]:sub_off[q+1]]`` ascending, ``nrel`` relevant documents
    each) and relevant entries ``qd_off[q]:qd_off[q+1]`` by docno, entry ``e``'s
    subtopics ``rd_sub[rd_off[e]:rd_off[e+1]]``.
    """

    qrels: DiversityQrels
    enc: Encoded
    seq: np.ndarray
    m_q: np.ndarray
    sub_off: np.ndarray
    sub_value: np.ndarray
    nrel: np.ndarray
    qd_off: np.ndarray
    rd_off: np.ndarray
    rd_sub: np.ndarray
    # for qrels variants: each relevant entry's judged document, each one's qrels row
    entry_u: np.ndarray | None = None
    doc_rows: np.ndarray | None = None


def _check_duplicates(q: DiversityQrels, df: pl.DataFrame) -> None:
    dup = df.filter(pl.struct("qid", "sub", "doc").is_duplicated())
    if dup.height == 0:
        return
    key = dup.row(0, named=True)
    same = dup.filter(*(pl.col(c) == key[c] for c in ("qid", "sub", "doc")))["row"]
    a, b = int(same[0]), int(same[1])
    msg = (
        f"{q.source.where(b)}: duplicate judgment for query {key['qid']!r} subtopic "
        f"{q.subtopic_label(int(key['sub']))} document {key['doc']!r} "
        f"(first at {q.source.where(a)})"
    )
    raise InputFormatError(msg)


def prepare_diversity(
    qrels: Any,
    runs: Any,
    opts: EvalOptions | None = None,
    *,
    order: str = "rank",
    **fields: Any,
) -> DiversityPrepared:
    """Diversity qrels and runs in kernel layout (``opts``, ``fields`` as for
    :func:`fasteval.engine.prepare`)."""
    if order not in ORDERS:
        msg = f"order must be one of {', '.join(ORDERS)}, got {order!r}"
        raise ParameterError(msg)
    opts = options_of(opts, fields)
    dq = diversity_qrels_columns(qrels, lenient=opts.lenient)
    rc = runs if isinstance(runs, RunColumns) else run_columns(as_list(runs), opts)
    df = pl.DataFrame(
        {
            "qid": pl.from_arrow(dq.qid.to_arrow()),
            "sub": dq.subtopic,
            "doc": pl.from_arrow(dq.doc.to_arrow()),
            "rel": dq.rel,
        }
    ).with_row_index("row")
    _check_duplicates(dq, df)
    udocs, first, enc = _encode_judged(dq, df, rc, opts)
    subs, m_q, sub_off, ent, qd_off, rd, rd_off = _subtopic_tables(df, udocs, enc.qids, opts)
    entry_of_u = np.full(udocs.height, -1, np.int64)
    entry_of_u[ent["u"].to_numpy()] = ent["e"].to_numpy()
    pos_e = np.where(enc.jdx >= 0, entry_of_u[enc.qr_rows[np.maximum(enc.jdx, 0)]], -1)
    seq = _ordered(enc, rc, order, pos_e)
    return DiversityPrepared(
        qrels=dq,
        enc=enc,
        seq=np.ascontiguousarray(seq, dtype=np.int64),
        m_q=m_q,
        sub_off=sub_off,
        sub_value=subs["sub"].to_numpy().astype(np.int64),
        nrel=subs["nrel"].to_numpy().astype(np.int64),
        qd_off=qd_off,
        rd_off=rd_off,
        rd_sub=rd["j"].to_numpy().astype(np.int64),
        entry_u=ent["u"].to_numpy().astype(np.int64),
        doc_rows=first,
    )


def _encode_judged(
    dq: DiversityQrels, df: pl.DataFrame, rc: RunColumns, opts: EvalOptions
) -> tuple[pl.DataFrame, np.ndarray, Encoded]:
    """The runs encoded against one judgment per (query, doc), relevant if any
    subtopic is: those (``u, qid, doc, first, any``), their first rows, the encoding."""
    udocs = df.group_by(["qid", "doc"], maintain_order=True).agg(
        pl.col("row").first().alias("first"),
        (pl.col("rel") >= opts.relevance_level).any().alias("any"),
    )
    first = udocs["first"].to_numpy().astype(np.int64)
    src = dq.source
    uq = QrelsColumns(
        StrColumn.from_arrow(dq.qid.take(first)),
        StrColumn.from_arrow(dq.doc.take(first)),
        udocs["any"].to_numpy().astype(np.int32),
        src.take(first),
    )
    enc = encode(uq, rc, replace(opts, compat=10))  # ndeval's scores are float64
    check_runs_retrieved(enc.run_names, enc.group_run, enc.ends > enc.starts)
    return udocs.with_row_index("u"), first, enc


def _subtopic_tables(
    df: pl.DataFrame, udocs: pl.DataFrame, qids: list[str], opts: EvalOptions
) -> tuple[Any, ...]:
    """The relevant judgments by query number: subtopics (``q, sub, nrel, j``), their
    count and offsets per query, entries (``q, u, doc, e``) and offsets per query,
    each entry's subtopics (``e, j``) and their offsets."""
    n_q = len(qids)
    qmap = pl.DataFrame({"qid": qids, "q": np.arange(n_q, dtype=np.int64)})
    relv = (
        df.filter(pl.col("rel") >= opts.relevance_level)
        .join(udocs.select("qid", "doc", "u"), on=["qid", "doc"])
        .join(qmap, on="qid")
    )
    subs = (
        relv.group_by(["q", "sub"])
        .agg(pl.len().alias("nrel"))
        .sort(["q", "sub"])
        .with_columns(pl.int_range(pl.len()).over("q").alias("j"))
    )
    m_q = np.bincount(subs["q"].to_numpy(), minlength=n_q).astype(np.int64)
    sub_off = offsets(m_q)
    ent = (
        relv.select("q", "u", "doc")
        .unique(["u"])
        .sort(["q", pl.col("doc").cast(pl.Binary)])
        .with_row_index("e")
    )
    qd_off = offsets(np.bincount(ent["q"].to_numpy(), minlength=n_q))
    rd = (
        relv.join(subs.select("q", "sub", "j"), on=["q", "sub"])
        .join(ent.select("u", "e"), on="u")
        .sort(["e", "j"])
    )
    rd_off = offsets(np.bincount(rd["e"].to_numpy(), minlength=ent.height))
    return subs, m_q, sub_off, ent, qd_off, rd, rd_off


def _ordered(enc: Encoded, rc: RunColumns, order: str, pos_e: np.ndarray) -> np.ndarray:
    """``pos_e`` reordered within each group as ``order`` says."""
    if order == "traditional":
        return pos_e
    if order == "pyndeval":
        key = np.ascontiguousarray(rc.score[enc.row], dtype=np.float64)
        mode = 1
    else:
        null = null_mask(rc.rank)[enc.row]
        if null.any():
            p = int(np.flatnonzero(null)[0])
            r = int(enc.row[p])
            msg = (
                f"{rc.source.where(r)}: run {rc.run_names[rc.run[r]]!r} has no rank for document "
                f"{rc.doc.value(r)!r}; ndeval's default order is by the rank column\n"
                "  hint: order='traditional' (CLI: --order traditional) orders by score and docno"
            )
            raise InputFormatError(msg)
        rank = numeric_numpy(rc.rank, null=0)
        key = np.ascontiguousarray(rank[enc.row], dtype=np.float64)
        mode = 2
    perm = np.arange(pos_e.shape[0], dtype=np.int64)  # positions outside evaluated groups stay
    bad = np.zeros(enc.starts.shape[0], np.bool_)
    parallel.run(
        kd.order_groups,
        (enc.ends - enc.starts).astype(np.float64),
        enc.starts,
        enc.ends,
        key,
        mode,
        perm,
        bad,
    )
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        k = np.sort(key[enc.starts[g] : enc.ends[g]])
        dup = int(k[np.flatnonzero(k[1:] == k[:-1])[0]])
        msg = (
            f"run {enc.run_names[enc.group_run[g]]!r}, query {enc.qids[enc.group_q[g]]!r}: "
            f"rank {dup} appears more than once (ndeval orders by rank and rejects this)\n"
            "  hint: order='traditional' (CLI: --order traditional) orders by score and docno"
        )
        raise InputFormatError(msg)
    return pos_e[perm]


def check_params(alpha: float, beta: float, max_depth: int | None) -> None:
    """Raise a :class:`ParameterError` for alpha or beta outside [0, 1] or a depth below 1."""
    if not 0.0 <= alpha <= 1.0:
        msg = f"alpha must lie in [0, 1], got {alpha!r}"
        raise ParameterError(msg)
    if not 0.0 <= beta <= 1.0:
        msg = f"beta must lie in [0, 1], got {beta!r}"
        raise ParameterError(msg)
    if max_depth is not None and max_depth <= 0:
        msg = f"max_depth must be positive, got {max_depth}"
        raise ParameterError(msg)


@dataclass
class DiversityResult:
    """``values[g, c]`` for group ``g``, measure ``c``; run means; per-subtopic arrays."""

    values: np.ndarray
    summary: np.ndarray
    per_sub: kd.PerSubtopic


def compute_diversity(
    prep: DiversityPrepared,
    measures: list[DiversityMeasure],
    *,
    alpha: float = 0.5,
    beta: float = 0.5,
    max_depth: int | None = None,
    complete: bool = False,
    per_subtopic_depth: int | None = None,
) -> DiversityResult:
    """Run the kernels: ideal rankings per query, then every (run, query) group in parallel."""
    check_params(alpha, beta, max_depth)
    enc = prep.enc
    k = max([1, *(x.k for x in measures)])
    sub = kd.Subtopics(prep.rd_off, prep.rd_sub, prep.m_q, prep.sub_off, prep.nrel)
    # ndeval's discounts: log(2) / log(rank + 1), 1 at rank 1 (C's log, as Python's math.log)
    disc = [1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, k)]
    par = kd.Params(float(alpha), float(beta), np.array(disc, np.float64))
    # each query's ideal ranking (greedy, as ndeval) and its gains to depth k
    n_q = prep.m_q.shape[0]
    ideal = kd.Ideal(np.zeros((n_q, k)), np.zeros((n_q, k)), np.zeros(n_q))
    sizes = np.diff(prep.qd_off).astype(np.float64)
    order = np.empty(int(prep.qd_off[-1]), np.int64)
    work = sizes * sizes * (prep.m_q + 1) + 1.0
    parallel.run(kd.ideal_queries, work, prep.qd_off, sub, par, order, ideal)
    mcode = np.array([FAMILIES[x.family][0] for x in measures], np.int64)
    mk = np.array([x.k if x.k else 1 for x in measures], np.int64)
    out = np.zeros((enc.starts.shape[0], len(measures)), np.float64)
    # per-subtopic outputs: none unless a depth is given
    sub_off = offsets(prep.m_q[enc.group_q] * (per_subtopic_depth is not None))
    n_s = int(sub_off[-1])
    zeros = (np.zeros(n_s, np.int64), np.zeros(n_s, np.int64), np.zeros(n_s))
    per_sub = kd.PerSubtopic(sub_off, *zeros, int(per_subtopic_depth or 0))
    parallel.run(
        kd.score_groups,
        (enc.ends - enc.starts).astype(np.float64) + 1.0,
        kd.Rankings(
            enc.starts, enc.ends, prep.seq, enc.group_q, -1 if max_depth is None else int(max_depth)
        ),
        sub,
        par,
        ideal,
        kd.Plan(mcode, mk),
        out,
        per_sub,
    )
    if complete:
        out[enc.ends == enc.starts] = 0.0  # ndeval -c: a query the run misses scores 0
    sums = np.zeros((len(enc.run_names), len(measures)))
    np.add.at(sums, enc.group_run, out)
    counts = np.bincount(enc.group_run, minlength=sums.shape[0])[:, None]
    summary = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return DiversityResult(out, summary, per_sub)


def diversity_evaluate(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    measures: str | Sequence[str] | Sequence[DiversityMeasure] | None = None,
    *,
    alpha: float = 0.5,
    beta: float = 0.5,
    order: str = "rank",
    per_query: bool = True,
    relevance_level: int = 1,
    complete: bool = False,
    max_depth: int | None = None,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
) -> pl.DataFrame:
    """Evaluate runs against diversity qrels with ndeval's measures, every run at once.

    Parameters
    ----------
    qrels
        Diversity qrels: a file (``topic subtopic docno judgment``, plain, .gz
        or Parquet), a polars DataFrame or an Arrow table with ``query_id,
        subtopic, doc_id, relevance``.
    runs
        Run files, directories, Parquet archives, frames or tables (as for
        :func:`fasteval.evaluate`).
    measures
        Diversity measure names (see
        :func:`fasteval.measures.diversity.parse_diversity_measures`), or
        measures already parsed; default ``"ndeval"``, ndeval's 21 columns.
    alpha, beta
        Redundancy intolerance (alpha-nDCG, NRBP, ERR-IA) and patience (NRBP);
        ndeval's defaults 0.5 and 0.5.
    order
        ``"rank"`` (ndeval's default: the rank column), ``"traditional"``
        (ndeval ``-traditional``: score, then docno descending) or
        ``"pyndeval"`` (score, then docno ascending). See the module docstring.
    per_query
        Include one row per (run, query) besides the ``all`` rows (``amean``).
    relevance_level
        A judgment ``>= relevance_level`` is relevant to its subtopic.
    complete
        ndeval ``-c``: average over every qrels query; a missing one scores 0.
    max_depth
        ndeval ``-M``: only the first ``max_depth`` documents of each ranking.
    on_duplicate, lenient, run_id_from
        As for :func:`fasteval.evaluate`.

    Returns
    -------
    polars.DataFrame
        Long table ``run_id, query_id, measure, value``; aggregates (arithmetic
        means over the evaluated queries) have ``query_id == "all"``.
    """
    if not (
        isinstance(measures, (list, tuple))
        and measures
        and all(isinstance(m, DiversityMeasure) for m in measures)
    ):
        measures = parse_diversity_measures(measures)  # type: ignore[arg-type]
    ms: list[DiversityMeasure] = list(measures)
    opts = EvalOptions(
        relevance_level=relevance_level,
        complete=complete,
        max_depth=max_depth,
        on_duplicate=on_duplicate,
        lenient=lenient,
        run_id_from=run_id_from,
    )
    # measures with their own rel= / alpha= / beta= (ir_measures' parameters): one pass each
    passes: dict[tuple[int, float, float], list[int]] = {}
    for i, m in enumerate(ms):
        key = (
            relevance_level if m.rel is None else m.rel,
            alpha if m.alpha is None else m.alpha,
            beta if m.beta is None else m.beta,
        )
        passes.setdefault(key, []).append(i)
    with gc_paused():
        done = []
        for (level, a, b), cols in passes.items():
            prep = prepare_diversity(qrels, runs, replace(opts, relevance_level=level), order=order)
            group = [ms[i] for i in cols]
            res = compute_diversity(
                prep, group, alpha=a, beta=b, max_depth=max_depth, complete=complete
            )
            done.append(res)
        # every pass has the same groups (the qrels' queries, whatever the level)
        back = np.argsort(np.concatenate(list(passes.values())))  # the columns as asked
        values = np.hstack([res.values for res in done])[:, back]
        summary = np.hstack([res.summary for res in done])[:, back]
        return long_table(prep.enc, [m.name for m in ms], values, summary, per_query=per_query)


def subtopic_coverage(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    *,
    depth: int = 20,
    order: str = "rank",
    relevance_level: int = 1,
    max_depth: int | None = None,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
) -> pl.DataFrame:
    """Which subtopics each run covers, per (run, query, subtopic).

    Returns
    -------
    polars.DataFrame
        ``run_id, query_id, subtopic, num_rel`` (relevant documents in the
        qrels), ``first_rank`` (rank of the first relevant document, null if
        the run retrieves none), ``hits`` (relevant documents in the first
        ``depth``), ``covered`` (``hits > 0``) and ``ap`` (the subtopic's
        average precision: MAP-IA is their mean).
    """
    if depth < 1:
        msg = f"depth must be at least 1, got {depth}"
        raise ParameterError(msg)
    opts = EvalOptions(
        relevance_level=relevance_level,
        max_depth=max_depth,
        on_duplicate=on_duplicate,
        lenient=lenient,
        run_id_from=run_id_from,
    )
    prep = prepare_diversity(qrels, runs, opts, order=order)
    ms = [DiversityMeasure("MAP_IA", 0)]
    res = compute_diversity(prep, ms, max_depth=max_depth, per_subtopic_depth=depth)
    enc, per = prep.enc, res.per_sub
    g = np.repeat(np.arange(enc.starts.shape[0]), np.diff(per.off))
    q = enc.group_q[g]
    slot = prep.sub_off[q] + np.arange(g.shape[0]) - per.off[g]  # the query's subtopic
    labels = [prep.qrels.subtopic_label(int(v)) for v in prep.sub_value]
    return pl.DataFrame(
        {
            "run_id": pl.Series(enc.run_names, dtype=pl.String)[enc.group_run[g]],
            "query_id": pl.Series(enc.qids, dtype=pl.String)[q],
            "subtopic": pl.Series(labels, dtype=pl.String)[slot],
            "num_rel": prep.nrel[slot],
            "first_rank": pl.Series(per.first).replace(0, None),  # 0: none retrieved
            "hits": per.hits,
            "covered": per.hits > 0,
            "ap": per.ap,
        }
    )
