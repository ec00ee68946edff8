"""Measure families: what each computes, its parameters, how it aggregates.

One entry per trec_eval measure family. The table drives the parser, the
engine's column plan, the trec-format printer and the tests. The entries are
written in :mod:`fasteval.measures.trec_families` (trec_eval's own) and
:mod:`fasteval.measures.extra_families` (beyond trec_eval), each in the order
the families are printed; this module assembles them, reads the output order
from them, and the ir_measures names from their ``ir_measures=``, and holds
trec_eval's nicknames.
"""

from __future__ import annotations

from fasteval.measures.extra_families import EXTRA_FAMILIES
from fasteval.measures.family import DEFAULT_CUTOFFS, R_MULTIPLES, RECALL_LEVELS, Family
from fasteval.measures.trec_families import TREC_FAMILIES

__all__ = [
    "DEFAULT_CUTOFFS",
    "FAMILIES",
    "IR_MEASURES",
    "NICKNAMES",
    "PREFS_FAMILIES",
    "PREFS_ORDER",
    "RECALL_LEVELS",
    "R_MULTIPLES",
    "TREC_ORDER",
    "V10_ONLY",
    "Family",
]


FAMILIES: dict[str, Family] = {f.name: f for f in [*TREC_FAMILIES, *EXTRA_FAMILIES]}

# trec_eval's output order (measures.c te_trec_measures[]), then fasteval's own families:
# the order of the entries
TREC_ORDER = ["runid", *FAMILIES]

# The families defined over preference judgments (trec_eval -R prefs / qrels_prefs).
PREFS_ORDER = tuple(f for f in FAMILIES if f.startswith("prefs_"))
"""trec_eval's preference measures, in its output order."""

PREFS_FAMILIES = frozenset(PREFS_ORDER)

# Families that only trec_eval 10 has: left out of nicknames under --compat 9.
V10_ONLY = frozenset({"rbp", "rbp_resid", "unj"})

# trec_eval's nicknames (measures.c). Families fasteval does not compute yet are
# reported, never dropped silently.
_OFFICIAL = [
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
]
NICKNAMES: dict[str, list[str]] = {
    "official": _OFFICIAL,
    "all_trec": [
        *_OFFICIAL,
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
    "all_prefs": ["runid", "num_q", *PREFS_ORDER],
    "prefs": ["runid", "num_q", *PREFS_ORDER[:6]],  # poss, ful, ful_ret, simp, pair, avgjg
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}


def _ir_measures_names() -> dict[str, tuple[str | None, str | None]]:
    """ir_measures' names -> (the family with a cutoff, the family without), from the entries."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for f in FAMILIES.values():
        if not f.ir_measures:
            continue
        name = f.ir_measures.split("[")[0].split("@")[0]
        with_cut, without = out.get(name, (None, None))
        if "@k" in f.ir_measures:  # AP@k, RR[@k]
            with_cut = f.name
        if "@" not in f.ir_measures or "[@k]" in f.ir_measures:  # AP, RR[@k]
            without = f.name
        out[name] = (with_cut, without)
    return out


IR_MEASURES = _ir_measures_names()
"""ir_measures' names -> trec_eval family (cutoff form, no-cutoff form)."""
