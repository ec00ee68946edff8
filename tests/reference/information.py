"""Slow, obviously correct references for the information-theoretic measures (SPEC 5).

Everything enumerates ordered pairs explicitly, builds the joint table of the
random variables with a Counter, and computes mutual information from it with
the textbook formulas. No counting tricks, no kernels.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from tests.reference.naive import f32


def entropy(counts: Counter) -> float:
    """Entropy in bits of the distribution given by counts."""
    n = sum(counts.values())
    return -sum(c / n * math.log2(c / n) for c in counts.values() if c > 0)


def cond_mi(samples: list[tuple], x: Sequence[int], y: Sequence[int], z: Sequence[int]) -> float:
    """I(X; Y | Z) over equally likely samples; x, y, z index sample components."""

    def h(idx: Sequence[int]) -> float:
        return entropy(Counter(tuple(s[i] for i in idx) for s in samples))

    xz = [*x, *z]
    yz = [*y, *z]
    return h(xz) + h(yz) - h([*x, *y, *z]) - h(z)


def order(run: dict[str, float], compat: int = 9) -> list[str]:
    """Documents in trec_eval order: score descending, doc id descending."""
    items = [(f32(s) if compat == 9 else s, d) for d, s in run.items()]
    items.sort(key=lambda t: (t[0], t[1].encode()), reverse=True)
    return [d for _, d in items]


def positions(ranked: list[str], qrels: dict[str, int], level: int) -> dict[str, int]:
    """Rank of each document up to the last retrieved relevant one."""
    thr = max(level, 0)
    last = -1
    for i, d in enumerate(ranked):
        if qrels.get(d, -1) >= thr:
            last = i
    return {d: i for i, d in enumerate(ranked[: last + 1])}


def r_var(pos: dict[str, int], a: str, b: str) -> int:
    """+1 if a is ranked above b (retrieved above unretrieved), 0 if neither retrieved."""
    pa = pos.get(a)
    pb = pos.get(b)
    if pa is None and pb is None:
        return 0
    if pb is None or (pa is not None and pa < pb):
        return 1
    return -1


def samples(qrels: dict[str, int], poss: list[dict[str, int]]) -> list[tuple]:
    """(R_1, ..., R_k, Q) for every ordered pair of judged docs with different grades."""
    judged = [d for d, g in qrels.items() if g >= 0]
    out = []
    for a in judged:
        for b in judged:
            if qrels[a] != qrels[b]:
                out.append((*(r_var(p, a, b) for p in poss), int(qrels[a] > qrels[b])))
    return out


def joint_ric_query(
    qrels: dict[str, int], runs: list[dict[str, float]], level: int = 1, compat: int = 9
) -> float | None:
    """I(R_1, ..., R_k; Q) for one query (None if no pair)."""
    poss = [positions(order(r, compat), qrels, level) for r in runs]
    s = samples(qrels, poss)
    if not s:
        return None
    k = len(runs)
    return cond_mi(s, list(range(k)), [k], [])


def id_query(
    qrels: dict[str, int], a: dict[str, float], b: dict[str, float], level: int = 1
) -> float | None:
    """I(R_a; Q | R_b) + I(R_b; Q | R_a) for one query (None if no pair)."""
    poss = [positions(order(r), qrels, level) for r in (a, b)]
    s = samples(qrels, poss)
    if not s:
        return None
    return cond_mi(s, [0], [2], [1]) + cond_mi(s, [1], [2], [0])


def mean_over_queries(
    qrels: dict[str, dict[str, int]],
    runs: list[dict[str, dict[str, float]]],
    fn,
    level: int = 1,
) -> float:
    """Average fn over qrels queries where any run has a ranking and a pair exists."""
    vals = []
    for q, qr in qrels.items():
        if not any(q in r for r in runs):
            continue
        v = fn(qr, [r.get(q, {}) for r in runs], level)
        if v is not None:
            vals.append(v)
    return sum(vals) / len(vals) if vals else float("nan")


def sign(x: float) -> int:
    return int(x > 0) - int(x < 0)


def information_tau(a: Sequence[float], b: Sequence[float], given=()) -> float:
    """I(X_a; X_b | X_g1, ...) over ordered pairs of distinct objects."""
    n = len(a)
    rows = []
    for i in range(n):
        for j in range(n):
            if i != j:
                rows.append(
                    (sign(a[i] - a[j]), sign(b[i] - b[j]), *(sign(g[i] - g[j]) for g in given))
                )
    return cond_mi(rows, [0], [1], list(range(2, 2 + len(given))))
