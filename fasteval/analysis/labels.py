"""Agreement on labels between judgment sets: kappa, weighted kappa, Krippendorff's alpha.

The formulas and their references are in :mod:`fasteval.analysis.agreement`,
which re-exports these names; this module holds the label side (confusion
matrices of grades, and the table of every set's grade per judged pair that
the label and the ranking sides share).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from fasteval.errors import DataMismatchError, InputFormatError, ParameterError

LABEL_SCHEMA = {
    "other": pl.String,
    "query_id": pl.String,
    "n_reference": pl.Int64,
    "n_other": pl.Int64,
    "n_common": pl.Int64,
    "kappa": pl.Float64,
    "weighted_kappa": pl.Float64,
    "alpha": pl.Float64,
    "rel_rel": pl.Int64,
    "rel_nonrel": pl.Int64,
    "nonrel_rel": pl.Int64,
    "nonrel_nonrel": pl.Int64,
}


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` where ``den > 0``, NaN elsewhere (no warning)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def weighted_kappa(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    r"""Cohen's weighted kappa of confusion matrices (reference in rows).

    .. math:: \kappa_w = 1 - \sum w O / \sum w E, \quad E = r c^\top / n

    Parameters
    ----------
    confusion
        ``(..., G, G)`` counts.
    weights
        ``(G, G)`` disagreement weights (0 on the diagonal).

    Returns
    -------
    numpy.ndarray
        ``(...)`` kappas, NaN where :math:`\sum w E = 0`.

    References
    ----------
    Cohen, J. (1968). Weighted kappa. Psychological Bulletin 70(4).
    """
    obs = np.asarray(confusion, np.float64)
    n = obs.sum(axis=(-2, -1))
    r = obs.sum(axis=-1)
    c = obs.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        E = r[..., :, None] * c[..., None, :] / np.where(n > 0, n, 1.0)[..., None, None]
    num = (weights * obs).sum(axis=(-2, -1))
    den = (weights * E).sum(axis=(-2, -1))
    return np.asarray(1.0 - safe_ratio(num, den))


def krippendorff_ordinal(confusion: np.ndarray) -> np.ndarray:
    r"""Krippendorff's alpha, ordinal metric, of two judges from their confusion matrices.

    Parameters
    ----------
    confusion
        ``(..., G, G)`` counts over the grades in increasing order.

    Returns
    -------
    numpy.ndarray
        ``(...)`` alphas, NaN where the expected disagreement is 0 (one grade only).

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    """
    C = np.asarray(confusion, np.float64)
    o = C + np.swapaxes(C, -1, -2)
    nv = o.sum(axis=-1)  # (..., G)
    N = nv.sum(axis=-1)
    cum = np.cumsum(nv, axis=-1)
    # sum_{g=c}^{k} n_g for c <= k: cum[k] - cum[c] + n_c; symmetric in (c, k)
    lo = np.minimum.outer(np.arange(nv.shape[-1]), np.arange(nv.shape[-1]))
    hi = np.maximum.outer(np.arange(nv.shape[-1]), np.arange(nv.shape[-1]))
    between = cum[..., hi] - cum[..., lo] + nv[..., lo]
    delta2 = (between - (nv[..., :, None] + nv[..., None, :]) / 2.0) ** 2
    np.einsum("...ii->...i", delta2)[...] = 0.0
    d_o = (o * delta2).sum(axis=(-2, -1))
    d_e = (nv[..., :, None] * nv[..., None, :] * delta2).sum(axis=(-2, -1))
    return np.asarray(1.0 - safe_ratio((N - 1.0) * d_o, d_e))


def _confusions(
    codes: np.ndarray, ref_g: np.ndarray, oth_g: np.ndarray, n_groups: int, n_grades: int
) -> np.ndarray:
    """``(n_groups, G, G)`` confusion counts of grade indices per group."""
    flat = (codes * n_grades + ref_g) * n_grades + oth_g
    counts = np.bincount(flat, minlength=n_groups * n_grades * n_grades)
    return counts.reshape(n_groups, n_grades, n_grades)


MISSING = np.iinfo(np.int64).min
"""The grade of a (query, document) a judgment set does not judge, in a :class:`GradeTable`."""


@dataclass(frozen=True)
class GradeTable:
    """Every (query, document) judged by some set, and its grade in each set.

    Attributes
    ----------
    keys
        ``query_id, doc_id``, one row per judged pair (first-seen order).
    names
        The sets, in column order of ``grades`` (the reference first).
    grades
        ``(pairs, sets)`` int64 grades, :data:`MISSING` where a set does not judge the pair.
    """

    keys: pl.DataFrame
    names: list[str]
    grades: np.ndarray


def grade_table(sets: Mapping[str, pl.DataFrame]) -> GradeTable:
    """The :class:`GradeTable` of judgment sets (qrels ``query_id, doc_id, relevance``).

    Raises
    ------
    InputFormatError
        When a set judges one (query, document) twice.
    """
    names = list(sets)
    parts = [
        qrels_frame(q, k).with_columns(pl.lit(i, pl.Int64).alias("set"))
        for i, (k, q) in enumerate(sets.items())
    ]
    grouped = (
        pl.concat(parts)
        .group_by("query_id", "doc_id", maintain_order=True)
        .agg(pl.col("set"), pl.col("relevance"))
    )
    lens = grouped["set"].list.len().to_numpy()
    row = np.repeat(np.arange(grouped.height), lens)
    col = grouped["set"].explode().to_numpy()
    counts = np.bincount(row * len(names) + col, minlength=grouped.height * len(names))
    if (counts > 1).any():
        i = int(np.flatnonzero(counts > 1)[0])
        q, d = grouped.row(i // len(names))[:2]
        msg = f"qrels {names[i % len(names)]!r} judge query {q!r} document {d!r} more than once"
        raise InputFormatError(msg)
    grades = np.full((grouped.height, len(names)), MISSING, np.int64)
    grades[row, col] = grouped["relevance"].explode().to_numpy()
    return GradeTable(grouped.select("query_id", "doc_id"), names, grades)


def label_agreement(
    reference: pl.DataFrame,
    others: Mapping[str, pl.DataFrame],
    *,
    relevance_level: int = 1,
) -> pl.DataFrame:
    """Cohen's kappa, quadratic weighted kappa and Krippendorff's ordinal alpha per set and query.

    Parameters
    ----------
    reference
        Qrels ``query_id, doc_id, relevance``.
    others
        Name -> qrels of the same shape.
    relevance_level
        The grade from which a label counts as relevant (binary kappa, confusion counts).

    Returns
    -------
    polars.DataFrame
        :data:`LABEL_SCHEMA`: per other an overall row (``query_id`` null),
        then one row per query judged in either set.
    """
    table = grade_table({"": reference, **others})
    return labels_of_table(table, relevance_level=relevance_level)


def labels_of_table(table: GradeTable, *, relevance_level: int = 1) -> pl.DataFrame:
    """:func:`label_agreement` of the sets of a :class:`GradeTable` (the first is the reference).

    Parameters
    ----------
    table
        The grades of the reference (column 0) and the other sets.
    relevance_level
        The grade from which a label counts as relevant.

    Returns
    -------
    polars.DataFrame
        :data:`LABEL_SCHEMA`.
    """
    qnames, qcodes = np.unique(table.keys["query_id"].to_numpy().astype(str), return_inverse=True)
    parts = [
        _labels_of(table.grades[:, 0], table.grades[:, k], qnames, qcodes, name, relevance_level)
        for k, name in enumerate(table.names)
        if k > 0
    ]
    return pl.concat(parts) if parts else pl.DataFrame(schema=LABEL_SCHEMA)


def qrels_frame(q: pl.DataFrame, name: str) -> pl.DataFrame:
    """Qrels ``query_id, doc_id, relevance`` as strings and int64 grades (``name`` for errors)."""
    need = {"query_id", "doc_id", "relevance"}
    if not need <= set(q.columns):
        msg = f"qrels {name!r} need columns {sorted(need)}, got {q.columns}"
        raise ParameterError(msg)
    return q.select(
        pl.col("query_id").cast(pl.String),
        pl.col("doc_id").cast(pl.String),
        pl.col("relevance").cast(pl.Int64),
    )


def _labels_of(
    a: np.ndarray,
    b: np.ndarray,
    qnames: np.ndarray,
    qcodes: np.ndarray,
    name: str,
    level: int,
) -> pl.DataFrame:
    has_a, has_b = a != MISSING, b != MISSING
    both = has_a & has_b
    if not both.any():
        msg = f"the reference and {name!r} have no judgment (query, document) in common"
        raise DataMismatchError(msg)
    present = np.unique(qcodes[has_a | has_b])  # queries judged in either set
    nq = present.shape[0]
    pos = np.searchsorted(present, qcodes)
    g_ref, g_oth = a[both], b[both]
    g0 = int(min(g_ref.min(), g_oth.min()))
    grades = np.arange(g0, int(max(g_ref.max(), g_oth.max())) + 1)  # every grade in between
    G = grades.shape[0]
    conf = _confusions(pos[both], g_ref - g0, g_oth - g0, nq, G)
    conf = np.concatenate([conf.sum(axis=0, keepdims=True), conf])  # overall first
    w_quad = (grades[:, None] - grades[None, :]).astype(np.float64) ** 2
    rel = grades >= level
    b2 = np.stack(
        [
            np.stack(
                [conf[:, rel][:, :, rel].sum((1, 2)), conf[:, rel][:, :, ~rel].sum((1, 2))], -1
            ),
            np.stack(
                [conf[:, ~rel][:, :, rel].sum((1, 2)), conf[:, ~rel][:, :, ~rel].sum((1, 2))], -1
            ),
        ],
        1,
    )  # (groups, 2, 2): [relevant, non-relevant] x [relevant, non-relevant]

    def judged(has: np.ndarray) -> np.ndarray:
        per = np.bincount(pos[has], minlength=nq)
        return np.concatenate([[per.sum()], per])

    return pl.DataFrame(
        {
            "other": [name] * (nq + 1),
            "query_id": [None, *qnames[present].tolist()],
            "n_reference": judged(has_a),
            "n_other": judged(has_b),
            "n_common": conf.sum(axis=(1, 2)),
            "kappa": weighted_kappa(b2, 1.0 - np.eye(2)),
            "weighted_kappa": weighted_kappa(conf, w_quad),
            "alpha": krippendorff_ordinal(conf),
            "rel_rel": b2[:, 0, 0],
            "rel_nonrel": b2[:, 0, 1],
            "nonrel_rel": b2[:, 1, 0],
            "nonrel_nonrel": b2[:, 1, 1],
        },
        schema=LABEL_SCHEMA,
    )
