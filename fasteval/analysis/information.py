r"""Information-theoretic evaluation (Golbus & Aslam): RIC, joint RIC, information difference.

The sample space is the ordered pairs :math:`(d_i, d_j)` of judged documents
of a query with different grades, drawn uniformly (negative grades, i.e.
unjudged documents, are ignored). :math:`Q = 1` if :math:`g_i > g_j`. A run is
first truncated after its last retrieved relevant document (grade
``>= relevance_level``); its variable :math:`R` is +1 if it ranks
:math:`d_i` above :math:`d_j` (a retrieved document is above every unretrieved
one), 0 if neither is retrieved, -1 otherwise. All logarithms are base 2.

* RIC :math:`= I(R; Q) = \frac{c + d}{N}\,(1 - H_2(\frac{c}{c + d}))` with
  :math:`c, d, z` the unordered pairs the run orders correctly, wrongly, or
  leaves both unretrieved (:math:`N = c + d + z`); per query, then averaged
  over the queries with :math:`N > 0` like MAP.
* Joint RIC of runs :math:`S_1..S_k`: :math:`I(R_{S_1}, ..., R_{S_k}; Q)`, an
  upper-bound estimate of what metasearch over them can reach.
* Information difference
  :math:`id(S_1, S_2) = I(R_1; Q | R_2) + I(R_2; Q | R_1)
  = 2 I(R_1, R_2; Q) - I(R_1; Q) - I(R_2; Q)`; small values mean the runs
  order the judged documents alike (near-duplicate systems).

Pair and set statistics average over the queries for which at least one of
the runs has a ranking (a run without one retrieves nothing for it) and
:math:`N > 0`.

References
----------
Golbus, P. B., & Aslam, J. A. (2014). On the information difference between
standard retrieval models. SIGIR 2014 workshop on Axiomatic Thinking.
Golbus, P. B., & Aslam, J. A. (2013). A mutual information-based framework for
the analysis of information retrieval systems. SIGIR '13.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.engine import Prepared, QrelsLike, RunsLike, compute, prepare
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.kernels import pairs as kp
from fasteval.measures.parser import RIC, parse_measures
from fasteval.options import EvalOptions

RIC_NAME = RIC
MAX_JOINT = 39  # base-3 sign-vector codes in int64
_PAIR_BATCH = 16_384


def _h2_part(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ``(a + b) * H2(a / (a + b))`` in bits (0 where a or b is 0)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    n = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        ta = np.where(a > 0, a * np.log2(np.where(a > 0, a, 1.0) / np.where(n > 0, n, 1.0)), 0.0)
        tb = np.where(b > 0, b * np.log2(np.where(b > 0, b, 1.0) / np.where(n > 0, n, 1.0)), 0.0)
    return -(ta + tb)


@dataclass
class PairData:
    """Runs and qrels prepared for pair statistics (build with :func:`pair_data`).

    ``lists[enc.starts[g] : enc.starts[g] + lens[g]]`` are group ``g``'s judged
    documents up to its last retrieved relevant one; ``cdz[g]`` its correct,
    wrong and both-unretrieved pair counts; ``n_pairs[q]`` the number of
    differing-grade pairs of query ``q``; ``gmap[run, q]`` the group of a
    (run, query) or -1.
    """

    prep: Prepared
    level: int
    lists: np.ndarray
    lens: np.ndarray
    gclass: np.ndarray
    hist_off: np.ndarray
    hist: np.ndarray
    n_pairs: np.ndarray
    cdz: np.ndarray
    gmap: np.ndarray

    @property
    def run_names(self) -> list[str]:
        """Run names, in the order of ``gmap``'s rows."""
        return self.prep.enc.run_names

    def run_index(self, run_ids: Sequence[str]) -> np.ndarray:
        """Indices of the named runs (a clear error for unknown names)."""
        where = {r: i for i, r in enumerate(self.run_names)}
        bad = [r for r in run_ids if r not in where]
        if bad:
            shown = ", ".join(repr(b) for b in bad[:5])
            msg = f"unknown run id(s) {shown}; known: {', '.join(self.run_names[:5])}, ..."
            raise ParameterError(msg)
        return np.array([where[r] for r in run_ids], dtype=np.int64)

    def ric_values(self) -> np.ndarray:
        """RIC per group (NaN where the query has no differing-grade pair)."""
        c = self.cdz[:, 0].astype(np.float64)
        d = self.cdz[:, 1].astype(np.float64)
        n = self.cdz.sum(axis=1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (c + d - _h2_part(c, d)) / n
        return np.where(n > 0, v, np.nan)

    def ric_per_run(self) -> np.ndarray:
        """Mean RIC per run over its queries with pairs (NaN if none)."""
        enc = self.prep.enc
        v = self.ric_values()
        ok = ~np.isnan(v)
        n_runs = len(enc.run_names)
        s = np.bincount(enc.group_run[ok], weights=v[ok], minlength=n_runs)
        k = np.bincount(enc.group_run[ok], minlength=n_runs)
        with np.errstate(invalid="ignore"):
            return np.where(k > 0, s / np.maximum(k, 1), np.nan)

    def _queries_of(self, runs: np.ndarray) -> np.ndarray:
        """Queries where any of ``runs`` has a ranking and pairs exist."""
        has = (self.gmap[runs] >= 0).any(axis=0)
        return np.flatnonzero(has & (self.n_pairs > 0))

    def joint_ric(self, sets: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Joint RIC per set of runs (mean) and per (set, query) (NaN where skipped).

        Returns ``(mean, per_query)`` with shapes ``(n_sets,)`` and
        ``(n_sets, n_queries)``.
        """
        enc = self.prep.enc
        n_q = len(enc.qids)
        idx = [self.run_index(list(s)) for s in sets]
        for s, ix in zip(sets, idx, strict=True):
            if len(ix) == 0 or len(ix) > MAX_JOINT:
                msg = f"a set needs 1 to {MAX_JOINT} runs, got {len(ix)}: {list(s)[:5]}"
                raise ParameterError(msg)
        per_q = np.full((len(sets), n_q), np.nan)
        k_max = max((len(ix) for ix in idx), default=1)
        items_set: list[np.ndarray] = []
        items_q: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        for si, ix in enumerate(idx):
            qs = self._queries_of(ix)
            g = np.full((qs.shape[0], k_max), -1, np.int64)
            g[:, : len(ix)] = self.gmap[ix][:, qs].T
            items_set.append(np.full(qs.shape[0], si, np.int64))
            items_q.append(qs)
            rows.append(g)
        if not rows:
            return np.zeros(0), per_q
        i_set = np.concatenate(items_set)
        i_q = np.concatenate(items_q).astype(np.int64)
        groups = np.ascontiguousarray(np.concatenate(rows))
        out = np.full(i_q.shape[0], np.nan)
        lens = np.where(groups >= 0, self.lens[np.maximum(groups, 0)], 0).sum(axis=1)
        parallel.run(
            kp.joint_ric,
            lens.astype(np.float64) ** 2 + 1.0,
            i_q,
            groups,
            enc.starts,
            self.lens,
            self.lists,
            self.gclass,
            self.hist_off,
            self.hist,
            self.gclass.shape[0],
            out,
        )
        per_q[i_set, i_q] = out
        return row_means(per_q), per_q

    def pair_counts(
        self, a: np.ndarray, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Joint pair tables for run pairs ``(a[p], b[p])`` over their queries.

        Returns ``(pair, query, tables)``: one row per (pair, query) item,
        ``tables[i, 3 * x + y]`` counting the pairs run a orders ``x`` and run b
        orders ``y`` (0 correct, 1 both unretrieved, 2 wrong).
        """
        enc = self.prep.enc
        ga_all = self.gmap[a]
        gb_all = self.gmap[b]
        ok = ((ga_all >= 0) | (gb_all >= 0)) & (self.n_pairs > 0)[None, :]
        p_i, q_i = np.nonzero(ok)
        ga = ga_all[p_i, q_i]
        gb = gb_all[p_i, q_i]

        def side(g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            has = g >= 0
            gg = np.maximum(g, 0)
            s = np.where(has, enc.starts[gg], 0).astype(np.int64)
            m = np.where(has, self.lens[gg], 0).astype(np.int64)
            cdz = np.where(has[:, None], self.cdz[gg], 0)
            cdz[~has, 2] = self.n_pairs[q_i[~has]]
            return s, m, np.ascontiguousarray(cdz)

        a_side = kp.Side(*side(ga))
        b_side = kp.Side(*side(gb))
        out = np.zeros((p_i.shape[0], 9), np.int64)
        parallel.run(
            kp.pair_tables,
            (a_side.m + b_side.m).astype(np.float64) * 8.0 + 50.0,
            q_i.astype(np.int64),
            a_side,
            b_side,
            kp.Graded(self.lists, self.gclass, self.hist_off, self.hist),
            self.gclass.shape[0],
            int(self.lens.max()) if self.lens.shape[0] else 0,
            out,
        )
        return p_i, q_i, out

    def information_difference(
        self, a: np.ndarray, b: np.ndarray, progress: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """id per run pair (mean over queries) and per (pair, query) (NaN where skipped)."""
        n_q = len(self.prep.enc.qids)
        per_q = np.full((a.shape[0], n_q), np.nan)
        for lo in range(0, a.shape[0], _PAIR_BATCH):
            hi = min(lo + _PAIR_BATCH, a.shape[0])
            p_i, q_i, t = self.pair_counts(a[lo:hi], b[lo:hi])
            per_q[lo + p_i, q_i] = id_from_tables(t)
            if progress is not None:
                progress(hi - lo)
        return row_means(per_q), per_q


def row_means(v: np.ndarray) -> np.ndarray:
    """Mean of each row over its non-NaN entries (NaN for an all-NaN row)."""
    k = (~np.isnan(v)).sum(axis=1)
    s = np.where(np.isnan(v), 0.0, v).sum(axis=1)
    return np.where(k > 0, s / np.maximum(k, 1), np.nan)


def id_from_tables(t: np.ndarray) -> np.ndarray:
    """Information difference from joint pair tables (rows of 9 counts, see pair_counts)."""
    t = np.asarray(t, np.float64)
    n = t.sum(axis=1)
    h12 = (
        _h2_part(t[:, 0], t[:, 8])
        + _h2_part(t[:, 2], t[:, 6])
        + _h2_part(t[:, 1], t[:, 7])
        + _h2_part(t[:, 3], t[:, 5])
        + t[:, 4]
    )
    ca, za, da = t[:, 0:3].sum(1), t[:, 3:6].sum(1), t[:, 6:9].sum(1)
    cb, zb, db = t[:, 0::3].sum(1), t[:, 1::3].sum(1), t[:, 2::3].sum(1)
    h1 = _h2_part(ca, da) + za
    h2 = _h2_part(cb, db) + zb
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((h1 + h2 - 2.0 * h12) / n)


def pair_data(
    qrels: QrelsLike | Prepared, runs: RunsLike = None, *, relevance_level: int = 1, **kw: Any
) -> PairData:
    """Read, encode and count once; the input of every pair statistic.

    Parameters
    ----------
    qrels, runs
        As for :func:`fasteval.evaluate`; or a :class:`fasteval.engine.Prepared`
        as ``qrels`` (``runs`` left out) to reuse an earlier join.
    relevance_level
        A grade ``>= relevance_level`` is relevant (sets the truncation point).
    **kw
        Passed to :func:`fasteval.engine.prepare` (``compat``, ``on_duplicate``, ...).
    """
    prep = _prepared(qrels, runs, kw)
    if not isinstance(relevance_level, (int, np.integer)):
        msg = f"relevance_level must be an integer, got {relevance_level!r}"
        raise ParameterError(msg)
    enc = prep.enc
    gclass, hist_off, hist, n_pairs = _grade_classes(enc)
    lists, lens = _truncated_lists(enc, int(relevance_level))
    cdz = np.zeros((enc.starts.shape[0], 3), np.int64)
    parallel.run(
        kp.group_counts,
        lens.astype(np.float64) + 1.0,
        enc.starts,
        lens,
        lists,
        enc.group_q.astype(np.int64),
        gclass,
        hist_off,
        hist,
        cdz,
    )
    gmap = np.full((len(enc.run_names), len(enc.qids)), -1, np.int64)
    gmap[enc.group_run, enc.group_q] = np.arange(enc.starts.shape[0])
    return PairData(
        prep, int(relevance_level), lists, lens, gclass, hist_off, hist, n_pairs, cdz, gmap
    )


def _prepared(qrels: QrelsLike | Prepared, runs: RunsLike, kw: dict[str, Any]) -> Prepared:
    """``qrels`` if already prepared (then no ``runs``), else qrels and runs read and joined."""
    if isinstance(qrels, Prepared):
        if runs is not None:
            msg = "pass either a Prepared input or qrels and runs, not both"
            raise ParameterError(msg)
        return qrels
    if runs is None:
        msg = "runs are required"
        raise ParameterError(msg)
    return prepare(qrels, runs, **kw)


def _grade_classes(enc: Encoded) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query, the histogram of its judged grades, and each judgment's class in it.

    Returns ``gclass`` (the judgment's index in its query's histogram; -1 for a
    negative grade), ``hist_off`` (query ``q``'s classes are
    ``hist[hist_off[q]:hist_off[q + 1]]``), ``hist`` (judgments per class) and
    ``n_pairs`` (per query, the pairs of judgments of different grades).
    """
    n_q = len(enc.qids)
    qr_rel = enc.qr_rel.astype(np.int64)
    qidx = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(enc.qr_off))
    valid = qr_rel >= 0
    keys = (qidx[valid] << 32) + qr_rel[valid]
    uniq, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
    hist_off = np.searchsorted(uniq >> 32, np.arange(n_q + 1), side="left").astype(np.int64)
    gclass = np.full(qr_rel.shape[0], -1, np.int64)
    gclass[valid] = inv.reshape(-1) - hist_off[qidx[valid]]
    hist = counts.astype(np.int64)
    uq = (uniq >> 32).astype(np.int64)
    tot = np.bincount(uq, weights=hist, minlength=n_q).astype(np.int64)
    sq = np.bincount(uq, weights=hist * hist, minlength=n_q).astype(np.int64)
    n_pairs = ((tot * tot - sq) // 2).astype(np.int64)
    return gclass, hist_off, hist, n_pairs


def _truncated_lists(enc: Encoded, relevance_level: int) -> tuple[np.ndarray, np.ndarray]:
    """Each (run, query) ranking cut at its truncation point (:func:`kp.truncate_groups`)."""
    lists = np.zeros(max(enc.rel.shape[0], 1), np.int64)
    lens = np.zeros(enc.starts.shape[0], np.int64)
    work = (enc.ends - enc.starts).astype(np.float64) + 1.0
    parallel.run(
        kp.truncate_groups,
        work,
        enc.starts,
        enc.ends,
        enc.rel,
        enc.jdx,
        enc.qr_rel,
        relevance_level,
        lists,
        lens,
    )
    return lists, lens


def ric(
    qrels: QrelsLike | Prepared,
    runs: RunsLike = None,
    relevance_level: int = 1,
    per_query: bool = False,
    **kw: Any,
) -> pl.DataFrame:
    r"""Relevance information correlation (RIC) of every run.

    :math:`RIC = I(R; Q) = \frac{c + d}{N}(1 - H_2(\frac{c}{c + d}))` per query
    (see the module docstring), averaged over the run's queries that have a
    pair of judged documents with different grades.

    Parameters
    ----------
    qrels, runs
        As for :func:`fasteval.evaluate` (or a ``Prepared`` as ``qrels``).
    relevance_level
        A grade ``>= relevance_level`` is relevant: the run is truncated after
        its last retrieved relevant document.
    per_query
        Also return one row per (run, query) with pairs; the mean has
        ``query_id == "all"``.
    **kw
        Passed to :func:`fasteval.engine.prepare`.

    Returns
    -------
    polars.DataFrame
        ``run_id, RIC`` (one row per run), or ``run_id, query_id, RIC``.

    References
    ----------
    Golbus, P. B., & Aslam, J. A. (2013). A mutual information-based framework
    for the analysis of information retrieval systems. SIGIR '13.
    """
    data = pair_data(qrels, runs, relevance_level=relevance_level, **kw)
    return ric_frame(data, per_query=per_query)


def ric_frame(data: PairData, *, per_query: bool = False) -> pl.DataFrame:
    """RIC table of :func:`ric` from prepared pair data."""
    enc = data.prep.enc
    mean = data.ric_per_run()
    names = pl.Series("run_id", enc.run_names, dtype=pl.String)
    if not per_query:
        return pl.DataFrame({"run_id": names, RIC_NAME: mean})
    v = data.ric_values()
    ok = np.flatnonzero(~np.isnan(v))
    qids = pl.Series("query_id", [*enc.qids, "all"], dtype=pl.String)
    n_runs = len(enc.run_names)
    run_idx = np.concatenate([enc.group_run[ok], np.arange(n_runs)]).astype(np.int64)
    q_idx = np.concatenate([enc.group_q[ok], np.full(n_runs, len(enc.qids))]).astype(np.int64)
    block = np.concatenate([np.zeros(ok.shape[0], np.int8), np.ones(n_runs, np.int8)])
    df = pl.DataFrame(
        {"r": run_idx, "b": block, "q": q_idx, RIC_NAME: np.concatenate([v[ok], mean])}
    ).sort(["r", "b"], maintain_order=True)
    return df.select(
        names.gather(df["r"]).alias("run_id"), qids.gather(df["q"]).alias("query_id"), RIC_NAME
    )


def joint_ric(
    qrels: QrelsLike | Prepared,
    runs: RunsLike = None,
    run_ids: Sequence[str] = (),
    relevance_level: int = 1,
    per_query: bool = False,
    **kw: Any,
) -> float | pl.DataFrame:
    r"""Joint RIC :math:`I(R_{S_1}, ..., R_{S_k}; Q)` of a set of runs.

    The same pairs as RIC; each run truncated after its own last retrieved
    relevant document. It bounds (estimates) what metasearch over the runs can
    reach. For one run it equals RIC. Averaged over the queries where any of
    the runs has a ranking and pairs exist. For many sets on one archive use
    :meth:`PairData.joint_ric` on :func:`pair_data` (one join for all sets).

    Returns
    -------
    float or polars.DataFrame
        The mean; with ``per_query``, a table ``query_id, joint_RIC``.

    References
    ----------
    Golbus, P. B., & Aslam, J. A. (2013). A mutual information-based framework
    for the analysis of information retrieval systems. SIGIR '13.
    """
    if isinstance(run_ids, str) or len(run_ids) == 0:
        msg = f"run_ids must be a non-empty list of run ids, got {run_ids!r}"
        raise ParameterError(msg)
    data = pair_data(qrels, runs, relevance_level=relevance_level, **kw)
    mean, per_q = data.joint_ric([list(run_ids)])
    if not per_query:
        return float(mean[0])
    ok = np.flatnonzero(~np.isnan(per_q[0]))
    return pl.DataFrame(
        {
            "query_id": [data.prep.enc.qids[i] for i in ok],
            "joint_RIC": per_q[0, ok],
        },
        schema={"query_id": pl.String, "joint_RIC": pl.Float64},
    )


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered pair ``(i, j)``, ``i < j``, of ``n`` runs."""
    a, b = np.triu_indices(n, k=1)
    return a.astype(np.int64), b.astype(np.int64)


def information_difference(
    qrels: QrelsLike | Prepared,
    runs: RunsLike = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    relevance_level: int = 1,
    **kw: Any,
) -> pl.DataFrame:
    r"""Information difference of run pairs, :math:`I(R_1;Q|R_2) + I(R_2;Q|R_1)`.

    Per query from the three-way counts of the two runs' pair variables and
    :math:`Q` (O(n log n) per pair and query, never enumerating document
    pairs), averaged over the queries where either run has a ranking. Small
    values mean the two runs order the judged documents alike.

    Parameters
    ----------
    pairs
        ``(run_a, run_b)`` pairs; ``None`` for all unordered pairs of runs.

    Returns
    -------
    polars.DataFrame
        ``run_a, run_b, id``: one row per pair, in the order given.

    References
    ----------
    Golbus, P. B., & Aslam, J. A. (2014). On the information difference between
    standard retrieval models.
    """
    data = pair_data(qrels, runs, relevance_level=relevance_level, **kw)
    a, b = resolve_pairs(data, pairs)
    mean, _ = data.information_difference(a, b)
    names = pl.Series(data.run_names, dtype=pl.String)
    return pl.DataFrame(
        {"run_a": names.gather(a), "run_b": names.gather(b), "id": mean},
        schema={"run_a": pl.String, "run_b": pl.String, "id": pl.Float64},
    )


def resolve_pairs(
    data: PairData, pairs: Sequence[tuple[str, str]] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Run indices of named pairs (all pairs for ``None``)."""
    if pairs is None:
        return all_pairs(len(data.run_names))
    pairs = list(pairs)
    for p in pairs:
        if isinstance(p, str) or len(p) != 2:
            msg = f"each pair must be (run_a, run_b), got {p!r}"
            raise ParameterError(msg)
    a = data.run_index([p[0] for p in pairs])
    b = data.run_index([p[1] for p in pairs])
    return a, b


def append_ric(
    df: pl.DataFrame, prep: Prepared, relevance_level: int, per_query: bool
) -> pl.DataFrame:
    """Add RIC rows to an :func:`fasteval.evaluate` table (per run: queries, then ``all``)."""
    t = ric_frame(pair_data(prep, relevance_level=relevance_level), per_query=per_query)
    if not per_query:
        t = t.with_columns(pl.lit("all").alias("query_id"))
    t = t.select(
        "run_id", "query_id", pl.lit(RIC_NAME).alias("measure"), pl.col(RIC_NAME).alias("value")
    )
    order = {r: i for i, r in enumerate(prep.enc.run_names)}
    q_order = {q: i for i, q in enumerate([*prep.enc.qids, "all"])}
    both = pl.concat([df, t]).with_columns(
        pl.col("run_id").replace_strict(order, return_dtype=pl.Int64).alias("_r"),
        pl.col("query_id").replace_strict(q_order, return_dtype=pl.Int64).alias("_q"),
    )
    return both.sort(["_r", "_q"], maintain_order=True).drop(["_r", "_q"])


def map_bins(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin of each run: ``n_bins`` equal-width bins over [min, max] of ``values``."""
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    if hi <= lo:
        return np.zeros(values.shape[0], np.int64)
    edges = np.linspace(lo, hi, n_bins + 1)
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, n_bins - 1)


def pairs_within_bins(bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``(i, j)``, ``i < j``, of runs in the same bin."""
    a, b = np.triu_indices(bins.shape[0], k=1)
    same = bins[a] == bins[b]
    return a[same].astype(np.int64), b[same].astype(np.int64)


def binned_pairs(
    data: PairData, bin_by: str, bins: int, *, relevance_level: int = 1
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Pairs of runs in the same equal-width bin of a measure (Golbus & Aslam's binning).

    Returns the pair indices ``a``, ``b`` and the columns ``bin``,
    ``<measure>_a`` and ``<measure>_b`` to report beside them.
    """
    mset = parse_measures([bin_by])
    if len(mset) != 1:
        msg = f"bin_by (CLI: --bin-by) needs one measure, got {bin_by!r} ({len(mset)} measures)"
        raise ParameterError(msg)
    ev = compute(data.prep.enc, mset, EvalOptions(relevance_level=relevance_level))
    score = ev.summary[:, 0]
    bin_of = map_bins(score, bins)
    a, b = pairs_within_bins(bin_of)
    name = mset[0].name
    return a, b, {"bin": bin_of[a], f"{name}_a": score[a], f"{name}_b": score[b]}
