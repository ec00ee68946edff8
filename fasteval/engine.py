"""Evaluate runs against qrels: plan the measure columns, run the kernels, aggregate."""

from __future__ import annotations

import gc
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Any

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.columns import QrelsColumns, RunColumns
from fasteval.encode import Encoded, encode
from fasteval.errors import DataMismatchError, ParameterError
from fasteval.io.tables import qrels_columns, run_columns
from fasteval.kernels import ranking as kr
from fasteval.measures.parser import Measure, MeasureSet

QrelsLike = Any  # path, polars DataFrame, Arrow table
RunsLike = Any  # path(s), directory, polars DataFrame, Arrow table, or a list of them

MIN_GEO_MEAN = 1e-5


@dataclass
class Evaluation:
    """Raw result of an evaluation: per-group values and their aggregates.

    ``values[g, m]`` is measure ``m`` for group ``g`` (a (run, query) pair);
    ``summary[r, m]`` the aggregate over run ``r``'s evaluated queries.
    """

    measures: MeasureSet
    enc: Encoded
    values: np.ndarray
    summary: np.ndarray
    has_rows: np.ndarray  # bool per group: the run retrieved something for that query
    # string-valued columns (relstring): column -> one string per group
    text: dict[int, list[str]] | None = None


def _plan(measures: Sequence[Measure]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    fam = np.empty(len(measures), np.int32)
    p0 = np.empty(len(measures), np.int64)
    p1 = np.empty(len(measures), np.int64)
    params: list[float] = []
    for i, m in enumerate(measures):
        fam[i] = m.info.code
        p0[i] = len(params)
        params.extend(m.params)
        p1[i] = len(params)
    return fam, p0, p1, np.asarray(params if params else [0.0], dtype=np.float64)


def query_stats(
    qr_off: np.ndarray, qr_rel: np.ndarray, level: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query: relevant count, judged non-relevant count, cumulative ideal DCG, ideal grades.

    ``num_rel[q]`` counts grades ``>= level``; ``num_nonrel[q]`` grades in
    ``[0, level)``. The ideal ranking orders all positive grades descending
    (trec_eval's gains are the grades, whatever ``level`` is); its DCG is
    accumulated left to right with libm's ``log2``, as trec_eval does, so
    nDCG of a perfect ranking is exactly 1.
    """
    n_q = qr_off.shape[0] - 1
    qidx = np.repeat(np.arange(n_q), np.diff(qr_off))
    num_rel = np.bincount(qidx, weights=qr_rel >= level, minlength=n_q).astype(np.int64)
    judged_nonrel = (qr_rel >= 0) & (qr_rel < level)
    num_nonrel = np.bincount(qidx, weights=judged_nonrel, minlength=n_q).astype(np.int64)
    pos = qr_rel > 0
    pq = qidx[pos]
    gains = qr_rel[pos].astype(np.float64)
    order = np.lexsort((-gains, pq))
    pq = pq[order]
    gains = gains[order]
    ideal_off = np.concatenate([[0], np.cumsum(np.bincount(pq, minlength=n_q))]).astype(np.int64)
    longest = int(np.diff(ideal_off).max()) if n_q else 0
    log2 = np.array([math.log2(i + 2.0) for i in range(longest)], dtype=np.float64)
    idcg = np.empty(gains.shape[0], np.float64)
    for q in np.flatnonzero(np.diff(ideal_off)):
        a, b = ideal_off[q], ideal_off[q + 1]
        np.cumsum(gains[a:b] / log2[: b - a], out=idcg[a:b])
    return num_rel, num_nonrel, ideal_off, idcg, gains


def _trunc_cmp(a: tuple[int, float, int], b: tuple[int, float, int]) -> int:
    # trec_eval's comp_rel_gain returns (int)(gain1 - gain2): gains closer than 1 tie
    return int(a[1] - b[1])


@dataclass
class GainTables:
    """Gain tables for the gain-based families (see ``kernels.ranking.evaluate_groups``)."""

    col_spec: np.ndarray
    lut: np.ndarray
    spec_off: np.ndarray
    ideal: np.ndarray
    top_pos: np.ndarray
    rbp_lut: np.ndarray


def gain_tables(
    measures: Sequence[Measure], qr_off: np.ndarray, qr_rel: np.ndarray, compat: int
) -> GainTables:
    """Per gain specification and query: trec_eval's ``setup_gains``, ideal gains, rbp scaling.

    Specification 0 is the default (gain = grade). A query's gain levels are
    the grades ``0..max`` judged for it plus the levels named in the
    parameters, sorted by gain with trec_eval's truncating comparison
    (stable); the ideal ranking walks them from the top, each level as many
    times as it was judged, and stops at the first non-positive gain.
    Under ``compat=9`` gains are C ``float``, as trec_eval 9 parsed them.
    """
    # key: (exact, level/gain pairs); trec_eval's families sort gain levels with its
    # truncating comparison, fasteval's own (jk_*) by the exact gain
    specs: dict[tuple[bool, tuple[float, ...]], int] = {(False, ()): 0}
    col_spec = np.full(len(measures), -1, np.int64)
    for i, m in enumerate(measures):
        if m.info.kind == "gains":
            key = (m.family.startswith("jk_"), tuple(m.params[1:]))
            col_spec[i] = specs.setdefault(key, len(specs))
    n_q = qr_off.shape[0] - 1
    qidx = np.repeat(np.arange(n_q), np.diff(qr_off))
    judged = qr_rel >= 0
    top_grade = int(qr_rel.max()) if qr_rel.size else 0
    max_param = max((abs(int(x)) for _, sp in specs for x in sp[0::2]), default=0)
    width = max(top_grade, max_param, 0) + 3  # grades -2..width-3
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
        if compat == 9 and not exact:
            pairs = [(lv, float(np.float32(g))) for lv, g in pairs]
        lut[s, 2:] = np.arange(width - 2)
        named = {lv: g for lv, g in reversed(pairs)}  # the first pair for a level wins
        for lv, g in named.items():
            if -2 <= lv < width - 2:
                lut[s, lv + 2] = g
        for q in range(n_q):
            spec_off[s, q] = len(ideal)
            nl = int(n_levels[q])
            levels = [(lv, g, int(counts[q, lv]) if 0 <= lv < nl else 0) for lv, g in pairs]
            seen = {lv for lv, _ in pairs}
            levels += [(lv, float(lv), int(counts[q, lv])) for lv in range(nl) if lv not in seen]
            levels.sort(key=(lambda t: t[1]) if exact else cmp_to_key(_trunc_cmp))
            if levels:
                top_pos[s, q] = levels[-1][1] > 0.0
            for _, g, c in reversed(levels):
                if c == 0:
                    continue
                if g <= 0.0:
                    break
                ideal.extend([g] * c)
            # rbp scales gains to [0, 1] when any lies outside (min/max start at 0)
            gs = [g for _, g, _ in levels]
            lo, hi = min([0.0, *gs]), max([0.0, *gs])
            row = rbp_lut[s * n_q + q]
            for lv, g, _ in levels:
                if -2 <= lv < width - 2:
                    row[lv + 2] = (g - lo) / (hi - lo) if (lo < 0.0 or hi > 1.0) else g
        spec_off[s, n_q] = len(ideal)
    return GainTables(
        col_spec, lut, spec_off, np.asarray(ideal or [0.0], np.float64), top_pos, rbp_lut
    )


def compute(
    enc: Encoded,
    measures: MeasureSet,
    *,
    relevance_level: int = 1,
    compat: int = 9,
    max_depth: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    num_docs: int = 0,
    zscores: Any = None,
) -> Evaluation:
    """Run the kernels for ``measures`` over encoded data and aggregate per run.

    ``zscores`` (a :class:`fasteval.io.zscores.ZScores`) turns per-query values
    into z-scores before aggregation (trec_eval ``-Z``).
    """
    n_groups = enc.starts.shape[0]
    values = np.zeros((n_groups, len(measures)), dtype=np.float64)
    by_level: dict[int, list[int]] = {}
    text: dict[int, list[str]] | None = None
    for i, m in enumerate(measures):
        if m.info.text:  # relstring: strings, not kernel values
            from fasteval.analysis.relstring import relstrings

            text = text or {}
            text[i] = relstrings(
                enc, int(m.params[0]), max_depth=max_depth, judged_only=judged_only
            )
            continue
        by_level.setdefault(relevance_level if m.rel is None else m.rel, []).append(i)
    for level, cols in by_level.items():
        num_rel, num_nonrel, ideal_off, idcg, ideal_g = query_stats(enc.qr_off, enc.qr_rel, level)
        fam, p0, p1, params = _plan([measures[i] for i in cols])
        gt = gain_tables([measures[i] for i in cols], enc.qr_off, enc.qr_rel, compat)
        out = np.zeros((n_groups, len(cols)), dtype=np.float64)
        parallel.run(
            kr.evaluate_groups,
            (enc.ends - enc.starts).astype(np.float64) + 1.0,
            enc.starts,
            enc.ends,
            enc.group_q,
            enc.rel,
            num_rel,
            num_nonrel,
            ideal_off,
            idcg,
            ideal_g,
            level,
            -1 if max_depth is None else int(max_depth),
            judged_only,
            10 if compat == 10 else 9,
            float(num_docs),
            fam,
            p0,
            p1,
            params,
            gt.col_spec,
            gt.lut,
            gt.spec_off,
            gt.ideal,
            gt.top_pos,
            gt.rbp_lut,
            out,
        )
        values[:, cols] = out
    if zscores is not None:
        from fasteval.analysis.zscores import zscore_values

        values = zscore_values(values, enc, measures, zscores)
    summary = _aggregate(enc, measures, values, relevance_level, complete)
    has_rows = enc.ends > enc.starts
    return Evaluation(measures, enc, values, summary, has_rows, text)


def _aggregate(
    enc: Encoded, measures: MeasureSet, values: np.ndarray, level: int, complete: bool
) -> np.ndarray:
    n_runs = len(enc.run_names)
    counts = np.bincount(enc.group_run, minlength=n_runs).astype(np.float64)
    summary = np.zeros((n_runs, len(measures)), dtype=np.float64)
    for j, m in enumerate(measures):
        agg = m.info.aggregate
        col = values[:, j]
        if m.info.text:  # per query only
            summary[:, j] = np.nan
            continue
        if agg == "gm":
            logs = np.log(np.maximum(col, MIN_GEO_MEAN))
            s = np.bincount(enc.group_run, weights=logs, minlength=n_runs)
            summary[:, j] = np.exp(np.divide(s, counts, out=np.zeros(n_runs), where=counts > 0))
            continue
        s = np.bincount(enc.group_run, weights=col, minlength=n_runs)
        if agg == "sum":
            summary[:, j] = s
        elif agg == "count":
            summary[:, j] = counts
        else:
            summary[:, j] = np.divide(s, counts, out=np.zeros(n_runs), where=counts > 0)
        if m.family == "num_rel" and complete and m.rel is None:
            # trec_eval's -c recounts num_rel over the whole qrels as grade > 0
            # (m_num_rel.c), whatever -l says.
            summary[:, j] = float(np.count_nonzero(enc.qr_rel > 0))
    return summary


def _as_list(x: RunsLike) -> list[Any]:
    if isinstance(x, (str, os.PathLike, pl.DataFrame)) or not isinstance(x, Iterable):
        return [x]
    try:
        import pyarrow as pa

        if isinstance(x, pa.Table):
            return [x]
    except ImportError:  # pragma: no cover
        pass
    return list(x)


def load_inputs(
    qrels: QrelsLike,
    runs: RunsLike,
    *,
    lenient: bool = False,
    run_id_from: str = "tag",
) -> tuple[QrelsColumns, RunColumns]:
    """Read qrels and runs from paths, frames or tables into columns."""
    q = qrels_columns(qrels, lenient=lenient)
    r = run_columns(_as_list(runs), lenient=lenient, run_id_from=run_id_from)
    return q, r


@dataclass
class Prepared:
    """Qrels and runs read once and joined: the input of every analysis.

    ``enc`` holds the rankings in trec_eval order, judged against the qrels
    (``enc.rel``, ``enc.jdx``); ``runs`` and ``qrels`` the columns they came
    from (``runs.score[enc.row]`` is the score at each ranked position,
    ``qrels.doc.value(enc.qr_rows[j])`` the document of judgment ``j``).
    """

    qrels: QrelsColumns
    runs: RunColumns
    enc: Encoded


def prepare(
    qrels: QrelsLike,
    runs: RunsLike,
    *,
    compat: int = 9,
    complete: bool = False,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
) -> Prepared:
    """Read and encode qrels and runs once (see :func:`evaluate` for the parameters)."""
    if compat not in (9, 10):
        msg = f"compat must be 9 or 10, got {compat!r}"
        raise ParameterError(msg)
    q, r = load_inputs(qrels, runs, lenient=lenient, run_id_from=run_id_from)
    enc = encode(q, r, compat=compat, complete=complete, on_duplicate=on_duplicate)
    _check_runs_have_queries(enc)
    return Prepared(q, r, enc)


def evaluate(
    qrels: QrelsLike,
    runs: RunsLike,
    measures: str | Sequence[str] | None = None,
    *,
    per_query: bool = True,
    compat: int = 9,
    relevance_level: int = 1,
    complete: bool = False,
    max_depth: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
    zscores: Any = None,
    rel_format: str = "qrels",
    collection: Any = None,
) -> pl.DataFrame:
    """Evaluate runs against qrels, as trec_eval would, for every run at once.

    Parameters
    ----------
    qrels
        A TREC qrels file (plain, .gz or .parquet), or a polars DataFrame /
        Arrow table with columns ``query_id, doc_id, relevance``.
    runs
        TREC run files, directories of them, Parquet archives (``fasteval
        ingest``), polars DataFrames / Arrow tables with ``run_id, query_id,
        doc_id, score``; or a list mixing these.
    measures
        trec_eval names (``map``, ``P_10``, ``P.5,10``, ``ndcg_cut.10``,
        ``official``, ``all_trec``) or ir_measures strings (``AP``, ``P@10``,
        ``nDCG@10``, ``P(rel=2)@5``). Default: trec_eval's ``official`` set.
    per_query
        Include one row per (run, query) besides the ``all`` rows.
    compat
        9 for trec_eval 9.0.8 semantics (scores as float32; recall cutoffs
        ``(long)(p*R + 0.9)``), 10 for trec_eval 10.0 (float64; ``lround``;
        with ``complete``, missing queries get per-query rows).
    relevance_level
        trec_eval ``-l``: a grade ``>= relevance_level`` is relevant.
    complete
        trec_eval ``-c``: average over every qrels query; a query a run
        misses scores 0.
    max_depth
        trec_eval ``-M``: only the first ``max_depth`` documents of each
        ranking count.
    judged_only
        trec_eval ``-J``: drop unjudged documents from rankings before scoring.
    num_docs
        trec_eval ``-N``: documents in the collection (utility's fourth term).
    on_duplicate
        ``"error"`` or ``"first"`` (keep the first occurrence).
    lenient
        Skip malformed lines (reported in a warning) instead of raising.
    run_id_from
        For run files: ``"tag"`` (6th column) or ``"filename"``.
    zscores
        trec_eval ``-Z``: a z-score file (``qid measure mean stddev`` lines),
        a polars frame ``query_id, measure, mean, stddev`` or a
        :class:`fasteval.io.zscores.ZScores`. Per-query values become
        ``(value - mean) / stddev`` (``-1000000`` where the reference is
        missing) and the aggregates are formed from them; see
        :mod:`fasteval.analysis.zscores`.
    rel_format
        trec_eval ``-R``: ``"qrels"`` (default) or ``"qrels_jg"``, qrels with
        judgment groups (``qid jg docno rel``; measures ``map_avgjg``,
        ``P_avgjg``, ``Rprec_mult_avgjg``, default set ``qrels_jg``; see
        :mod:`fasteval.analysis.qrels_jg`).
    collection
        The documents, for the content measures of SPEC 9 (``LMJS@20``,
        ``LMKL@20``, ``LMJS_IA@20``): see
        :func:`fasteval.analysis.content.content_evaluate`. Other measures in
        the list are computed as usual and the tables joined.

    Returns
    -------
    polars.DataFrame
        Long table ``run_id, query_id, measure, value``; aggregates have
        ``query_id == "all"``. Rows follow trec_eval's order: per run, each
        query's measures, then the aggregates. When a string measure
        (``relstring``) is requested, a ``text`` column holds its strings
        (``value`` is null on those rows, ``text`` null on the others); it
        has per-query rows only.

    Raises
    ------
    fasteval.errors.FastevalError
        For malformed input (naming file, line and value), unknown measures,
        and runs that share no query with the qrels.
    """
    if max_depth is not None and max_depth <= 0:
        msg = f"max_depth must be positive, got {max_depth}"
        raise ParameterError(msg)
    if collection is not None:  # content measures (SPEC 9)
        from fasteval.analysis.content import evaluate_mixed

        return evaluate_mixed(
            qrels,
            runs,
            collection,
            measures if measures is not None else "LMJS@20",
            per_query=per_query,
            relevance_level=relevance_level,
            compat=compat,
            on_duplicate=on_duplicate,
        ).table
    if rel_format != "qrels":
        from fasteval.analysis.qrels_jg import evaluate_rel_format

        return evaluate_rel_format(
            rel_format,
            qrels,
            runs,
            measures,
            per_query=per_query,
            compat=compat,
            relevance_level=relevance_level,
            complete=complete,
            max_depth=max_depth,
            judged_only=judged_only,
            on_duplicate=on_duplicate,
            lenient=lenient,
            run_id_from=run_id_from,
            zscores=zscores,
        )
    from fasteval.analysis import diversity

    if diversity.is_diversity_request(measures):  # alpha_nDCG@20, ERR_IA@20, NRBP, ndeval...
        if zscores is not None:
            msg = "z-scores (-Z) are not supported for diversity measures"
            raise ParameterError(msg)
        return diversity.evaluate_hook(
            qrels,
            runs,
            measures,
            per_query=per_query,
            relevance_level=relevance_level,
            complete=complete,
            max_depth=max_depth,
            on_duplicate=on_duplicate,
            lenient=lenient,
            run_id_from=run_id_from,
            judged_only=judged_only,
        )

    from fasteval.analysis import information as _information  # RIC (SPEC 5)

    mset, ric = _information.parse_with_ric(measures, compat=compat)
    if zscores is not None:
        from fasteval.io.zscores import as_zscores

        zscores = as_zscores(zscores)
    with gc_paused():
        prep = prepare(
            qrels,
            runs,
            compat=compat,
            complete=complete,
            on_duplicate=on_duplicate,
            lenient=lenient,
            run_id_from=run_id_from,
        )
        ev = compute(
            prep.enc,
            mset,
            relevance_level=relevance_level,
            compat=compat,
            max_depth=max_depth,
            judged_only=judged_only,
            complete=complete,
            num_docs=num_docs,
            zscores=zscores,
        )
        df = to_frame(ev, per_query=per_query, compat=compat)
    return _information.append_ric(df, prep, relevance_level, per_query) if ric else df


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block.

    The engine allocates few Python objects, but numba's first call in a
    process loads type registries: hundreds of thousands of objects, which
    trigger full collections over everything polars, numba and pyarrow
    hold (about 60 ms each on the benchmark machine). Reference counting
    still frees everything as usual; only cycle detection waits until the
    block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _check_runs_have_queries(enc: Encoded) -> None:
    has = np.zeros(len(enc.run_names), bool)
    has[enc.group_run[enc.ends > enc.starts]] = True
    if not has.all():
        bad = [enc.run_names[i] for i in np.flatnonzero(~has)]
        shown = ", ".join(repr(b) for b in bad[:5]) + (" ..." if len(bad) > 5 else "")
        msg = f"run(s) {shown} share no query with the qrels; nothing to evaluate for them"
        raise DataMismatchError(msg)


def to_frame(ev: Evaluation, *, per_query: bool = True, compat: int = 9) -> pl.DataFrame:
    """Long table ``run_id, query_id, measure, value`` in trec_eval's order."""
    enc = ev.enc
    names = pl.Series("measure", [m.name for m in ev.measures], dtype=pl.String)
    runs = pl.Series("run_id", enc.run_names, dtype=pl.String)
    qids = pl.Series("query_id", [*enc.qids, "all"], dtype=pl.String)
    parts = []
    n_runs = len(enc.run_names)
    # per-query block: groups are run-major, query order within a run
    pq_cols = np.array([m.info.per_query for m in ev.measures], dtype=bool)
    if per_query and pq_cols.any():
        rows = ev.has_rows if compat == 9 else np.ones_like(ev.has_rows)
        g_idx = np.flatnonzero(rows)
        m_idx = np.flatnonzero(pq_cols)
        gg = np.repeat(g_idx, m_idx.shape[0])
        mm = np.tile(m_idx, g_idx.shape[0])
        parts.append(
            pl.DataFrame(
                {
                    "run_idx": enc.group_run[gg].astype(np.int64),
                    "block": np.zeros(gg.shape[0], np.int8),
                    "query_idx": enc.group_q[gg].astype(np.int64),
                    "measure_idx": mm.astype(np.int64),
                    "value": ev.values[gg, mm],
                }
            )
        )
    s_idx = np.array([j for j, m in enumerate(ev.measures) if not m.info.text], np.int64)
    rr = np.repeat(np.arange(n_runs), s_idx.shape[0])
    mm = np.tile(s_idx, n_runs)
    parts.append(
        pl.DataFrame(
            {
                "run_idx": rr.astype(np.int64),
                "block": np.ones(rr.shape[0], np.int8),
                "query_idx": np.full(rr.shape[0], len(enc.qids), np.int64),
                "measure_idx": mm.astype(np.int64),
                "value": ev.summary[rr, mm],
            }
        )
    )
    df = pl.concat(parts).sort(["run_idx", "block"], maintain_order=True)
    out = df.select(
        runs.gather(df["run_idx"]).alias("run_id"),
        qids.gather(df["query_idx"]).alias("query_id"),
        names.gather(df["measure_idx"]).alias("measure"),
        pl.col("value"),
    )
    return _with_text(out, df, ev.enc, ev.text) if ev.text else out


def _with_text(
    out: pl.DataFrame, df: pl.DataFrame, enc: Encoded, text: dict[int, list[str]]
) -> pl.DataFrame:
    """Add the ``text`` column of the string measures (relstring); null ``value`` there."""
    n_q = len(enc.qids)
    g_of = np.full(len(enc.run_names) * n_q, -1, np.int64)  # (run, query) -> group
    g_of[enc.group_run.astype(np.int64) * n_q + enc.group_q] = np.arange(enc.group_run.shape[0])
    m_idx = df["measure_idx"].to_numpy()
    key = df["run_idx"].to_numpy() * n_q + df["query_idx"].to_numpy()
    col = np.full(len(df), None, dtype=object)
    for j, strings in text.items():
        rows = np.flatnonzero(m_idx == j)
        col[rows] = np.asarray(strings, dtype=object)[g_of[key[rows]]]
    is_text = np.isin(m_idx, list(text))
    return out.with_columns(
        pl.when(pl.Series(is_text)).then(None).otherwise(pl.col("value")).alias("value"),
        pl.Series("text", col.tolist(), dtype=pl.String),
    )
