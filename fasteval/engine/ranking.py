"""The ranking evaluator: plan the measure columns, run the one-pass kernel, aggregate."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cmp_to_key, partial
from typing import TYPE_CHECKING, Any

import numpy as np

from fasteval import parallel
from fasteval.columns import offsets
from fasteval.engine.encode import Encoded
from fasteval.engine.inputs import Prepared, QrelsLike, RunsLike, prepare
from fasteval.engine.relstring import relstrings
from fasteval.engine.table import Evaluation, ResultIndex, to_frame
from fasteval.engine.zscores import zscore_values
from fasteval.kernels import ranking as kr
from fasteval.measures.parser import Measure, MeasureSet
from fasteval.options import DEFAULTS, EvalOptions
from fasteval.parallel import gc_paused

if TYPE_CHECKING:
    import polars as pl

MIN_GEO_MEAN = 1e-5


def plan(measures: Sequence[Measure]) -> kr.Plan:
    """The measure columns for the kernel: each one's family code and parameters."""
    fam = np.empty(len(measures), np.int32)
    p0 = np.empty(len(measures), np.int64)
    p1 = np.empty(len(measures), np.int64)
    params: list[float] = []
    for i, m in enumerate(measures):
        fam[i] = m.info.code
        p0[i] = len(params)
        params.extend(m.params)
        p1[i] = len(params)
    return kr.Plan(fam, p0, p1, np.asarray(params if params else [0.0], dtype=np.float64))


def query_stats(qr_off: np.ndarray, qr_rel: np.ndarray, level: int) -> kr.QueryStats:
    """Per query: grades ``>= level``, grades in ``[0, level)``, the ideal ranking's
    grades (all positive ones, descending) and its DCG accumulated left to right with
    libm's ``log2`` as trec_eval does (a perfect ranking's nDCG is exactly 1)."""
    n_q = qr_off.shape[0] - 1
    qidx = np.repeat(np.arange(n_q), np.diff(qr_off))
    num_rel = np.bincount(qidx, weights=qr_rel >= level, minlength=n_q).astype(np.int64)
    judged_nonrel = (qr_rel >= 0) & (qr_rel < level)
    num_nonrel = np.bincount(qidx, weights=judged_nonrel, minlength=n_q).astype(np.int64)
    pos = qr_rel > 0
    pq = qidx[pos]
    gains = qr_rel[pos].astype(np.float64)
    order = np.lexsort((-gains, pq))
    pq, gains = pq[order], gains[order]
    ideal_off = offsets(np.bincount(pq, minlength=n_q))
    longest = int(np.diff(ideal_off).max()) if n_q else 0
    log2 = np.array([math.log2(i + 2.0) for i in range(longest)], dtype=np.float64)
    idcg = np.empty(gains.shape[0], np.float64)
    for q in np.flatnonzero(np.diff(ideal_off)):
        a, b = ideal_off[q], ideal_off[q + 1]
        np.cumsum(gains[a:b] / log2[: b - a], out=idcg[a:b])
    return kr.QueryStats(num_rel, num_nonrel, ideal_off, idcg, gains)


def _trunc_cmp(a: tuple[int, float, int], b: tuple[int, float, int]) -> int:
    # trec_eval's comp_rel_gain returns (int)(gain1 - gain2): gains closer than 1 tie
    return int(a[1] - b[1])


def gain_tables(
    measures: Sequence[Measure], qr_off: np.ndarray, qr_rel: np.ndarray, c_float: bool
) -> kr.Gains:
    """Per gain specification (0: gain = grade) and query: trec_eval's ``setup_gains``
    levels (the judged grades and the named levels, sorted by gain with its truncating
    comparison), the ideal gains and rbp's scaling; C ``float`` gains under ``c_float``."""
    specs, col_spec = _gain_specs(measures)
    n_q = qr_off.shape[0] - 1
    top_grade = int(qr_rel.max()) if qr_rel.size else 0
    max_param = max((abs(int(x)) for _, sp in specs for x in sp[0::2]), default=0)
    width = max(top_grade, max_param, 0) + 3  # grades -2..width-3
    # no table is read unless a column is gain-based (ndcg's default: query_stats)
    reads = [
        c
        for c in range(len(measures))
        if col_spec[c] > 0 or (col_spec[c] == 0 and measures[c].family != "ndcg")
    ]
    if not reads:
        lut0 = np.zeros((1, width), np.float64)
        lut0[0, 2:] = np.arange(width - 2)
        return kr.Gains(
            col_spec,
            lut0,
            np.zeros((1, n_q + 1), np.int64),
            np.zeros(1, np.float64),
            np.zeros((1, n_q), np.bool_),
            np.zeros((n_q, width), np.float64),
        )
    qidx = np.repeat(np.arange(n_q), np.diff(qr_off))
    judged = qr_rel >= 0
    counts = np.zeros((n_q, width), np.int64)
    np.add.at(counts, (qidx[judged], qr_rel[judged]), 1)
    n_levels = np.zeros(n_q, np.int64)  # trec_eval's num_rel_levels: max judged grade + 1
    np.maximum.at(n_levels, qidx[judged], qr_rel[judged].astype(np.int64) + 1)
    n_s = len(specs)
    lut = np.zeros((n_s, width), np.float64)
    rbp_lut = np.zeros((n_s * n_q, width), np.float64)
    top_pos = np.zeros((n_s, n_q), np.bool_)
    spec_off = np.zeros((n_s, n_q + 1), np.int64)
    ideal: list[float] = []
    for (exact, spec), s in specs.items():
        pairs = [(int(spec[j]), float(spec[j + 1])) for j in range(0, len(spec), 2)]
        if c_float and not exact:
            pairs = [(lv, float(np.float32(g))) for lv, g in pairs]
        lut[s, 2:] = np.arange(width - 2)
        named = {lv: g for lv, g in reversed(pairs)}  # the first pair for a level wins
        for lv, g in named.items():
            if -2 <= lv < width - 2:
                lut[s, lv + 2] = g
        for q in range(n_q):
            spec_off[s, q] = len(ideal)
            levels = _query_levels(pairs, counts[q], int(n_levels[q]), exact)
            if levels:
                top_pos[s, q] = levels[-1][1] > 0.0
            ideal += _ideal_gains(levels)
            _rbp_gains(levels, rbp_lut[s * n_q + q], width)
        spec_off[s, n_q] = len(ideal)
    return kr.Gains(
        col_spec, lut, spec_off, np.asarray(ideal or [0.0], np.float64), top_pos, rbp_lut
    )


def _gain_specs(
    measures: Sequence[Measure],
) -> tuple[dict[tuple[bool, tuple[float, ...]], int], np.ndarray]:
    """The distinct gain specifications ``(exact, level/gain pairs)`` (0: the default;
    exact: fasteval's jk_* sort levels by the exact gain) and each column's (-1: none)."""
    specs: dict[tuple[bool, tuple[float, ...]], int] = {(False, ()): 0}
    col_spec = np.full(len(measures), -1, np.int64)
    for i, m in enumerate(measures):
        if m.info.kind == "gains":
            key = (m.family.startswith("jk_"), tuple(m.params[1:]))
            col_spec[i] = specs.setdefault(key, len(specs))
    return specs, col_spec


def _query_levels(
    pairs: list[tuple[int, float]], counts: np.ndarray, nl: int, exact: bool
) -> list[tuple[int, float, int]]:
    """A query's (level, gain, times judged): the named levels, its other grades
    ``0..nl-1``, sorted by gain."""
    levels = [(lv, g, int(counts[lv]) if 0 <= lv < nl else 0) for lv, g in pairs]
    seen = {lv for lv, _ in pairs}
    levels += [(lv, float(lv), int(counts[lv])) for lv in range(nl) if lv not in seen]
    levels.sort(key=(lambda t: t[1]) if exact else cmp_to_key(_trunc_cmp))
    return levels


def _ideal_gains(levels: list[tuple[int, float, int]]) -> list[float]:
    """The levels from the top, each as often as judged, to the first gain <= 0."""
    ideal: list[float] = []
    for _, g, c in reversed(levels):
        if c == 0:
            continue
        if g <= 0.0:
            break
        ideal.extend([g] * c)
    return ideal


def _rbp_gains(levels: list[tuple[int, float, int]], row: np.ndarray, width: int) -> None:
    """rbp's gain per grade into ``row``, scaled to [0, 1] if any lies outside."""
    gs = [g for _, g, _ in levels]
    lo, hi = min([0.0, *gs]), max([0.0, *gs])
    for lv, g, _ in levels:
        if -2 <= lv < width - 2:
            row[lv + 2] = (g - lo) / (hi - lo) if (lo < 0.0 or hi > 1.0) else g


def compute(
    enc: Encoded,
    measures: MeasureSet,
    opts: EvalOptions = DEFAULTS,
    *,
    summarise: bool = True,
) -> Evaluation:
    """Run the kernels for ``measures`` over encoded data and aggregate per run.

    ``opts``: the relevance level, ``compat``, ``max_depth``, ``judged_only``,
    ``complete``, ``num_docs``, ``zscores`` (trec_eval ``-Z``). Without ``summarise``
    the aggregates are left empty (the stream aggregates its batches together).
    """
    n_groups = enc.starts.shape[0]
    values = np.zeros((n_groups, len(measures)), dtype=np.float64)
    by_level, text = _columns_by_level(enc, measures, opts)
    # per-query tables made once by prepared qrels, else per call (a study's variant)
    pq = enc.prepared
    if pq is not None and enc.qp is not None and enc.qr_rel is pq.qr_rel:
        qr_off, qr_rel, group_q, cached = pq.qr_off, pq.qr_rel, enc.qp[enc.group_q], pq.cached
    else:
        qr_off, qr_rel, group_q, cached = enc.qr_off, enc.qr_rel, enc.group_q, _made
    groups = kr.Groups(
        np.ascontiguousarray(enc.starts, dtype=np.int64),
        np.ascontiguousarray(enc.ends, dtype=np.int64),
        np.ascontiguousarray(group_q, dtype=np.int32),
        np.ascontiguousarray(enc.rel, dtype=np.int32),
    )
    c_float = opts.compat == 9
    for level, cols in by_level.items():
        chosen = [measures[i] for i in cols]
        stats = cached(("stats", level), partial(query_stats, qr_off, qr_rel, level))
        gains = cached(
            ("gains", c_float, tuple(chosen)),
            partial(gain_tables, chosen, qr_off, qr_rel, c_float),
        )
        k_opts = kr.Opts(
            int(level),
            -1 if opts.max_depth is None else int(opts.max_depth),
            bool(opts.judged_only),
            opts.compat,
            float(opts.num_docs),
        )
        out = np.zeros((n_groups, len(cols)), dtype=np.float64)
        work = (enc.ends - enc.starts).astype(np.float64) + 1.0
        parallel.run(kr.evaluate_groups, work, groups, stats, plan(chosen), gains, k_opts, out)
        values[:, cols] = out
    if opts.zscores is not None:
        values = zscore_values(values, enc, measures, opts.zscores)
    index = ResultIndex.of(enc)
    summary = (
        aggregate(index, measures, values, enc.qr_rel if opts.complete else None)
        if summarise
        else np.zeros((0, len(measures)))
    )
    return Evaluation(measures, index, values, summary, enc.ends > enc.starts, text)


def _made(key: Any, make: Callable[[], Any]) -> Any:
    """``PreparedQrels.cached`` without a store (each table is made once per call anyway)."""
    return make()


def _columns_by_level(
    enc: Encoded, measures: MeasureSet, opts: EvalOptions
) -> tuple[dict[int, list[int]], dict[int, list[str]] | None]:
    """The kernel columns by relevance level, and the text columns' strings (relstring)."""
    by_level: dict[int, list[int]] = {}
    text: dict[int, list[str]] | None = None
    for i, m in enumerate(measures):
        if m.info.text:  # relstring: strings, not kernel values
            text = text or {}
            text[i] = relstrings(
                enc, int(m.params[0]), max_depth=opts.max_depth, judged_only=opts.judged_only
            )
            continue
        by_level.setdefault(opts.relevance_level if m.rel is None else m.rel, []).append(i)
    return by_level, text


def aggregate(
    enc: ResultIndex, measures: MeasureSet, values: np.ndarray, qr_rel: np.ndarray | None
) -> np.ndarray:
    """Each run's aggregate of each measure (``qr_rel``: the qrels' grades under ``complete``)."""
    n_runs = len(enc.run_names)
    counts = np.bincount(enc.group_run, minlength=n_runs).astype(np.float64)
    summary = np.zeros((n_runs, len(measures)), dtype=np.float64)
    for j, m in enumerate(measures):
        agg = m.info.aggregate
        col = values[:, j]
        if m.info.text:  # per query only
            summary[:, j] = np.nan
        elif agg == "gm":
            logs = np.log(np.maximum(col, MIN_GEO_MEAN))
            s = np.bincount(enc.group_run, weights=logs, minlength=n_runs)
            summary[:, j] = np.exp(np.divide(s, counts, out=np.zeros(n_runs), where=counts > 0))
        elif agg == "defined":  # NaN where undefined: the mean over the others (NaN if none)
            ok = ~np.isnan(col)
            s = np.bincount(enc.group_run, weights=np.where(ok, col, 0.0), minlength=n_runs)
            c = np.bincount(enc.group_run, weights=ok.astype(np.float64), minlength=n_runs)
            summary[:, j] = np.divide(s, c, out=np.full(n_runs, np.nan), where=c > 0)
        elif agg == "count":
            summary[:, j] = counts
        else:
            s = np.bincount(enc.group_run, weights=col, minlength=n_runs)
            mean = np.divide(s, counts, out=np.zeros(n_runs), where=counts > 0)
            summary[:, j] = s if agg == "sum" else mean
        if m.family == "num_rel" and qr_rel is not None and m.rel is None:
            # trec_eval's -c counts num_rel over the whole qrels as grade > 0, whatever -l says
            summary[:, j] = float(np.count_nonzero(qr_rel > 0))
    return summary


def evaluate_ranking(
    qrels: QrelsLike,
    runs: RunsLike,
    measures: MeasureSet,
    opts: EvalOptions = DEFAULTS,
    *,
    per_query: bool = True,
) -> tuple[pl.DataFrame, Prepared]:
    """Read, join and score ranking measures: the long table and the joined inputs
    (``opts.zscores`` already read)."""
    with gc_paused():
        prep = prepare(qrels, runs, opts)
        ev = compute(prep.enc, measures, opts)
        return to_frame(ev, per_query=per_query, compat=opts.compat), prep
