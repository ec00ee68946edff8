"""Qrels variants as masks over the judgments of runs already joined to the qrels.

A robustness study re-scores every run under hundreds of altered qrels. Reading
and joining the runs again for each variant would dominate the cost, so a
variant is a boolean *keep-mask* over the judgments of a prepared
:class:`~fasteval.engine.encode.Encoded` (in ``enc.qr_rel`` order). :func:`apply_mask`
turns it into a new ``Encoded`` in which every dropped judgment is simply
absent from the qrels: ranked positions that pointed at it become ``NONPOOL``,
the per-query judgment arrays are compacted and ``jdx`` is remapped. The
rankings, their order and every other array are shared, untouched.

The constructors below build the masks of SPEC section 7:

- :func:`subsample_mask`: random subsampling at rate ``p`` (per query, keep
  ``max(1, ceil(p |rel|))`` relevant and ``max(10, ceil(p |nonrel|))`` judged
  non-relevant judgments, chosen uniformly at random);
- :func:`pool_depth_mask`: judgments of documents that some run ranks in its
  top ``k``;
- :func:`leave_out_mask`: drop the judgments of documents that only the
  left-out runs contributed to the depth-``K`` pool.

A :class:`Scorer` maps an ``Encoded`` to one score per run and statistic
column; :class:`AdhocScorer` does it for the engine's ad-hoc measures, and
:mod:`fasteval.analysis.study_scorers` for diversity, RIC and DO/HSA. Any
object with ``names`` and ``__call__(enc) -> array[n_runs, len(names)]`` plugs
in. :class:`Masker` applies many masks to one ``Encoded`` with reused buffers
(what a study does per variant).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.columns import QrelsColumns
from fasteval.engine import compute
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.kernels import variants as kv
from fasteval.kernels.families import NONPOOL
from fasteval.measures.parser import parse_measures
from fasteval.options import EvalOptions

# --------------------------------------------------------------------------- masks -> Encoded

_BLOCK = 1 << 16  # ranked positions per parallel work item


def apply_mask(enc: Encoded, keep: np.ndarray) -> Encoded:
    """A copy of ``enc`` whose qrels hold only the judgments where ``keep`` is true.

    Parameters
    ----------
    enc
        Encoded runs and qrels (``fasteval.engine.prepare(...).enc``).
    keep
        Boolean array, one entry per judgment in ``enc.qr_rel`` order.

    Returns
    -------
    Encoded
        Shares the rankings (``starts``, ``ends``, ``row``, groups) with
        ``enc``; ``rel`` is ``NONPOOL`` wherever the judgment was dropped,
        ``qr_off``/``qr_rel``/``qr_rows`` are compacted and ``jdx`` points
        into them. Queries that lose every judgment stay in the groups and
        score as trec_eval scores a query without relevant documents.
    """
    keep = np.asarray(keep)
    n_j = enc.qr_rel.shape[0]
    if keep.dtype != np.bool_ or keep.shape != (n_j,):
        msg = f"keep must be a boolean array of shape ({n_j},), got {keep.dtype} {keep.shape}"
        raise ParameterError(msg)
    new_index = np.cumsum(keep, dtype=np.int64) - 1
    new_index[~keep] = -1
    n_pos = enc.rel.shape[0]
    rel = np.empty(n_pos, np.int32)
    jdx = np.empty(n_pos, np.int64)
    parallel.run(
        kv.regrade,
        np.full(-(-n_pos // _BLOCK), float(_BLOCK)),
        _BLOCK,
        enc.rel,
        enc.jdx,
        new_index,
        np.int32(NONPOOL),
        rel,
        jdx,
    )
    n_q = enc.qr_off.shape[0] - 1
    per_q = np.bincount(judgment_query(enc)[keep], minlength=n_q)
    # a query left without judgments is no longer a qrels query: not evaluated
    return with_judgments(enc, keep, per_q, rel, jdx)


class Masker:
    """:func:`apply_mask` for many masks over one ``Encoded``, without per-variant allocation.

    A variant writes ``enc.rel`` into a reused ``int32`` buffer, ``NONPOOL``
    at the positions of dropped judgments (and remaps ``jdx`` into a reused
    ``int64`` buffer when ``with_jdx``), in one parallel pass over the
    positions. ``enc`` may be full width or the narrow ``enc`` of a
    :class:`~fasteval.engine.compact.Compact` (``int8`` grades, ``int32``
    judgment indices): the variants are full width either way.
    The result equals ``apply_mask(enc, keep)`` but **shares its position
    buffers with the next call**: use it before asking for another variant.

    ``with_jdx=False`` leaves ``jdx`` as ``enc.jdx`` (no longer matching the
    compacted judgments): only for scorers that read ``rel`` and the
    per-query judgment arrays, as the ad-hoc measures do
    (``AdhocScorer.uses_jdx`` is false).
    """

    def __init__(self, enc: Encoded, *, with_jdx: bool = True) -> None:
        self.enc = enc
        self.with_jdx = with_jdx
        self.query = judgment_query(enc)
        self._rel = np.empty(enc.rel.shape[0], np.int32)
        self._jdx = np.empty(enc.jdx.shape[0], np.int64) if with_jdx else enc.jdx

    @property
    def wide(self) -> bool:
        """Whether ``enc`` already has the kernels' dtypes (``int32`` grades, ``int64`` jdx)."""
        return self.enc.rel.dtype == np.int32 and self.enc.jdx.dtype == np.int64

    def full(self) -> Encoded:
        """The variant keeping every judgment: ``enc`` itself when it is full width."""
        if self.wide:
            return self.enc
        return self(np.ones(self.enc.qr_rel.shape[0], bool))

    def __call__(self, keep: np.ndarray) -> Encoded:
        """The variant keeping the judgments where ``keep`` is true (buffers reused)."""
        enc = self.enc
        keep = np.asarray(keep)
        n_j = enc.qr_rel.shape[0]
        if keep.dtype != np.bool_ or keep.shape != (n_j,):
            msg = f"keep must be a boolean array of shape ({n_j},), got {keep.dtype} {keep.shape}"
            raise ParameterError(msg)
        rel = self._rel
        n_pos = rel.shape[0]
        blocks = np.full(-(-n_pos // _BLOCK), float(_BLOCK))
        jdx = self._jdx
        if self.with_jdx:
            new_index = np.cumsum(keep, dtype=np.int64) - 1
            new_index[~keep] = -1
            parallel.run(
                kv.regrade, blocks, _BLOCK, enc.rel, enc.jdx, new_index, np.int32(NONPOOL), rel, jdx
            )
        else:
            kept1 = np.empty(n_j + 1, np.int32)
            kept1[0] = 1
            kept1[1:] = keep
            # one light pass: a thread pool costs more than it saves here
            nonpool = np.int32(NONPOOL)
            kv.remask(0, blocks.shape[0], _BLOCK, enc.rel, enc.jdx, kept1, nonpool, rel)
        n_q = enc.qr_off.shape[0] - 1
        per_q = np.bincount(self.query[keep], minlength=n_q)
        return with_judgments(enc, keep, per_q, rel, jdx)


def with_judgments(
    enc: Encoded, keep: np.ndarray, per_q: np.ndarray, rel: np.ndarray, jdx: np.ndarray
) -> Encoded:
    """``enc`` with only the judgments where ``keep`` is true, and the given ``rel`` and ``jdx``.

    Parameters
    ----------
    enc
        The encoding.
    keep
        Boolean per judgment (``enc.qr_rel`` order).
    per_q
        Kept judgments per query.
    rel, jdx
        The grade (or ``NONPOOL``) and the judgment index at every ranked position.

    Returns
    -------
    Encoded
        Queries left without a judgment leave the qrels (their groups are dropped).
    """
    qr_off = np.concatenate([[0], np.cumsum(per_q)]).astype(np.int64)
    in_qrels = enc.in_qrels & (per_q > 0)
    sel = in_qrels[enc.group_q]
    groups = {}
    if not sel.all():
        groups = {
            "starts": np.ascontiguousarray(enc.starts[sel]),
            "ends": np.ascontiguousarray(enc.ends[sel]),
            "group_run": enc.group_run[sel],
            "group_q": enc.group_q[sel],
        }
    return dataclasses.replace(
        enc,
        in_qrels=in_qrels,
        rel=rel,
        jdx=jdx,
        qr_off=qr_off,
        qr_rel=np.ascontiguousarray(enc.qr_rel[keep]),
        qr_rows=np.ascontiguousarray(enc.qr_rows[keep]),
        **groups,
    )


# --------------------------------------------------------------------------- helpers


def judgment_query(enc: Encoded) -> np.ndarray:
    """Query index of every judgment (``enc.qr_rel`` order)."""
    return np.repeat(np.arange(enc.qr_off.shape[0] - 1), np.diff(enc.qr_off))


def position_ranks(enc: Encoded) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ranked positions of the evaluated groups: ``(position, rank, run)``.

    ``rank`` is 1-based within the ranking, ``run`` the run index.
    """
    lens = (enc.ends - enc.starts).astype(np.int64)
    offset = np.concatenate([[0], np.cumsum(lens)[:-1]])
    within = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(offset, lens)
    pos = np.repeat(enc.starts, lens) + within
    rank = within + 1
    run = np.repeat(enc.group_run, lens).astype(np.int64)
    return pos, rank, run


def min_pool_rank(enc: Encoded, runs: np.ndarray | None = None) -> np.ndarray:
    """Per judgment: the best (smallest) rank at which any of ``runs`` retrieves it.

    ``runs`` is a boolean mask over ``enc.run_names`` (default: every run).
    Judgments no run retrieves get a rank larger than every ranking.
    """
    pos, rank, run = position_ranks(enc)
    j = enc.jdx[pos]
    sel = j >= 0
    if runs is not None:
        sel &= np.asarray(runs, bool)[run]
    big = np.iinfo(np.int64).max
    best = np.full(enc.qr_rel.shape[0], big, np.int64)
    # smallest rank per judgment: order by rank descending, last write wins
    js = j[sel]
    rs = rank[sel]
    order = np.argsort(-rs, kind="stable")
    best[js[order]] = rs[order]
    return best


def pool_pairs(enc: Encoded, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``(run, judgment)`` pairs where the run ranks that judged document in its top ``depth``."""
    pos, rank, run = position_ranks(enc)
    j = enc.jdx[pos]
    sel = (j >= 0) & (rank <= depth)
    return run[sel], j[sel]


# --------------------------------------------------------------------------- constructors


def subsample_mask(
    enc: Encoded,
    rate: float,
    rng: np.random.Generator,
    *,
    relevance_level: int = 1,
    min_rel: int = 1,
    min_nonrel: int = 10,
) -> np.ndarray:
    """Random subsample of the judgments at rate ``rate`` (SPEC 7).

    Per query, the relevant judgments (grade ``>= relevance_level``) are
    shuffled and the first ``max(min_rel, ceil(rate * |rel|))`` kept; the
    judged non-relevant ones (every other grade, negative included) likewise
    with ``max(min_nonrel, ceil(rate * |nonrel|))``; never more than there
    are. The shuffle is an argsort of one uniform key per judgment drawn by
    ``rng.random(n_judgments)`` in ``enc.qr_rel`` order.

    References
    ----------
    Buckley, C., & Voorhees, E. M. (2004). Retrieval evaluation with incomplete
    information. SIGIR '04.
    """
    if not 0.0 < rate <= 1.0:
        msg = f"subsampling rate must be in (0, 1], got {rate!r}"
        raise ParameterError(msg)
    n_j = enc.qr_rel.shape[0]
    key = rng.random(n_j)
    if rate == 1.0:
        return np.ones(n_j, bool)
    q = judgment_query(enc)
    cls = (enc.qr_rel >= relevance_level).astype(np.int64)  # 1 relevant, 0 not
    group = q * 2 + cls
    n_groups = 2 * (enc.qr_off.shape[0] - 1)
    size = np.bincount(group, minlength=n_groups)
    floor_ = np.where(np.arange(n_groups) % 2 == 1, min_rel, min_nonrel)
    wanted = np.ceil(rate * size - 1e-9).astype(np.int64)  # 0.1 * 30 = 3.0000000000000004 gives 3
    quota = np.minimum(size, np.maximum(floor_, wanted))
    members = np.argsort(group, kind="stable")
    off = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
    keep = np.zeros(n_j, bool)
    # per (query, class): the quota judgments with the smallest keys (= shuffle, keep the first)
    kv.keep_smallest(off, members, key, quota.astype(np.int64), keep)
    return keep


def pool_depth_mask(enc: Encoded, depth: int, *, pool_runs: np.ndarray | None = None) -> np.ndarray:
    """Judgments of documents some run ranks in its top ``depth``.

    ``pool_runs`` (boolean mask over ``enc.run_names``, default all) limits
    which runs contribute to the pool.
    """
    if depth < 1:
        msg = f"pool depth must be >= 1, got {depth}"
        raise ParameterError(msg)
    return min_pool_rank(enc, pool_runs) <= depth


def leave_out_mask(enc: Encoded, left_out: np.ndarray, *, depth: int = 100) -> np.ndarray:
    """Drop the judgments of documents that only ``left_out`` runs put in the depth-``depth`` pool.

    ``left_out`` is a boolean mask over ``enc.run_names``. Judgments of
    documents no run pools at that depth (e.g. from manual runs outside the
    archive) are kept.

    References
    ----------
    Zobel, J. (1998). How reliable are the results of large-scale information
    retrieval experiments? SIGIR '98.
    Büttcher, S., Clarke, C. L. A., Yeung, P. C. K., & Soboroff, I. (2007).
    Reliable information retrieval evaluation with incomplete and biased
    judgements. SIGIR '07.
    """
    left = np.asarray(left_out, bool)
    if left.shape != (len(enc.run_names),):
        msg = f"left_out must have one entry per run ({len(enc.run_names)}), got {left.shape}"
        raise ParameterError(msg)
    run, j = pool_pairs(enc, depth)
    return leave_out_from_pairs(run, j, left, enc.qr_rel.shape[0])


def leave_out_from_pairs(
    run: np.ndarray, j: np.ndarray, left_out: np.ndarray, n_judgments: int
) -> np.ndarray:
    """:func:`leave_out_mask` from precomputed :func:`pool_pairs` (for many settings)."""
    total = np.bincount(j, minlength=n_judgments)
    kept = np.bincount(j[~left_out[run]], minlength=n_judgments)
    return np.asarray(~((total > 0) & (kept == 0)))


# --------------------------------------------------------------------------- scorers


@runtime_checkable
class Scorer(Protocol):
    """Scores every run of an :class:`~fasteval.engine.encode.Encoded`.

    ``names`` labels the columns; ``scorer(enc)`` returns a float array of
    shape ``(len(enc.run_names), len(names))`` (higher = better, NaN where
    undefined). Any analysis that scores runs from an ``Encoded`` (diversity,
    RIC, HSA) can be used in the studies through this interface.
    """

    @property
    def names(self) -> Sequence[str]:
        """Column labels, one per measure."""
        ...

    def __call__(self, enc: Encoded) -> np.ndarray: ...


@dataclasses.dataclass
class AdhocScorer:
    """System scores (the ``all`` aggregate) of ad-hoc measures, by ``engine.compute``."""

    uses_jdx = False  # compute() reads rel and the per-query judgments only (see Masker)
    measures: Sequence[str]
    relevance_level: int = 1
    compat: int = 9
    complete: bool = False

    def __post_init__(self) -> None:

        self._mset = parse_measures(list(self.measures))
        self.names = [m.name for m in self._mset]

    def __call__(self, enc: Encoded) -> np.ndarray:

        ev = compute(
            enc,
            self._mset,
            EvalOptions(
                relevance_level=self.relevance_level, compat=self.compat, complete=self.complete
            ),
        )
        return ev.summary

    def per_query(self, enc: Encoded) -> tuple[np.ndarray, list[str]]:
        """Per-query values ``(n_runs, n_queries, n_measures)`` over the queries every run has.

        Returns the array and the query ids.
        """

        ev = compute(
            enc,
            self._mset,
            EvalOptions(
                relevance_level=self.relevance_level, compat=self.compat, complete=self.complete
            ),
        )
        return per_query_matrix(enc, ev.values, ev.has_rows)


def per_query_matrix(
    enc: Encoded, values: np.ndarray, has_rows: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """Arrange per-group values into ``(n_runs, n_queries, n_cols)`` over queries all runs have."""
    n_runs = len(enc.run_names)
    n_q = len(enc.qids)
    present = np.zeros((n_runs, n_q), bool)
    present[enc.group_run[has_rows], enc.group_q[has_rows]] = True
    common = np.flatnonzero(present.all(axis=0))
    out = np.full((n_runs, n_q, values.shape[1]), np.nan)
    out[enc.group_run, enc.group_q] = values
    return out[:, common], [enc.qids[i] for i in common]


def check_scores(scores: np.ndarray, enc: Encoded, names: Sequence[str]) -> np.ndarray:
    """Validate a scorer's output shape."""
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    want = (len(enc.run_names), len(names))
    if arr.shape != want:
        msg = f"scorer returned shape {arr.shape}, expected {want} (runs x names)"
        raise ParameterError(msg)
    return arr


def variant_qrels(qrels: QrelsColumns, enc: Encoded, keep: np.ndarray) -> pl.DataFrame:
    """The qrels of a variant as a table ``query_id, doc_id, relevance`` (to save or inspect)."""
    rows = enc.qr_rows[np.asarray(keep, bool)]
    return pl.DataFrame(
        {
            "query_id": pl.Series(qrels.qid.take(rows)).cast(pl.String),
            "doc_id": pl.Series(qrels.doc.take(rows)).cast(pl.String),
            "relevance": qrels.rel[rows].astype(np.int32),
        }
    )
