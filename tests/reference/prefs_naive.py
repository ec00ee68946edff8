"""trec_eval's preference measures, the slow obvious way (one query, one ranking).

Straight from the definitions in trec_eval's ``m_prefs_*.c`` descriptions: the
preferences of each judgment group as explicit pairs, the position of each
judged document, and plain loops. ``prefs_avgjg_Rnonrel*`` (whose recount
follows trec_eval's code, not a definition) are left to the quicktest files.
"""

from __future__ import annotations

from collections import Counter
from itertools import product

# one line of preferences: (judgment group, sub-group, document, level)
Line = tuple[str, str, str, float]


def preferences(lines: list[Line]) -> list[list[tuple[str, str]]]:
    """Each judgment group's preferences ``(a, b)``, a preferred to b, groups sorted by name."""
    out = []
    for jg in sorted({ln[0] for ln in lines}, key=str.encode):
        mine = [ln for ln in lines if ln[0] == jg]
        subs = {ln[1] for ln in mine}
        if len(subs) == 1:  # one preference per pair of lines of different levels
            out.append([(a[2], b[2]) for a, b in product(mine, mine) if a[3] > b[3]])
            continue
        rel = {(a[2], b[2]) for a, b in product(mine, mine) if a[1] == b[1] and a[3] > b[3]}
        while True:  # transitive closure
            more = {(a, d) for a, b in rel for c, d in rel if b == c} - rel
            if not more:
                break
            rel |= more
        out.append(sorted((a, b) for a, b in rel if a != b))
    return out


def positions(lines: list[Line], ranking: list[str]) -> tuple[dict[str, int], int]:
    """Rank of every judged document: retrieved ones first (run order), then by id; and njr."""
    judged = {ln[2] for ln in lines}
    ret = [d for d in ranking if d in judged]
    rest = sorted(judged - set(ret), key=str.encode)
    return {d: i for i, d in enumerate(ret + rest)}, len(ret)


def measures(lines: list[Line], ranking: list[str]) -> dict[str, float]:
    """Every preference measure but the Rnonrel ones."""
    pos, njr = positions(lines, ranking)
    groups = preferences(lines)
    per_group = []
    for prefs in groups:
        c = Counter()
        for a, b in prefs:
            kind = (
                "ret"
                if max(pos[a], pos[b]) < njr
                else "none"
                if min(pos[a], pos[b]) >= njr
                else "imp"
            )
            c["poss_" + kind] += 1
            if pos[a] < pos[b] and kind != "none":
                c["ful_" + kind] += 1
        per_group.append(c)
    tot = sum(per_group, Counter())

    def ratio(f: float, p: float) -> float:
        return f / p if p else 0.0

    def avgjg(f_keys: tuple[str, ...], p_keys: tuple[str, ...]) -> float:
        s = sum(ratio(sum(c[k] for k in f_keys), sum(c[k] for k in p_keys)) for c in per_group)
        return s / len(per_group) if s > 0 else 0.0

    every = ("poss_ret", "poss_imp", "poss_none")
    count: Counter = Counter(p for prefs in groups for p in prefs)
    pairs = {tuple(sorted(p, key=str.encode)) for p in count}
    s_both = s_one = 0.0
    n_both = n_one = 0
    for a, b in pairs:
        hi, lo = (a, b) if pos[a] < pos[b] else (b, a)
        share = count[(hi, lo)] / (count[(hi, lo)] + count[(lo, hi)])
        if pos[lo] < njr:
            s_both, n_both = s_both + share, n_both + 1
        elif pos[hi] < njr:
            s_one, n_one = s_one + share, n_one + 1
    return {
        "prefs_num_prefs_poss": sum(tot[k] for k in every),
        "prefs_num_prefs_ful": tot["ful_ret"] + tot["ful_imp"],
        "prefs_num_prefs_ful_ret": tot["ful_ret"],
        "prefs_simp": ratio(tot["ful_ret"] + tot["ful_imp"], sum(tot[k] for k in every)),
        "prefs_simp_ret": ratio(tot["ful_ret"], tot["poss_ret"]),
        "prefs_simp_imp": ratio(tot["ful_ret"] + tot["ful_imp"], tot["poss_ret"] + tot["poss_imp"]),
        "prefs_avgjg": avgjg(("ful_ret", "ful_imp"), every),
        "prefs_avgjg_ret": avgjg(("ful_ret",), ("poss_ret",)),
        "prefs_avgjg_imp": avgjg(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp")),
        "prefs_pair": ratio(s_both + s_one, len(pairs)),
        "prefs_pair_ret": ratio(s_both, n_both),
        "prefs_pair_imp": ratio(s_both + s_one, n_both + n_one),
    }
