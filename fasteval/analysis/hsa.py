r"""Histogram analysis of retrieval models: Distributional Overlap (DO) and Histogram Slope (HSA).

A good model gives relevant documents high values and non-relevant ones low
values, so the two histograms of values overlap little and the log-ratio of
their counts rises steeply with the value (Krstovski, Smith & Kurtz; the
exact definition is SPEC section 4):

* values: the score of each judged document (``values="score"``) or, for
  ranked lists, the normalised rank :math:`v = 1 - (r - 1) / d` (``r`` the
  rank, ``d`` the length of that query's ranking; ``values="rank"``);
* scores are min-max normalised to [0, 1], per query (default) or per run,
  over the documents that enter the histograms; a constant range maps to 1;
* counts :math:`h_r(b), h_{nr}(b)` in :math:`|B|` equal-width bins on
  [0, 1] (1.0 falls in the last bin), bin centre :math:`b = (i + 0.5)/|B|`,
  pooled over the run's queries (or per query, then averaged);
* supported bins :math:`B' = \{b: h_r(b) > 0, h_{nr}(b) > 0\}`;
* :math:`DO = \sum_{b \in B'} \ln \min(h_r(b), h_{nr}(b))` (lower is better);
* HSA = least-squares slope of :math:`O(b) = \ln(h_r(b)/h_{nr}(b))` on
  :math:`b` over :math:`B'` (higher is better; NaN with fewer than 2
  supported bins).

Only judged documents need values, so a score-only model can be evaluated by
scoring the judged relevant documents and a sample of judged non-relevant
ones: :func:`histogram_analysis_scores` takes such (query, doc, score)
triples, :func:`histogram_arrays` the bare arrays.

References
----------
Krstovski, K., Smith, D. A., & Kurtz, M. J. Efficient evaluation of
retrieval models using histogram analysis (distributional overlap and
histogram slope analysis).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.engine import Prepared, QrelsLike, RunsLike, prepare
from fasteval.errors import InputFormatError, ParameterError, SchemaError
from fasteval.io.tables import load_qrels
from fasteval.kernels import histogram as kh

VALUES = ("rank", "score")
NORMALIZE = ("query", "run")
UNJUDGED = ("exclude", "nonrel")


@dataclass
class Histograms:
    """Histograms and their DO / HSA, one row per run (pooled) or per group.

    ``h_r[i]`` and ``h_nr[i]`` are the counts of row ``i`` (``bins`` columns);
    ``do``, ``hsa``, ``supported_bins``, ``n_rel``, ``n_nonrel`` and
    ``reason`` (why a value is NaN; ``None`` when both are defined) are per
    row.
    """

    h_r: np.ndarray
    h_nr: np.ndarray
    do: np.ndarray
    hsa: np.ndarray
    supported_bins: np.ndarray
    n_rel: np.ndarray
    n_nonrel: np.ndarray
    reason: list[str | None]

    @property
    def centres(self) -> np.ndarray:
        """Bin centres ``(i + 0.5) / bins``."""
        k = self.h_r.shape[1]
        return np.asarray((np.arange(k) + 0.5) / k)


@dataclass(frozen=True)
class HSAOptions:
    """How histogram analysis builds its histograms: one value, checked when made.

    Parameters
    ----------
    values
        ``"rank"`` (normalised rank) or ``"score"`` (min-max normalised score).
    bins
        Number of equal-width bins on [0, 1] (a positive integer).
    normalize
        Min-max bounds of scores: per ``"query"`` or per ``"run"``.
    nonrel_sample
        At most this many judged non-relevant documents per query (``None``: all);
        not with ``unjudged="nonrel"``.
    unjudged
        Retrieved documents without a judgment: ``"exclude"`` or ``"nonrel"``.

    Raises
    ------
    ParameterError
        For a value out of its domain, naming it.
    """

    values: str = "rank"
    bins: int = 20
    normalize: str = "query"
    nonrel_sample: int | None = None
    unjudged: str = "exclude"

    def __post_init__(self) -> None:
        if self.values not in VALUES:
            msg = f"values must be 'rank' or 'score', got {self.values!r}"
            raise ParameterError(msg)
        bins = self.bins
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
            msg = f"bins must be a positive integer, got {bins!r}"
            raise ParameterError(msg)
        if self.normalize not in NORMALIZE:
            msg = f"normalize must be 'query' or 'run', got {self.normalize!r}"
            raise ParameterError(msg)
        if self.unjudged not in UNJUDGED:
            msg = f"unjudged must be 'exclude' or 'nonrel', got {self.unjudged!r}"
            raise ParameterError(msg)
        self._check_sample()

    def _check_sample(self) -> None:
        sample = self.nonrel_sample
        if sample is None:
            return
        if isinstance(sample, bool) or not isinstance(sample, (int, np.integer)) or sample < 0:
            msg = f"nonrel_sample must be a non-negative integer or None, got {sample!r}"
            raise ParameterError(msg)
        if self.unjudged == "nonrel":
            msg = (
                "nonrel_sample draws from the judged non-relevant documents and cannot be "
                "combined with unjudged='nonrel'"
            )
            raise ParameterError(msg)


def _reasons(n_rel: np.ndarray, n_nonrel: np.ndarray, sup: np.ndarray) -> list[str | None]:
    out: list[str | None] = []
    for r, n, m in zip(n_rel.tolist(), n_nonrel.tolist(), sup.tolist(), strict=True):
        if r == 0 and n == 0:
            out.append("no judged documents with values")
        elif r == 0:
            out.append("no relevant documents with values")
        elif n == 0:
            out.append("no non-relevant documents with values")
        elif m < 2:
            out.append(f"{m} supported bin(s): HSA needs at least 2")
        else:
            out.append(None)
    return out


def _finish(
    h_r: np.ndarray, h_nr: np.ndarray, n_rel: np.ndarray, n_nonrel: np.ndarray
) -> Histograms:
    n = h_r.shape[0]
    do = np.empty(n, np.float64)
    hsa = np.empty(n, np.float64)
    sup = np.empty(n, np.int64)
    kh.do_hsa(h_r, h_nr, do, hsa, sup)
    empty = (n_rel == 0) | (n_nonrel == 0)
    do[empty] = np.nan
    hsa[empty] = np.nan
    return Histograms(h_r, h_nr, do, hsa, sup, n_rel, n_nonrel, _reasons(n_rel, n_nonrel, sup))


def _histograms(  # noqa: PLR0913 (private helper of histogram_analysis)
    starts: np.ndarray,
    ends: np.ndarray,
    group_run: np.ndarray,
    n_runs: int,
    jdx: np.ndarray,
    judg_label: np.ndarray,
    unjudged_label: int,
    score: np.ndarray,
    row: np.ndarray,
    *,
    rank_mode: bool,
    bins: int,
    normalize: str,
    pooled: bool,
) -> Histograms:
    """Run the kernels over groups and reduce to runs (``pooled``) or keep per group."""
    n_g = int(starts.shape[0])
    work = (ends - starts).astype(np.float64) + 1.0
    h_r = np.zeros((n_g, bins), np.int64)
    h_nr = np.zeros((n_g, bins), np.int64)
    gmin = np.empty(n_g, np.float64)
    gmax = np.empty(n_g, np.float64)
    n_rel = np.zeros(n_g, np.int64)
    n_nonrel = np.zeros(n_g, np.int64)
    bmin = np.full(n_g, np.nan)
    bmax = np.full(n_g, np.nan)
    do_norm = not rank_mode
    args = (
        starts,
        ends,
        kh.Labels(jdx, judg_label, int(unjudged_label)),
        kh.Values(score, row, bool(rank_mode), bool(do_norm)),
    )
    outs = kh.Hists(h_r, h_nr, gmin, gmax, n_rel, n_nonrel)
    if do_norm and normalize == "run":
        parallel.run(kh.group_histograms, work, *args, bmin, bmax, True, outs)
        rmin = np.full(n_runs, np.inf)
        rmax = np.full(n_runs, -np.inf)
        np.minimum.at(rmin, group_run, gmin)
        np.maximum.at(rmax, group_run, gmax)
        bmin = rmin[group_run]
        bmax = rmax[group_run]
    parallel.run(kh.group_histograms, work, *args, bmin, bmax, False, outs)
    if not pooled:
        return _finish(h_r, h_nr, n_rel, n_nonrel)
    hr = np.zeros((n_runs, bins), np.int64)
    hn = np.zeros((n_runs, bins), np.int64)
    np.add.at(hr, group_run, h_r)
    np.add.at(hn, group_run, h_nr)
    nr = np.bincount(group_run, weights=n_rel, minlength=n_runs).astype(np.int64)
    nn = np.bincount(group_run, weights=n_nonrel, minlength=n_runs).astype(np.int64)
    return _finish(hr, hn, nr, nn)


# ---------------------------------------------------------------- sampling


def _sample_keep(
    qid: pl.Series, doc: pl.Series, relevant: np.ndarray, nonrel_sample: int | None, seed: int
) -> np.ndarray:
    """Which judgments enter: every relevant one, at most ``nonrel_sample`` others per query.

    The sample depends only on the judgments (their query and document ids)
    and ``seed``, not on their order: judgments are put in (query, doc) order,
    each gets a uniform key from ``numpy.random.default_rng(seed)``, and the
    non-relevant ones with the smallest keys in their query are kept.
    """
    n = len(qid)
    if nonrel_sample is None:
        return np.ones(n, bool)
    df = pl.DataFrame({"q": qid, "d": doc, "rel": relevant}).with_row_index("i")
    df = df.sort(["q", "d"])
    key = np.random.default_rng(seed).random(n)
    df = df.with_columns(pl.Series("key", key))
    df = df.with_columns(
        pl.col("key").rank("ordinal").over(["q", "rel"]).alias("r"),
    )
    keep = np.zeros(n, bool)
    i = df["i"].to_numpy()
    keep[i] = df["rel"].to_numpy() | (df["r"].to_numpy() <= nonrel_sample)
    return keep


def sample_judgments(
    qrels: QrelsLike,
    nonrel_sample: int | None,
    *,
    seed: int = 0,
    relevance_level: int = 1,
) -> pl.DataFrame:
    """The judgments histogram analysis uses: all relevant, a seeded sample of non-relevant.

    Parameters
    ----------
    qrels
        A qrels file or table (see :func:`fasteval.load_qrels`).
    nonrel_sample
        At most this many judged non-relevant documents (grade below
        ``relevance_level``, negative grades included) per query; ``None``
        keeps all.
    seed
        Seed of the sample. The same seed gives the same sample here and in
        :func:`histogram_analysis`, whatever the row order of the qrels.
    relevance_level
        A grade ``>= relevance_level`` is relevant.

    Returns
    -------
    polars.DataFrame
        The kept rows of the qrels, ``query_id, doc_id, relevance``, in
        their original order.
    """

    HSAOptions("rank", 1, "query", nonrel_sample, "exclude")
    q = load_qrels(qrels)
    keep = _sample_keep(
        q["query_id"],
        q["doc_id"],
        (q["relevance"] >= relevance_level).to_numpy(),
        nonrel_sample,
        seed,
    )
    return q.filter(pl.Series(keep))


# ---------------------------------------------------------------- entry points


def _frame(
    hist: Histograms, run_ids: list[str], query_ids: list[str] | None, n_queries: np.ndarray | None
) -> pl.DataFrame:
    cols: dict[str, Any] = {"run_id": pl.Series(run_ids, dtype=pl.String)}
    if query_ids is not None:
        cols["query_id"] = pl.Series(query_ids, dtype=pl.String)
    cols.update(
        do=hist.do,
        hsa=hist.hsa,
        supported_bins=hist.supported_bins,
        n_rel=hist.n_rel,
        n_nonrel=hist.n_nonrel,
    )
    if n_queries is not None:
        cols["n_queries"] = n_queries
    cols["reason"] = pl.Series(hist.reason, dtype=pl.String)
    return pl.DataFrame(cols)


def _per_query_frame(
    hist: Histograms,
    group_run: np.ndarray,
    group_q: np.ndarray,
    run_names: list[str],
    qids: list[str],
) -> pl.DataFrame:
    """Per-(run, query) rows, then per run an ``all`` row with the means over defined queries."""
    n_runs = len(run_names)
    pq = _frame(hist, [run_names[r] for r in group_run], [qids[q] for q in group_q], None)
    pq = pq.with_columns(pl.Series("_r", group_run, dtype=pl.Int64), pl.lit(0).alias("_b"))
    agg = (
        pq.group_by("_r")
        .agg(
            pl.col("do").filter(pl.col("do").is_not_nan()).mean().alias("do"),
            pl.col("hsa").filter(pl.col("hsa").is_not_nan()).mean().alias("hsa"),
            pl.col("n_rel").sum(),
            pl.col("n_nonrel").sum(),
            pl.col("hsa").is_not_nan().sum().alias("_n_hsa"),
        )
        .sort("_r")
    )
    full = pl.DataFrame({"_r": np.arange(n_runs, dtype=np.int64)}).join(agg, on="_r", how="left")
    allrows = full.select(
        pl.Series("run_id", run_names, dtype=pl.String),
        pl.lit("all").alias("query_id"),
        pl.col("do").fill_null(np.nan),
        pl.col("hsa").fill_null(np.nan),
        pl.lit(None, dtype=pl.Int64).alias("supported_bins"),
        pl.col("n_rel").fill_null(0),
        pl.col("n_nonrel").fill_null(0),
        pl.when(pl.col("_n_hsa").fill_null(0) == 0)
        .then(pl.lit("no query with a defined HSA"))
        .otherwise(pl.lit(None, dtype=pl.String))
        .alias("reason"),
        pl.col("_r"),
        pl.lit(1).alias("_b"),
    )
    out = pl.concat([pq, allrows], how="diagonal_relaxed").sort(["_r", "_b"], maintain_order=True)
    return out.drop("_r", "_b")


def histogram_analysis_prepared(  # noqa: PLR0913 (keyword-only options)
    prep: Prepared,
    *,
    values: str = "rank",
    bins: int = 20,
    normalize: str = "query",
    pooled: bool = True,
    nonrel_sample: int | None = None,
    seed: int = 0,
    unjudged: str = "exclude",
    relevance_level: int = 1,
    return_histograms: bool = False,
) -> pl.DataFrame | tuple[pl.DataFrame, Histograms]:
    """:func:`histogram_analysis` over inputs read by :func:`fasteval.engine.prepare`.

    With ``return_histograms`` also returns the :class:`Histograms` (rows =
    runs when pooled, (run, query) groups otherwise), e.g. for plots.
    """
    HSAOptions(values, bins, normalize, nonrel_sample, unjudged)
    enc = prep.enc
    relevant = enc.qr_rel >= relevance_level
    if nonrel_sample is None:
        keep = np.ones(relevant.shape[0], bool)
    else:
        qrows = enc.qr_rows
        qid = pl.Series(prep.qrels.qid.take(qrows))
        doc = pl.Series(prep.qrels.doc.take(qrows))
        keep = _sample_keep(qid, doc, relevant, nonrel_sample, seed)
    judg_label = np.where(keep, relevant.astype(np.int8), np.int8(-1)).astype(np.int8)
    hist = _histograms(
        enc.starts,
        enc.ends,
        enc.group_run,
        len(enc.run_names),
        enc.jdx,
        judg_label,
        0 if unjudged == "nonrel" else -1,
        prep.runs.score,
        enc.row,
        rank_mode=values == "rank",
        bins=int(bins),
        normalize=normalize,
        pooled=pooled,
    )
    if pooled:
        nq = np.bincount(enc.group_run, minlength=len(enc.run_names)).astype(np.int64)
        df = _frame(hist, list(enc.run_names), None, nq)
    else:
        df = _per_query_frame(hist, enc.group_run, enc.group_q, enc.run_names, enc.qids)
    return (df, hist) if return_histograms else df


def histogram_analysis(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    *,
    values: str = "rank",
    bins: int = 20,
    normalize: str = "query",
    pooled: bool = True,
    nonrel_sample: int | None = None,
    seed: int = 0,
    unjudged: str = "exclude",
    relevance_level: int = 1,
    compat: int = 9,
    on_duplicate: str = "error",
    lenient: bool = False,
    run_id_from: str = "tag",
) -> pl.DataFrame:
    """DO and HSA of every run, from the values of its judged documents (module docstring).

    Parameters
    ----------
    qrels, runs
        As for :func:`fasteval.evaluate` (files, directories, Parquet
        archives, polars / Arrow tables). A table of (run_id, query_id,
        doc_id, score) rows that holds only scored judged documents is a run
        too (with ``values="score"``); see also
        :func:`histogram_analysis_scores`.
    values
        ``"rank"``: the normalised rank ``1 - (rank - 1) / depth`` of each
        retrieved judged document, ``depth`` the length of that query's
        ranking (trec_eval order); ``"score"``: its score, min-max
        normalised.
    bins
        Number of equal-width bins on [0, 1].
    normalize
        Min-max bounds for scores: per ``"query"`` or over the whole
        ``"run"`` (taken over the documents that enter the histograms; a
        constant range maps every value to 1.0). Rank values are not
        normalised.
    pooled
        One histogram per run over all its queries (default); ``False``
        gives one row per (run, query) and per run an ``all`` row with the
        mean DO and HSA over the queries where they are defined.
    nonrel_sample
        Use at most this many judged non-relevant documents per query,
        sampled with ``seed`` (see :func:`sample_judgments`); ``None``: all.
    seed
        Seed of the non-relevant sample.
    unjudged
        Retrieved documents without a judgment: ``"exclude"`` (default) or
        count them as non-relevant (``"nonrel"``).
    relevance_level
        A grade ``>= relevance_level`` is relevant; lower (and negative)
        grades are judged non-relevant.
    compat, on_duplicate, lenient, run_id_from
        As for :func:`fasteval.evaluate` (``compat`` affects the ranking
        order and so the rank values).

    Returns
    -------
    polars.DataFrame
        ``run_id, do, hsa, supported_bins, n_rel, n_nonrel, n_queries,
        reason`` (pooled) or ``run_id, query_id, do, hsa, supported_bins,
        n_rel, n_nonrel, reason``. ``n_rel`` / ``n_nonrel`` count the
        documents that entered the histograms. DO and HSA are NaN when there
        is no relevant or no non-relevant document, HSA also with fewer than
        2 supported bins; ``reason`` says which (null when both are defined).
    """
    HSAOptions(values, bins, normalize, nonrel_sample, unjudged)
    prep = prepare(
        qrels,
        runs,
        compat=compat,
        on_duplicate=on_duplicate,
        lenient=lenient,
        run_id_from=run_id_from,
    )
    out = histogram_analysis_prepared(
        prep,
        values=values,
        bins=bins,
        normalize=normalize,
        pooled=pooled,
        nonrel_sample=nonrel_sample,
        seed=seed,
        unjudged=unjudged,
        relevance_level=relevance_level,
    )
    return cast(pl.DataFrame, out)


def histogram_analysis_scores(
    qrels: QrelsLike,
    scores: pl.DataFrame,
    *,
    bins: int = 20,
    normalize: str = "query",
    pooled: bool = True,
    unjudged: str = "exclude",
    relevance_level: int = 1,
) -> pl.DataFrame:
    """DO and HSA from scored (query, document) pairs, no rankings needed.

    This is the efficient path of the method: score only the judged
    relevant documents and a sample of judged non-relevant ones (choose them
    with :func:`sample_judgments`) and pass the scores here.

    Parameters
    ----------
    qrels
        Qrels file or table.
    scores
        polars DataFrame ``query_id, doc_id, score`` and optionally
        ``run_id`` (one model per run id; default run id ``"run"``).
    bins, normalize, pooled, unjudged, relevance_level
        As for :func:`histogram_analysis` (values are always scores).

    Returns
    -------
    polars.DataFrame
        As :func:`histogram_analysis`.
    """

    HSAOptions("score", bins, normalize, None, unjudged)
    s = _scores_table(scores)  # checked before the qrels are read
    j = _judged_scores(load_qrels(qrels), s)
    run_ids, run_code = np.unique(j["run_id"].to_numpy().astype(str), return_inverse=True)
    key = j.select(pl.struct("run_id", "query_id").rank("dense") - 1).to_series().to_numpy()
    change = np.flatnonzero(np.diff(key)) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    ends = np.concatenate([change, [j.height]]).astype(np.int64)
    rel = j["relevance"].to_numpy()
    judged = ~j["relevance"].is_null().to_numpy()
    n = j.height
    jdx = np.where(judged, np.arange(n), -1).astype(np.int64)
    judg_label = (np.nan_to_num(rel.astype(np.float64), nan=-1e18) >= relevance_level).astype(
        np.int8
    )
    group_run = run_code[starts].astype(np.int64)
    hist = _histograms(
        starts,
        ends,
        group_run,
        len(run_ids),
        jdx,
        judg_label,
        0 if unjudged == "nonrel" else -1,
        j["score"].to_numpy().astype(np.float64),
        np.arange(n, dtype=np.int64),
        rank_mode=False,
        bins=int(bins),
        normalize=normalize,
        pooled=pooled,
    )
    names = [str(r) for r in run_ids]
    if pooled:
        nq = np.bincount(group_run, minlength=len(names)).astype(np.int64)
        return _frame(hist, names, None, nq)
    qids = j["query_id"].gather(starts).to_list()
    return _per_query_frame(hist, group_run, np.arange(len(starts)), names, qids)


def _scores_table(scores: pl.DataFrame) -> pl.DataFrame:
    """``run_id, query_id, doc_id, score`` of a scores table, checked (no nulls, no repeats)."""
    if not isinstance(scores, pl.DataFrame):
        msg = f"scores must be a polars DataFrame, got {type(scores).__name__}"
        raise SchemaError(msg)
    missing = [c for c in ("query_id", "doc_id", "score") if c not in scores.columns]
    if missing:
        msg = f"scores table lacks column(s) {', '.join(missing)} (has {', '.join(scores.columns)})"
        raise SchemaError(msg)
    s = scores.select(
        (pl.col("run_id") if "run_id" in scores.columns else pl.lit("run"))
        .cast(pl.String)
        .alias("run_id"),
        pl.col("query_id").cast(pl.String),
        pl.col("doc_id").cast(pl.String),
        pl.col("score").cast(pl.Float64),
    )
    if s.null_count().sum_horizontal().item() > 0:
        msg = "scores table has null values"
        raise SchemaError(msg)
    dup = s.select(pl.struct("run_id", "query_id", "doc_id").is_duplicated().any()).item()
    if dup:
        msg = "scores table has a (run_id, query_id, doc_id) more than once"
        raise InputFormatError(msg)
    return s


def _judged_scores(q: pl.DataFrame, s: pl.DataFrame) -> pl.DataFrame:
    """The scores of the qrels' queries with their grades (null: unjudged), by run and query."""
    if q.select(pl.struct("query_id", "doc_id").is_duplicated().any()).item():
        msg = "qrels have a (query_id, doc_id) judged more than once"
        raise InputFormatError(msg)
    qset = q["query_id"].unique()
    j = (
        s.filter(pl.col("query_id").is_in(qset.implode()))
        .join(q, on=["query_id", "doc_id"], how="left")
        .sort(["run_id", "query_id"], maintain_order=True)
    )
    if j.height == 0:
        msg = "the scores and the qrels have no query in common"
        raise ParameterError(msg)
    return j


def histogram_arrays(
    score: np.ndarray,
    label: np.ndarray,
    offsets: np.ndarray,
    *,
    bins: int = 20,
    normalize: str = "query",
    pooled: bool = True,
) -> Histograms:
    """DO and HSA of one model from bare arrays (the fastest entry point).

    Parameters
    ----------
    score
        float64 score of each scored judged document, grouped by query.
    label
        1 relevant, 0 non-relevant, -1 leave out; one per score.
    offsets
        Query ``i``'s documents are ``offsets[i]:offsets[i + 1]``.
    bins, normalize, pooled
        As for :func:`histogram_analysis`.

    Returns
    -------
    Histograms
        One row (pooled) or one row per query.
    """
    HSAOptions("score", bins, normalize, None, "exclude")
    score = np.ascontiguousarray(score, dtype=np.float64)
    lab = np.ascontiguousarray(label, dtype=np.int8)
    off = np.ascontiguousarray(offsets, dtype=np.int64)
    if score.shape != lab.shape or off.ndim != 1 or off.shape[0] < 1 or off[-1] != score.shape[0]:
        msg = (
            f"score ({score.shape}) and label ({lab.shape}) must have one entry per document and "
            f"offsets must end at {score.shape[0]}"
        )
        raise ParameterError(msg)
    if np.any(np.diff(off) < 0) or off[0] != 0:
        msg = "offsets must start at 0 and not decrease"
        raise ParameterError(msg)
    n_q = off.shape[0] - 1
    n = score.shape[0]
    return _histograms(
        np.ascontiguousarray(off[:-1]),
        np.ascontiguousarray(off[1:]),
        np.zeros(n_q, np.int64),
        1,
        np.arange(n, dtype=np.int64),
        lab,
        -1,
        score,
        np.arange(n, dtype=np.int64),
        rank_mode=False,
        bins=int(bins),
        normalize=normalize,
        pooled=pooled,
    )
