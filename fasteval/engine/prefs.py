r"""Evaluation against preference judgments (trec_eval ``-R prefs`` / ``-R qrels_prefs``).

trec_eval's preference measures (``form_prefs_counts.c``, ``m_prefs_*.c`` of
trec_eval 9 and 10), from our own reading of their definitions:

1. **Preferences.** A judgment group (JG) of one sub-group (JSG) is a set of
   classes, one per ``rel_level``: each document of a higher class is preferred
   to each of a lower one (one preference per pair of *lines*). A group of several
   sub-groups is the transitive closure of its sub-groups' preferences (a cycle is
   an error).
2. **Ranks.** The ranking (score descending, ties by document id ascending, the
   first ``max_depth``) ranks the judged retrieved documents ``0 .. njr-1``; the
   judged unretrieved ones follow in document id order.
3. **Counts per group.** ``A > B`` is *fulfilled* when ``rank(A) < rank(B)``;
   *retrieved* when both are retrieved, *implied* when one is, *not occurring*
   when neither is (possible, never fulfilled).

The measures, per query (``ful`` fulfilled, ``poss`` possible; sums over a
query's groups unless said otherwise):

* ``prefs_num_prefs_poss`` = poss (ret + imp + not occurring),
  ``prefs_num_prefs_ful`` = ful (ret + imp), ``prefs_num_prefs_ful_ret`` =
  ful_ret; summed over queries.
* ``prefs_simp`` = ful / poss; ``_ret``: ful_ret / poss_ret; ``_imp``:
  (ful_ret + ful_imp) / (poss_ret + poss_imp).
* ``prefs_avgjg`` (and ``_ret``, ``_imp``) = the mean over groups of the
  group's ratio (a group without possible preferences adds 0).
* ``prefs_pair`` (and ``_ret``, ``_imp``) = the mean over document pairs with
  any preference of ``c(hi > lo) / (c(hi > lo) + c(lo > hi))``, ``c`` counting
  the groups' preferences and ``hi`` the higher-ranked document; a pair
  neither of whose documents was retrieved adds 0 (``_imp``: is left out).
* ``prefs_avgjg_Rnonrel`` (``_ret``) = ``prefs_avgjg`` with each group's N
  non-relevant (level 0) documents made as many as its R relevant ones: for N <= R,
  ``R_ret (R - N)`` fulfilled and ``R (R - N)`` possible preferences are added; for
  N > R the first R non-relevant in rank order are kept (trec_eval's ``recalculate``).

A value whose denominator is 0 is 0, as in trec_eval. Queries: those a run retrieved
something for (``complete``: every query, a missing one as an empty ranking).

References
----------
Buckley, C. trec_eval, ``form_prefs_counts.c``, ``get_prefs.c`` (NIST, 2008).
Carterette, B., Bennett, P. N., Chickering, D. M., & Dumais, S. T. (2008).
Here or there: preference judgments for relevance. ECIR 2008.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval.engine.inputs import as_list
from fasteval.engine.ranking import aggregate
from fasteval.engine.table import Evaluation, ResultIndex, to_frame
from fasteval.errors import DataMismatchError, InputFormatError
from fasteval.io.prefs import Prefs, as_prefs
from fasteval.io.tables import run_columns, runs_to_table
from fasteval.measures.catalog import parse_prefs_measures
from fasteval.options import DEFAULTS, EvalOptions


@dataclass
class _Group:
    """One judgment group of a query (documents as indices into the query's)."""

    ecs: list[tuple[float, np.ndarray]] | None  # (level, docs of its lines), levels descending
    rel: np.ndarray | None  # preference-array groups: level per doc, -1 where not judged here
    # u preferred to v: int32 document indices (half the memory of the pair lists)
    pu: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    pv: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


@dataclass
class _Query:
    """A query's preferences, independent of any run."""

    docs: list[str]
    index: dict[str, int]
    groups: list[_Group]
    # every (unordered) document pair with a preference: a < b, counts of a > b and b > a
    pair_a: np.ndarray
    pair_b: np.ndarray
    c_ab: np.ndarray
    c_ba: np.ndarray


def _closure(adj: np.ndarray) -> np.ndarray:
    """Transitive closure of a boolean relation (Warshall), without the diagonal."""
    m = adj.copy()
    for k in range(m.shape[0]):
        m |= m[:, k : k + 1] & m[k : k + 1, :]
    np.fill_diagonal(m, False)
    return m


def _prepare_query(prefs: Prefs, qid: str, lines: list[int]) -> _Query:
    docs = sorted({prefs.doc[i] for i in lines}, key=str.encode)
    index = {d: j for j, d in enumerate(docs)}
    n = len(docs)
    by_group: dict[str, list[int]] = {}
    for i in lines:
        by_group.setdefault(prefs.jg[i], []).append(i)
    groups: list[_Group] = []
    for jg in sorted(by_group, key=str.encode):
        rows = by_group[jg]
        where = f"{prefs.name}: query {qid!r}, judgment group {jg!r}"
        if len({prefs.jsg[i] for i in rows}) == 1:
            groups.append(_levels_group(prefs, rows, docs, index, where))
        else:
            groups.append(_relation_group(prefs, rows, docs, index, where))
    all_u = np.concatenate([g.pu for g in groups]).astype(np.int64)
    all_v = np.concatenate([g.pv for g in groups]).astype(np.int64)
    a = np.minimum(all_u, all_v)
    key, inv = np.unique(a * n + np.maximum(all_u, all_v), return_inverse=True)
    fwd = np.bincount(inv, weights=(all_u == a), minlength=key.shape[0]).astype(np.float32)
    back = np.bincount(inv, weights=(all_u != a), minlength=key.shape[0]).astype(np.float32)
    width = max(n, 1)
    return _Query(
        docs,
        index,
        groups,
        (key // width).astype(np.int32),
        (key % width).astype(np.int32),
        fwd,
        back,
    )


def _levels_group(
    prefs: Prefs, rows: list[int], docs: list[str], index: dict[str, int], where: str
) -> _Group:
    """A group of one sub-group: classes by rel_level (``where``: for messages)."""
    levels = sorted({float(prefs.rel[i]) for i in rows}, reverse=True)
    ecs = [
        (lv, np.array([index[prefs.doc[i]] for i in rows if prefs.rel[i] == lv], np.int32))
        for lv in levels
    ]
    seen: dict[int, float] = {}
    for lv, d in ecs:
        for x in d.tolist():
            if x in seen and seen[x] != lv:
                msg = (
                    f"{where}: document "
                    f"{docs[x]!r} has two rel_levels ({seen[x]:g}, {lv:g}) in one sub-group"
                )
                raise InputFormatError(msg)
            seen[x] = lv
    g = _Group(ecs, None)
    pairs = [(hi, lo) for a, (_, hi) in enumerate(ecs) for _, lo in ecs[a + 1 :]]
    if pairs:
        g.pu = np.concatenate([np.repeat(hi, lo.shape[0]) for hi, lo in pairs])
        g.pv = np.concatenate([np.tile(lo, hi.shape[0]) for hi, lo in pairs])
    return g


def _relation_group(
    prefs: Prefs, rows: list[int], docs: list[str], index: dict[str, int], where: str
) -> _Group:
    """A group of several sub-groups: their preferences' closure, checked for cycles."""
    n = len(docs)
    rel = np.full(n, -1.0)
    # the relation over this group's documents only (the closure is cubic in their number)
    mine = np.unique(np.array([index[prefs.doc[i]] for i in rows], np.int32))
    local = np.full(n, -1, np.int64)
    local[mine] = np.arange(mine.shape[0])
    adj = np.zeros((mine.shape[0], mine.shape[0]), bool)
    by_sub: dict[str, list[int]] = {}
    for i in rows:
        by_sub.setdefault(prefs.jsg[i], []).append(i)
    for sub in sorted(by_sub, key=str.encode):
        d = np.array([index[prefs.doc[i]] for i in by_sub[sub]], np.int64)
        levels_of = prefs.rel[np.asarray(by_sub[sub], np.int64)]
        for x, v in zip(d.tolist(), levels_of.tolist(), strict=True):
            if (rel[x] > 0.0 and v == 0.0) or (rel[x] == 0.0 and v > 0.0):
                msg = (
                    f"{where}: document "
                    f"{docs[x]!r} is both non-relevant (0) and relevant ({max(v, rel[x]):g})"
                )
                raise InputFormatError(msg)
            rel[x] = v
        adj[np.ix_(local[d], local[d])] |= levels_of[:, None] > levels_of[None, :]
    closed = _closure(adj)
    if (closed & closed.T).any():
        a, b = mine[np.argwhere(closed & closed.T)[0]]
        msg = (
            f"{where}: inconsistent preferences "
            f"between {docs[a]!r} and {docs[b]!r} (each preferred to the other)"
        )
        raise InputFormatError(msg)
    u, v = np.nonzero(closed)
    return _Group(None, rel, mine[u], mine[v])


@dataclass
class _Counts:
    ful_ret: int
    ful_imp: int
    poss_ret: int  # fulfilled included
    poss_imp: int  # fulfilled included
    notoccur: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int


def _counts(g: _Group, r: np.ndarray, njr: int) -> _Counts:
    ru, rv = r[g.pu], r[g.pv]
    up = ru < rv
    ful_ret = int(np.count_nonzero(up & (rv < njr)))
    ful_imp = int(np.count_nonzero(up & (rv >= njr) & (ru < njr)))
    down = ~up
    unf_ret = int(np.count_nonzero(down & (ru < njr)))
    unf_imp = int(np.count_nonzero(down & (ru >= njr) & (rv < njr)))
    notoccur = int(np.count_nonzero((ru >= njr) & (rv >= njr)))
    if g.ecs is not None:
        nr = nrr = nn = nnr = 0
        for lv, d in g.ecs:
            n_ret = int(np.count_nonzero(r[d] < njr))
            if lv > 0.0:
                nr, nrr = nr + d.shape[0], nrr + n_ret
            else:
                nn, nnr = nn + d.shape[0], nnr + n_ret
    else:
        assert g.rel is not None
        is_ret = r < njr
        rel, nonrel = g.rel > 0.0, g.rel == 0.0
        nr, nrr = int(np.count_nonzero(rel)), int(np.count_nonzero(rel & is_ret))
        nn, nnr = int(np.count_nonzero(nonrel)), int(np.count_nonzero(nonrel & is_ret))
    return _Counts(
        ful_ret, ful_imp, unf_ret + ful_ret, unf_imp + ful_imp, notoccur, nr, nrr, nn, nnr
    )


def _recalculate(g: _Group, r: np.ndarray, njr: int, c: _Counts, *, ret: bool) -> tuple[int, int]:
    """trec_eval's recount of a group keeping only the first R non-relevant documents."""
    ful = poss = 0
    if g.ecs is not None:
        ranks = [np.sort(r[d]) for _, d in g.ecs]
        last = ranks[-1][: c.num_rel_ret if ret else c.num_rel]
        if ret:
            ranks, last = [x[x < njr] for x in ranks], last[last < njr]

        def add(x: np.ndarray, y: np.ndarray) -> tuple[int, int]:
            above = x[:, None] < y[None, :]
            if not ret:
                above &= (x < njr)[:, None]
            f = int(np.count_nonzero(above))
            return f, x.shape[0] * y.shape[0] - f

        k = len(ranks)
        for e1 in range(k):
            for e2 in range(e1 + 1, k - 1):
                f, p = add(ranks[e1], ranks[e2])
                ful, poss = ful + f, poss + p
        for e1 in range(k):
            f, p = add(ranks[e1], last)
            ful, poss = ful + f, poss + p
        return ful, poss + ful
    assert g.rel is not None
    n = r.shape[0]
    rel_at = np.full(n, -1.0)
    rel_at[r] = g.rel  # level of the document at each rank
    zero = np.flatnonzero(rel_at[: njr if ret else n] == 0.0)
    first_discarded = int(zero[c.num_rel]) if zero.shape[0] > c.num_rel else (njr if ret else n)
    keep = ~((np.arange(n) >= first_discarded) & (rel_at == 0.0))
    ru, rv = r[g.pu], r[g.pv]
    kept = keep[ru] & keep[rv]
    if ret:
        kept &= (ru < njr) & (rv < njr)
    ful = int(np.count_nonzero(kept & (ru < njr) & (ru < rv)))
    return ful, int(np.count_nonzero(kept))


def _rnonrel(g: _Group, r: np.ndarray, njr: int, c: _Counts, *, ret: bool) -> float:
    big_r, big_n = (c.num_rel_ret, c.num_nonrel_ret) if ret else (c.num_rel, c.num_nonrel)
    if big_r >= big_n:
        ful = c.ful_ret + (0 if ret else c.ful_imp) + c.num_rel_ret * (big_r - big_n)
        poss = c.poss_ret + (0 if ret else c.poss_imp + c.notoccur) + c.num_rel * (big_r - big_n)
    else:
        ful, poss = _recalculate(g, r, njr, c, ret=ret)
    with np.errstate(divide="ignore", invalid="ignore"):  # as C: 0/0 is NaN, x/0 infinite
        return float(np.float64(ful) / np.float64(poss))


def _pairs(q: _Query, r: np.ndarray, njr: int) -> dict[str, float]:
    ra, rb = r[q.pair_a], r[q.pair_b]
    a_first = ra < rb
    hi = np.where(a_first, ra, rb)
    lo = np.where(a_first, rb, ra)
    c_ab, c_ba = q.c_ab.astype(np.float64), q.c_ba.astype(np.float64)  # stored as float32
    share = np.where(a_first, c_ab, c_ba) / (c_ab + c_ba)
    both = lo < njr
    one = (hi < njr) & (lo >= njr)
    n_all, n_both, n_one = q.pair_a.shape[0], int(both.sum()), int(one.sum())
    s_both, s_one = float(share[both].sum()), float(share[one].sum())
    return {
        "prefs_pair": (s_both + s_one) / n_all if n_all else 0.0,
        "prefs_pair_ret": s_both / n_both if n_both else 0.0,
        "prefs_pair_imp": (s_both + s_one) / (n_both + n_one) if n_both + n_one else 0.0,
    }


def _avg(parts: list[float], n_groups: int) -> float:
    s = 0.0
    for x in parts:
        s += x
    return s / n_groups if s > 0.0 else 0.0


def query_values(q: _Query, ranking: list[str]) -> dict[str, float]:
    """Every preference measure of one query for one ranking (documents best first)."""
    judged = [q.index[d] for d in ranking if d in q.index]
    njr = len(judged)
    r = np.full(len(q.docs), -1, np.int64)
    r[judged] = np.arange(njr)
    rest = np.flatnonzero(r < 0)  # unretrieved judged documents, in document id order
    r[rest] = njr + np.arange(rest.shape[0])
    cs = [_counts(g, r, njr) for g in q.groups]
    ful_ret = sum(c.ful_ret for c in cs)
    ful = ful_ret + sum(c.ful_imp for c in cs)
    poss_ret = sum(c.poss_ret for c in cs)
    poss_imp = poss_ret + sum(c.poss_imp for c in cs)
    poss = poss_imp + sum(c.notoccur for c in cs)
    ng = len(q.groups)

    def ratio(f: int, p: int) -> float:
        return f / p if p else 0.0

    out = {
        "num_q": 1.0,
        "prefs_num_prefs_poss": float(poss),
        "prefs_num_prefs_ful": float(ful),
        "prefs_num_prefs_ful_ret": float(ful_ret),
        "prefs_simp": ratio(ful, poss),
        "prefs_simp_ret": ratio(ful_ret, poss_ret),
        "prefs_simp_imp": ratio(ful, poss_imp),
        "prefs_avgjg": _avg(
            [ratio(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp + c.notoccur) for c in cs], ng
        ),
        "prefs_avgjg_ret": _avg([ratio(c.ful_ret, c.poss_ret) for c in cs], ng),
        "prefs_avgjg_imp": _avg(
            [ratio(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp) for c in cs], ng
        ),
        "prefs_avgjg_Rnonrel": _avg(
            [_rnonrel(g, r, njr, c, ret=False) for g, c in zip(q.groups, cs, strict=True)], ng
        ),
        "prefs_avgjg_Rnonrel_ret": _avg(
            [_rnonrel(g, r, njr, c, ret=True) for g, c in zip(q.groups, cs, strict=True)], ng
        ),
    }
    out.update(_pairs(q, r, njr))
    return out


def evaluate_prefs(
    prefs: Any,
    runs: Any,
    measures: Any = None,
    opts: EvalOptions = DEFAULTS,
    *,
    per_query: bool = True,
) -> pl.DataFrame:
    """Evaluate runs against preference judgments, as ``trec_eval -R prefs`` (or ``qrels_prefs``).

    ``prefs``: a ``prefs`` file (``qid jg jsg docno rel_level``), a ``qrels_prefs`` file
    (``qid jg docno rel``; ``opts.rel_format`` says which), a polars frame with
    ``query_id, judgment_group, [subgroup,] doc_id, relevance`` or a
    :class:`fasteval.io.prefs.Prefs`; ``measures``: ``all_prefs`` (default), ``prefs``,
    ``prefs_*``, ``num_q``, ``runid`` or a ``MeasureSet``; the rest as for
    :func:`fasteval.evaluate` (``compat=9``: float32 scores; no relevance level).
    """
    compat = opts.compat
    mset = parse_prefs_measures(measures, compat=compat)
    p = as_prefs(prefs, rel_format=opts.rel_format, lenient=opts.lenient)
    rc = run_columns(as_list(runs), opts)
    table = pl.from_arrow(runs_to_table(rc))
    assert isinstance(table, pl.DataFrame)
    score = pl.col("score").cast(pl.Float32 if compat == 9 else pl.Float64)
    by = ["query_id", score, pl.col("doc_id").cast(pl.Binary)]  # ties: document id ascending
    ranked = table.sort(by, descending=[False, True, False]).group_by(
        ["run_id", "query_id"], maintain_order=True
    )
    rankings = {(r, q): docs for r, q, docs in ranked.agg("doc_id").iter_rows()}
    lines, qids = p.by_query(), p.queries()
    prepared = {q: _prepare_query(p, q, lines[q]) for q in qids}
    groups = []
    for r, run_id in enumerate(rc.run_names):
        for i, q in enumerate(qids):
            ranking = rankings.get((run_id, q))
            if ranking is None and not opts.complete:
                continue
            docs = list(ranking or [])[: opts.max_depth]
            first = list(dict.fromkeys(docs))  # each document's first occurrence
            if len(first) != len(docs) and opts.on_duplicate == "error":
                dup = next(d for i, d in enumerate(docs) if d in docs[:i])
                msg = (
                    f"run {run_id!r}, query {q!r}: document {dup!r} retrieved twice\n  hint: keep"
                    " the first occurrence with on_duplicate='first' (CLI: --keep-first)"
                )
                raise InputFormatError(msg)
            v = query_values(prepared[q], first)
            groups.append((r, i, [v[m.family] for m in mset], ranking is not None))
    if not groups:
        msg = f"no run retrieved any query of the preferences in {p.name}"
        raise DataMismatchError(msg)
    group_run, group_q, rows, has_rows = (np.array(x) for x in zip(*groups, strict=True))
    index = ResultIndex(rc.run_names, qids, group_run, group_q)
    values = rows.astype(np.float64)
    ev = Evaluation(mset, index, values, aggregate(index, mset, values, None), has_rows)
    return to_frame(ev, per_query=per_query, compat=compat)
