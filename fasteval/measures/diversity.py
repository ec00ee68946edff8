"""The diversity measures (ndeval 4.5): names, cutoffs and ndeval's spellings.

See :mod:`fasteval.engine.diversity` for their definitions and how they are computed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from fasteval.errors import MeasureError
from fasteval.measures import names_of
from fasteval.measures.ir_measures_names import param_value, params

DEFAULT_CUTOFFS = (5, 10, 20)

# canonical family name -> (kernel code, takes a cutoff, ndeval's spelling)
FAMILIES: dict[str, tuple[int, bool, str]] = {
    "ERR_IA": (0, True, "ERR-IA"),
    "nERR_IA": (1, True, "nERR-IA"),
    "alpha_DCG": (2, True, "alpha-DCG"),
    "alpha_nDCG": (3, True, "alpha-nDCG"),
    "NRBP": (4, False, "NRBP"),
    "nNRBP": (5, False, "nNRBP"),
    "MAP_IA": (6, False, "MAP-IA"),
    "P_IA": (7, True, "P-IA"),
    "strec": (8, True, "strec"),
}
# lower-case names and other spellings -> the family
_ALIASES = {
    **{f.lower(): f for f in FAMILIES},
    "ap_ia": "MAP_IA",
    "precision_ia": "P_IA",
    "st_recall": "strec",
    "strecall": "strec",
    "subtopic_recall": "strec",
}
# ndeval's output columns, in its order (the families' order)
NDEVAL_SET = [
    f"{f}@{k}" if cut else f
    for f, (_, cut, _) in FAMILIES.items()
    for k in (DEFAULT_CUTOFFS if cut else (0,))
]
_NAME = re.compile(r"^(?P<fam>[A-Za-z\u03b1_-]+?)(?:\((?P<args>[^)]*)\))?(?:@(?P<k>[0-9]+))?$")
# ir_measures' parameters per family (besides rel=, which every family takes)
_PARAMS = {
    "alpha_DCG": ("alpha",),
    "alpha_nDCG": ("alpha",),
    "NRBP": ("alpha", "beta"),
    "nNRBP": ("alpha", "beta"),
}


@dataclass(frozen=True)
class DiversityMeasure:
    """One diversity measure: a family and its cutoff (0 for none)."""

    family: str
    k: int
    rel: int | None = None  # ir_measures' rel=: judgments >= rel are relevant (None: the call's)
    alpha: float | None = None  # ir_measures' alpha= (None: the call's)
    beta: float | None = None  # ir_measures' beta= (None: the call's)
    label: str | None = None  # the name asked for, when it carries parameters

    @property
    def name(self) -> str:
        """The output name: as asked, with parameters; else ``alpha_nDCG@20``, ``NRBP``."""
        if self.label is not None:
            return self.label
        return f"{self.family}@{self.k}" if self.k else self.family

    @property
    def has_params(self) -> bool:
        """Whether the measure sets its own ``rel=``, ``alpha=`` or ``beta=``."""
        return (self.rel, self.alpha, self.beta) != (None, None, None)

    @property
    def ndeval_name(self) -> str:
        """ndeval's column name (``alpha-nDCG@20``; the name asked for with parameters)."""
        if self.has_params and self.label is not None:
            return self.label
        base = FAMILIES[self.family][2]
        return f"{base}@{self.k}" if self.k else base


def _family(raw: str) -> str | None:
    # ir_measures spells alpha with the Greek letter too: α_nDCG, α_DCG
    return _ALIASES.get(raw.replace("\u03b1", "alpha").lower().replace("-", "_"))


def _args(fam: str, text: str | None, name: str) -> dict[str, float]:
    """``rel=2, alpha=0.7`` -> values, checked against what ``fam`` takes."""
    given = params(text, ("rel", *_PARAMS.get(fam, ())), name)
    out = {k: param_value(k, v, name) for k, v in given.items()}
    bad = [k for k in ("alpha", "beta") if not 0.0 <= out.get(k, 0.0) <= 1.0]
    if bad:
        msg = f"measure {name!r}: {bad[0]} must be in [0, 1], got {given[bad[0]]}"
        raise MeasureError(msg)
    return out


def is_diversity_measure(name: str) -> bool:
    """Whether ``name`` names a diversity measure (or the ``ndeval`` set)."""
    if name.strip().lower() == "ndeval":
        return True
    m = _NAME.match(name.strip())
    return bool(m and _family(m["fam"]) is not None)


def parse_diversity_measures(measures: str | Sequence[str] | None) -> list[DiversityMeasure]:
    """Parse diversity measure names (any case; a list, or comma-separated outside parentheses).

    ``alpha_nDCG@20`` (ndeval's ``alpha-nDCG@20``, ir_measures' ``α_nDCG@20``), ``ERR_IA@10``,
    ``nERR_IA``, ``alpha_DCG``, ``NRBP``, ``nNRBP``, ``MAP_IA`` (``AP_IA``), ``P_IA@5``,
    ``strec@10`` (``StRecall``); a cutoff family without ``@k`` means k = 5, 10 and 20;
    ``ndeval`` (the default) is ndeval's 21 columns. ir_measures' ``rel=`` (every family:
    judgments ``>= rel`` are relevant), ``alpha=`` (alpha_DCG, alpha_nDCG, NRBP, nNRBP)
    and ``beta=`` (NRBP, nNRBP) override the evaluation's for that measure, which keeps
    the name asked for (``alpha_nDCG(rel=2)@20``).
    """
    out: list[DiversityMeasure] = []
    for s in names_of("ndeval" if measures is None else measures):
        if s.lower() == "ndeval":
            out.extend(parse_diversity_measures(NDEVAL_SET))
        else:
            out.extend(_parse_one(s))
    uniq = list(dict.fromkeys(out))
    if not uniq:
        msg = "no diversity measure given"
        raise MeasureError(msg)
    return uniq


def _parse_one(s: str) -> list[DiversityMeasure]:
    """One diversity measure name (``alpha_nDCG(rel=2)@20``): one measure per cutoff."""
    m = _NAME.match(s)
    fam = _family(m["fam"]) if m else None
    if m is None or fam is None:
        msg = (
            f"unknown diversity measure {s!r}; known: "
            + ", ".join(FAMILIES)
            + " (with @k for cutoffs), or 'ndeval'"
        )
        raise MeasureError(msg)
    ks = _cutoffs(fam, m["k"], s)
    args = _args(fam, m["args"], s)
    rel = int(args["rel"]) if "rel" in args else None
    base = s.split("@", maxsplit=1)[0]
    labels: list[str | None] = [None] * len(ks)
    if args or "\u03b1" in s:  # a name with parameters, or spelt with α, is kept
        labels = [s if m["k"] else (f"{base}@{k}" if k else base) for k in ks]
    return [
        DiversityMeasure(fam, k, rel, args.get("alpha"), args.get("beta"), label)
        for k, label in zip(ks, labels, strict=True)
    ]


def _cutoffs(fam: str, k: str | None, s: str) -> tuple[int, ...]:
    """The cutoffs of name ``s`` (family ``fam``, ``@k`` text or None): 0 for none."""
    takes_k = FAMILIES[fam][1]
    if k is None:
        return DEFAULT_CUTOFFS if takes_k else (0,)
    if not takes_k:
        msg = (
            f"{fam} has no cutoff (got {s!r}); it uses the whole ranking\n"
            "  hint: max_depth (CLI: -M) cuts every ranking"
        )
        raise MeasureError(msg)
    if int(k) < 1:
        msg = f"cutoff must be at least 1, got {s!r}"
        raise MeasureError(msg)
    return (int(k),)
