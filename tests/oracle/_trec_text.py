"""Reading trec_eval's text output, and deciding which lines fasteval computes.

trec_eval prints ``"%-22s\\t%s\\t%s"``: measure name (space padded), query id
(``all`` for aggregates), value. The value is kept as the string trec_eval
printed; tests compare strings.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from pathlib import Path

from fasteval.measures import registry

# The families fasteval computes now (trec_eval names), listed here on purpose
# instead of read from fasteval's registry, so that a family dropped from the
# registry makes these tests fail instead of silently comparing fewer lines.
IMPLEMENTED = frozenset(
    {
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "recall",
        "infAP",
        "11pt_avg",
        "ndcg",
        "ndcg_cut",
        "map_cut",
        "success",
        "set_P",
        "set_recall",
        "set_F",
        "num_nonrel_judged_ret",
        "gm_bpref",
        "Rprec_mult",
        "utility",
        "binG",
        "G",
        "dcg",
        "ideal_dcg",
        "ndcg_rel",
        "Rndcg",
        "relative_P",
        "set_relative_P",
        "set_map",
        "rbp",
        "rbp_resid",
        "unj",
    }
)

# String-valued families fasteval computes (kept apart: the numeric oracles, e.g.
# pytrec_eval, are driven by IMPLEMENTED).
TEXT_IMPLEMENTED = frozenset({"relstring"})
# Judgment-group families (-R qrels_jg): not in pytrec_eval's plain-qrels comparisons.
JG_IMPLEMENTED = frozenset({"map_avgjg", "P_avgjg", "Rprec_mult_avgjg"})
# Preference families (-R prefs / qrels_prefs): fasteval.engine.prefs.
PREFS_IMPLEMENTED = registry.PREFS_FAMILIES

# Every trec_eval 10 family name (measures.c), implemented or not; a printed
# name belongs to the longest family name it equals or starts with (+ "_").
TREC_FAMILIES = IMPLEMENTED | {
    "relstring",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg_rel",
    "Rndcg",
    "relative_P",
    "set_relative_P",
    "set_map",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "Rprec_mult_avgjg",
    "P_avgjg",
}

Line = tuple[str, str, str]  # (measure, query id, value as printed)


def family_of(name: str) -> str:
    """The trec_eval family a printed measure name belongs to (``-Z``: ``Z`` + name)."""
    if name.startswith("Z") and name != "Z":
        name = name[1:]  # no trec_eval family starts with Z; -Z output prefixes one
    best = ""
    for fam in TREC_FAMILIES:
        if (name == fam or name.startswith(fam + "_")) and len(fam) > len(best):
            best = fam
    if not best:
        msg = f"unknown trec_eval measure name {name!r}"
        raise ValueError(msg)
    return best


def is_implemented(name: str) -> bool:
    """Whether fasteval computes the measure printed as ``name``."""
    return family_of(name) in IMPLEMENTED | TEXT_IMPLEMENTED | JG_IMPLEMENTED | PREFS_IMPLEMENTED


def parse_lines(text: str) -> list[Line]:
    """All lines of trec_eval output, in order."""
    out: list[Line] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != 3:
            msg = f"not a trec_eval output line: {raw!r}"
            raise ValueError(msg)
        out.append((parts[0].strip(), parts[1], parts[2]))
    return out


def read_text(path: Path) -> str:
    """A (possibly gzipped) text file."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return path.read_text(encoding="utf-8")


def implemented(lines: Iterable[Line]) -> list[Line]:
    """The lines whose measure fasteval computes, in order."""
    return [ln for ln in lines if is_implemented(ln[0])]


def as_dict(lines: Iterable[Line]) -> dict[tuple[str, str], str]:
    """``{(measure, qid): value}``; a repeated key is an error."""
    out: dict[tuple[str, str], str] = {}
    for m, q, v in lines:
        if (m, q) in out:
            msg = f"line repeated: {m} {q}"
            raise ValueError(msg)
        out[(m, q)] = v
    return out


def diff_report(expected: dict, got: dict, limit: int = 15) -> str:
    """Readable summary of the differences between two line dicts."""
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    wrong = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
    parts = [f"{len(missing)} missing, {len(extra)} extra, {len(wrong)} different values"]
    parts += [f"  missing {k}: expected {expected[k]}" for k in missing[:limit]]
    parts += [f"  extra   {k}: got {got[k]}" for k in extra[:limit]]
    parts += [f"  value   {k}: expected {expected[k]} got {got[k]}" for k in wrong[:limit]]
    return "\n".join(parts)
