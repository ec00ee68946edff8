"""Supervised fusion: tables learnt from training qrels and runs, and their per-position values.

ProbFuse, SegFuse, SlideFuse, PosFuse, BayesFuse and MAPFuse give the
document at 0-based position ``j`` of run ``r`` a value read from a table
learnt on training queries (definitions in :mod:`.methods`). Training reads
the *hit list* of each run on each training query: 1 where the document at
that position is judged relevant (grade ``>= rel_level``), else 0, in the
fusion order (score descending, then doc id descending). The training
queries are the queries of the training qrels (as ranx's, which pairs the
i-th query of its qrels with the i-th of each run); a run that did not
retrieve a training query has an empty hit list for it. Tables are keyed by
run id, so the runs fused later are matched by name; a list is taken in the
order of the fused runs (ranx's convention).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fasteval.analysis.fusion.inputs import FusionInput, prepare_fusion
from fasteval.analysis.fusion.methods import FusionMethod, method_spec
from fasteval.errors import ParameterError

SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], np.int64)
BAYES_CUTOFFS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], np.int64)
BAYES_FLOOR = 0.001


def positions(fin: FusionInput) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per ranked position: list ``k``, run, 0-based rank ``j`` and the list length ``n``."""
    lens = np.diff(fin.kstart)
    k = np.repeat(np.arange(lens.shape[0], dtype=np.int64), lens)
    j = np.arange(k.shape[0], dtype=np.int64) - fin.kstart[:-1][k]
    return k, k % fin.n_runs, j, lens[k]


def hit_lists(fin: FusionInput, rel_level: int) -> np.ndarray:
    """Per ranked position: 1.0 if the document is relevant (grade ``>= rel_level``), else 0."""
    if fin.qdoc_jdx is None or fin.qr_rel is None:
        msg = "training a supervised fusion needs qrels"
        raise ParameterError(msg)
    k, _, _, _ = positions(fin)
    q = k // fin.n_runs
    jdx = fin.qdoc_jdx[fin.qdoc_off[q] + fin.pos_doc]
    grade = fin.qr_rel[np.maximum(jdx, 0)]
    hits: np.ndarray = ((jdx >= 0) & (grade >= rel_level)).astype(np.float64)
    return hits


def _train_queries(fin: FusionInput, queries: np.ndarray | None) -> np.ndarray:
    assert fin.in_qrels is not None
    mask = fin.in_qrels.copy()
    if queries is not None:
        mask &= queries
    if not mask.any():
        msg = "no training query: the training qrels and the query subset share none"
        raise ParameterError(msg)
    return mask


def train_tables(
    fin: FusionInput,
    method: str,
    *,
    n_segments: int | None = None,
    rel_level: int = 1,
    queries: np.ndarray | None = None,
) -> dict[str, Any]:
    """Learn ``method``'s table for every run of ``fin`` (prepared with the training qrels).

    Parameters
    ----------
    fin
        Training runs and qrels, from :func:`prepare_fusion`.
    method
        ``probfuse`` (needs ``n_segments``), ``segfuse``, ``slidefuse``,
        ``posfuse``, ``bayesfuse`` or ``mapfuse``.
    rel_level
        Grade ``>= rel_level`` is relevant.
    queries
        Optional boolean mask over ``fin.qids``: train on these queries only
        (cross-validation).

    Returns
    -------
    dict
        ranx's parameter name (``probs``, ``log_odds`` or ``map_scores``) ->
        ``{run id: table}`` (a float for ``map_scores``).
    """
    spec = method_spec(method)
    if spec.trained is None:
        msg = f"{spec.name} learns nothing from qrels"
        raise ParameterError(msg)
    hits = hit_lists(fin, rel_level)
    mask = _train_queries(fin, queries)
    n_train = int(mask.sum())
    k, run, j, n = positions(fin)
    q = k // fin.n_runs
    keep = mask[q]
    tables: dict[str, Any] = {}
    for r, name in enumerate(fin.run_names):
        sel = keep & (run == r)
        h, jj, nn, qq = hits[sel], j[sel], n[sel], q[sel]
        if spec.name == "probfuse":
            if n_segments is None or n_segments < 1:
                msg = f"probfuse needs n_segments >= 1, got {n_segments}"
                raise ParameterError(msg)
            size = -(-nn // n_segments)  # ceil(n / n_segments)
            seg = jj // np.maximum(size, 1)
            key = qq * n_segments + seg
            num = np.bincount(key, weights=h, minlength=fin.n_q * n_segments)
            den = np.bincount(key, minlength=fin.n_q * n_segments)
            frac = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
            table = frac.reshape(fin.n_q, n_segments).sum(axis=0) / n_train
        elif spec.name == "segfuse":
            b = SEGFUSE_BOUNDS
            seg = np.searchsorted(b, jj, side="right") - 1
            inside = jj < b[-1]
            num = np.bincount(seg[inside], weights=h[inside], minlength=b.shape[0] - 1)
            table = num / np.diff(b) / n_train
        elif spec.name in ("slidefuse", "posfuse"):
            length = int(nn.max(initial=0))
            num = np.bincount(jj, weights=h, minlength=length)
            den = np.bincount(jj, minlength=length)
            table = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        elif spec.name == "bayesfuse":
            table = _log_odds(h, jj, qq, fin.n_q, n_train)
        else:  # mapfuse
            tables[name] = _mean_ap(fin, h, jj, qq, mask, rel_level)
            continue
        tables[name] = table
    return {spec.trained: tables}


def _log_odds(h: np.ndarray, j: np.ndarray, q: np.ndarray, n_q: int, n_train: int) -> np.ndarray:
    cut = BAYES_CUTOFFS
    out = np.zeros(int(cut[-1]))
    seg = np.searchsorted(cut, j, side="right") - 1
    inside = j < cut[-1]
    per = np.bincount(
        q[inside] * (cut.shape[0] - 1) + seg[inside],
        weights=h[inside],
        minlength=n_q * (cut.shape[0] - 1),
    ).reshape(n_q, cut.shape[0] - 1)
    for s in range(cut.shape[0] - 1):
        width = int(cut[s + 1] - cut[s])
        p = float(np.sum(per[:, s] / width / n_train))
        if p == 0:
            p += BAYES_FLOOR
        neg = 1 - p
        if neg == 0:
            neg += BAYES_FLOOR
        out[cut[s] : cut[s + 1]] = math.log(p / neg)
    return out


def _mean_ap(
    fin: FusionInput, h: np.ndarray, j: np.ndarray, q: np.ndarray, mask: np.ndarray, rel: int
) -> float:
    """MAP over the training queries (trec_eval's AP; a query the run missed counts 0)."""
    assert fin.qr_off is not None and fin.qr_rel is not None
    n_rel = np.add.reduceat(
        (fin.qr_rel >= rel).astype(np.int64), fin.qr_off[:-1].clip(max=len(fin.qr_rel) - 1)
    )
    n_rel = np.where(np.diff(fin.qr_off) > 0, n_rel, 0)
    order = np.lexsort((j, q))
    h, q = h[order], q[order]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if q.shape[0] else np.zeros(0, int)
    cum = np.cumsum(h)
    base = np.repeat(cum[starts] - h[starts], np.diff(np.r_[starts, q.shape[0]]))
    prec = (cum - base) / (j[order] + 1)
    ap_num = np.bincount(q, weights=prec * h, minlength=fin.n_q)
    ap = np.divide(ap_num, n_rel, out=np.zeros_like(ap_num), where=n_rel > 0)
    return float(ap[mask].mean())


def table_for(tables: Mapping[str, Any] | Sequence[Any], name: str, slot: int) -> Any:
    """The table of the fused run ``name`` at position ``slot`` of the fused runs."""
    if isinstance(tables, Mapping):
        if name not in tables:
            msg = f"no trained table for run {name!r} (tables for {', '.join(list(tables)[:5])})"
            raise ParameterError(msg)
        return tables[name]
    if slot >= len(tables):
        msg = f"{len(tables)} trained tables for more fused runs"
        raise ParameterError(msg)
    return tables[slot]


def position_values(
    fin: FusionInput,
    spec: FusionMethod,
    run_tables: dict[int, Any],
    nscore: np.ndarray,
    params: Mapping[str, Any],
) -> np.ndarray:
    """The value each ranked position of ``fin`` gets under ``spec`` (runs in ``run_tables``).

    Positions of runs without a table get 0 (they are not fused).
    """
    _, run, j, n = positions(fin)
    out = np.zeros(j.shape[0], np.float64)
    for r, tab in run_tables.items():
        sel = np.flatnonzero(run == r)
        jj, nn = j[sel], n[sel]
        if spec.name == "mapfuse":
            out[sel] = float(tab) / (jj + 1)
            continue
        t = np.asarray(tab, np.float64)
        if spec.name == "probfuse":
            n_seg = t.shape[0]
            seg = jj // np.maximum(-(-nn // n_seg), 1)
            out[sel] = t[seg] / (seg + 1)
        elif spec.name == "segfuse":
            b = SEGFUSE_BOUNDS
            seg = np.minimum(np.searchsorted(b, jj, side="right") - 1, t.shape[0] - 1)
            out[sel] = np.where(jj < b[min(t.shape[0], b.shape[0] - 1)], t[seg], 0.0) * (
                nscore[sel] + 1
            )
        elif spec.name == "posfuse":
            out[sel] = np.where(jj < t.shape[0], t[np.minimum(jj, t.shape[0] - 1)], 0.0)
        elif spec.name == "slidefuse":
            w = int(params["w"])
            cs = np.concatenate([[0.0], np.cumsum(t)])
            a = np.maximum(jj - w, 0)
            b = np.minimum(jj + w, nn - 1)
            lo = np.minimum(a, t.shape[0])
            hi = np.minimum(b + 1, t.shape[0])
            out[sel] = (cs[hi] - cs[lo]) / (b - a + 1)
        else:  # bayesfuse: beyond the table, the value of a missing document
            inside = jj < t.shape[0]
            out[sel] = np.where(inside, t[np.minimum(jj, t.shape[0] - 1)], spec.miss)
    return out


def train(
    method: str,
    qrels: Any,
    runs: Any,
    *,
    n_segments: int | None = None,
    rel_level: int = 1,
    lenient: bool = False,
    run_id_from: str = "tag",
) -> dict[str, Any]:
    """Learn a supervised method's tables from training qrels and runs (ranx's ``*_train``).

    Returns
    -------
    dict
        The ``params`` to pass to :func:`fasteval.fuse` (tables keyed by run id).
    """
    fin = prepare_fusion(runs, qrels, lenient=lenient, run_id_from=run_id_from)
    return train_tables(fin, method, n_segments=n_segments, rel_level=rel_level)
