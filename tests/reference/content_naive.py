"""Content-based evaluation (SPEC 9), slow and obvious: dicts of counts and math.log2.

Documents are ``{doc_id: {term: count}}``; qrels ``{query: {doc: grade}}`` (or
``{query: {subtopic: {doc: grade}}}`` for the intent-aware measure); a ranking
is a list of doc ids already in trec_eval order.
"""

from __future__ import annotations

import math
from collections import Counter

Docs = dict[str, dict[str, int]]


def lm_concat(docs: Docs, ids: list[str]) -> dict[str, float]:
    """theta_R: the LM of the concatenation of ``ids`` (those in ``docs`` with tokens)."""
    tot: Counter[str] = Counter()
    for d in ids:
        if d in docs and sum(docs[d].values()) > 0:
            tot.update(docs[d])
    n = sum(tot.values())
    return {w: c / n for w, c in tot.items()} if n else {}


def lm_result(docs: Docs, ranking: list[str], k: int) -> dict[str, float]:
    """theta_k: rank-weighted mixture of the first k ranked documents in ``docs`` with tokens."""
    kept = [d for d in ranking if d in docs and sum(docs[d].values()) > 0][:k]
    num: dict[str, float] = {}
    wsum = 0.0
    for i, d in enumerate(kept, start=1):
        w = 1.0 / math.log2(i + 1)
        ln = sum(docs[d].values())
        for t, c in docs[d].items():
            num[t] = num.get(t, 0.0) + w * c / ln
        wsum += w
    return {t: v / wsum for t, v in num.items()} if wsum else {}


def kl2(p: dict[str, float], q: dict[str, float]) -> float:
    return sum(pv * math.log2(pv / q[w]) for w, pv in p.items() if pv > 0)


def js(p: dict[str, float], q: dict[str, float]) -> float:
    """Jensen-Shannon divergence in bits over the union of supports."""
    m = {w: 0.5 * (p.get(w, 0.0) + q.get(w, 0.0)) for w in set(p) | set(q)}
    return 0.5 * kl2(p, m) + 0.5 * kl2(q, m)


def collection_lm(docs: Docs) -> dict[str, float]:
    return lm_concat(docs, list(docs))


def relevant(judged: dict[str, int], level: int = 1) -> list[str]:
    return [d for d, g in judged.items() if g >= level]


def lmjs(docs: Docs, judged: dict[str, int], ranking: list[str], k: int, level: int = 1) -> float:
    truth = lm_concat(docs, relevant(judged, level))
    if not truth:
        return math.nan
    res = lm_result(docs, ranking, k)
    if not res:
        return 0.0
    return 1.0 - js(truth, res)


def lmkl(
    docs: Docs, judged: dict[str, int], ranking: list[str], k: int, lam: float = 0.1, level: int = 1
) -> float:
    truth = lm_concat(docs, relevant(judged, level))
    if not truth:
        return math.nan
    res = lm_result(docs, ranking, k)
    coll = collection_lm(docs)
    kl = 0.0
    for w, p in truth.items():
        mix = (1 - lam) * res.get(w, 0.0) + lam * coll.get(w, 0.0)
        if mix == 0:
            return 0.0  # exp(-inf)
        kl += p * math.log(p / mix)
    return math.exp(-kl)


def lmjs_ia(
    docs: Docs, judged: dict[str, dict[str, int]], ranking: list[str], k: int, level: int = 1
) -> float:
    """Mean over subtopics with a relevant document in ``docs`` of 1 - JS."""
    res = lm_result(docs, ranking, k)
    vals = []
    for sub in sorted(judged):
        truth = lm_concat(docs, relevant(judged[sub], level))
        if truth:
            vals.append(1.0 - js(truth, res) if res else 0.0)
    return sum(vals) / len(vals) if vals else math.nan


def threshold(scores: list[float], labels: list[bool]) -> float:
    """t maximising F1 of ``score >= t`` on judged docs (candidates: scores, inf; ties: larger)."""
    best_f, best_t = 0.0, math.inf
    pos = sum(labels)
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for s, y in zip(scores, labels, strict=True) if s >= t and y)
        n = sum(1 for s in scores if s >= t)
        f = 2 * tp / (n + pos) if pos else 0.0
        if f > best_f:
            best_f, best_t = f, t
    return best_t


def complete(
    docs: Docs,
    judged: dict[str, int],
    rankings: list[list[str]],
    depth: int = 20,
    level: int = 1,
) -> set[str]:
    """Documents predicted relevant for one query (ad hoc): SPEC 9's label completion."""
    truth = lm_concat(docs, relevant(judged, level))
    if not truth:
        return set()
    pool = {d for r in rankings for d in r[:depth] if d in docs and sum(docs[d].values()) > 0}

    def score(d: str) -> float:
        return 1.0 - js(lm_concat(docs, [d]), truth)

    jd = [d for d in pool if d in judged]
    t = threshold([score(d) for d in jd], [judged[d] >= level for d in jd])
    return {d for d in pool if d not in judged and score(d) >= t}


def select(
    docs: Docs,
    judged: dict[str, int],
    rankings: list[list[str]],
    depth: int = 3,
    max_depth: int = 20,
    level: int = 1,
) -> list[str]:
    """Representative judgments for one ad-hoc query: the documents judged, in order."""
    best: dict[str, int] = {}
    for r in rankings:
        for i, d in enumerate(r[:max_depth], start=1):
            if d in docs:
                best[d] = min(best.get(d, i), i)
    order = list(docs)  # ties and the depth-k pool: collection order
    done = [d for d in sorted(best, key=order.index) if best[d] <= depth]
    chosen = list(done)
    has_rel = any(judged.get(d, 0) >= level for d in done) or not any(
        g >= level for g in judged.values()
    )
    cands = [d for d in best if d not in done]
    while not has_rel and cands:
        rel = [d for d in chosen if judged.get(d, 0) >= level]
        ref = rel or chosen

        def mean_js(d: str, ref: list[str] = ref) -> float:
            return sum(js(lm_concat(docs, [d]), lm_concat(docs, [r])) for r in ref) / len(ref)

        nxt = min(cands, key=lambda d: (mean_js(d), order.index(d)))
        cands.remove(nxt)
        chosen.append(nxt)
        has_rel = judged.get(nxt, 0) >= level
    return chosen
