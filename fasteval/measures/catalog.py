"""Which evaluator computes a measure: the only code that routes by measure names.

:func:`evaluator_of` routes one name; :func:`parse_request` parses a list of names
once into a :class:`Request` holding parsed measure values for each evaluator
(ranking, diversity, RIC, histogram, judgment groups, preferences, content;
:data:`fasteval.evaluator.KINDS` serves them); evaluators never see the strings.
An unknown name's message suggests the closest valid ones (:func:`unknown_measure_message`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from fasteval.errors import MeasureError, ParameterError
from fasteval.measures import content, diversity, names_of
from fasteval.measures.diversity import DiversityMeasure
from fasteval.measures.ir_measures_names import ALIASES
from fasteval.measures.parser import MeasureSet, parse_measures
from fasteval.measures.registry import FAMILIES, IR_MEASURES, NICKNAMES, PREFS_FAMILIES

Evaluator = Literal["ranking", "diversity", "ric", "histogram", "content"]

RIC = "RIC"
HSA = "HSA"
DO = "DO"
HISTOGRAM_NAMES = (HSA, DO)
# the relevance formats besides those of preference judgments (fasteval.io.prefs.PREFS_FORMATS)
REL_FORMATS = ("qrels", "qrels_jg")
# the families trec_eval defines over judgment groups (-R qrels_jg)
JG_FAMILIES = frozenset(NICKNAMES["qrels_jg"]) - {"runid"}

MeasuresLike = str | Sequence[str] | None


def evaluator_of(name: str) -> Evaluator:
    """The evaluator that computes the measure ``name``.

    ``RIC`` and ``HSA`` / ``DO`` (any case) have their own evaluators; diversity
    names (``alpha_nDCG@20``, ``ndeval``, ...) the diversity one, content names the
    content one; every other name is a ranking measure (or a judgment-group or
    preference one, by the qrels: :func:`parse_request`).
    """
    upper = name.strip().upper()
    if upper == RIC:
        return "ric"
    if upper in HISTOGRAM_NAMES:
        return "histogram"
    if diversity.is_diversity_measure(name):
        return "diversity"
    return "content" if content.is_content_measure(name) else "ranking"


def split(measures: MeasuresLike) -> dict[Evaluator, list[str]]:
    """Group measure names by evaluator (each group in the order given)."""
    out: dict[Evaluator, list[str]] = {}
    for n in names_of(measures):
        out.setdefault(evaluator_of(n), []).append(n)
    return out


@dataclass(frozen=True)
class Request:
    """Measures parsed once and grouped by the evaluator that computes them.

    ``ranking`` holds the ranking measures, or the judgment-group measures
    when ``judgment_groups`` is set; ``diversity`` the diversity measures
    (then nothing else is asked); ``ric`` whether RIC is asked;
    ``histogram`` the asked ones of ``HSA`` / ``DO``.
    """

    ranking: MeasureSet = field(default_factory=MeasureSet)
    diversity: tuple[DiversityMeasure, ...] = ()
    ric: bool = False
    histogram: tuple[str, ...] = ()
    judgment_groups: bool = False
    # "prefs" or "qrels_prefs": ``ranking`` holds preference measures (fasteval.engine.prefs)
    preferences: str | None = None


def check_rel_format(rel_format: str) -> None:
    """Raise a :class:`ParameterError` for a relevance format fasteval does not read."""
    if rel_format in REL_FORMATS:
        return
    from fasteval.io.prefs import PREFS_FORMATS  # noqa: PLC0415 (it loads polars)

    if rel_format not in PREFS_FORMATS:
        known = ", ".join((*REL_FORMATS, *PREFS_FORMATS))
        msg = f"unknown relevance format {rel_format!r}; choose one of {known}"
        raise ParameterError(msg)


def output_names(name: str, *, compat: int = 9) -> list[str]:
    """The ``measure`` values :func:`fasteval.evaluate` gives for the measure argument ``name``.

    The one parser every command uses to check a measure it is given and to find
    its rows in a result: ``MAP`` -> ``["MAP"]`` (the name asked for),
    ``P.5,10`` -> ``["P_5", "P_10"]``, ``RIC`` -> ``["RIC"]``,
    ``alpha-nDCG@20`` -> ``["alpha_nDCG@20"]``.

    Raises
    ------
    MeasureError
        For an unknown measure or a bad parameter.
    """
    out: list[str] = []
    for n in names_of(name):
        ev = evaluator_of(n)
        if ev == "ric":
            out.append(RIC)
        elif ev == "histogram":
            out.append(n.strip().upper())
        elif ev == "diversity":
            out += [m.name for m in diversity.parse_diversity_measures([n])]
        elif ev == "content":
            out += [m.name for m in content.parse_content_measures([n])]
        else:
            out += [m.name for m in parse_measures([n], compat=compat)]
    if not out:
        msg = f"no measure named in {name!r}"
        raise MeasureError(msg)
    return out


def output_name(name: str, *, what: str = "a measure", compat: int = 9) -> str:
    """The one ``measure`` value ``name`` gives (see :func:`output_names`).

    Raises
    ------
    MeasureError
        When ``name`` stands for no measure or for several (``P.5,10``, ``official``);
        ``what`` names the option in the message.
    """
    names = output_names(name, compat=compat)
    if len(names) != 1:
        msg = f"{what} must name exactly one measure, got {name!r} ({', '.join(names)})"
        raise MeasureError(msg)
    return names[0]


def _only(mset: MeasureSet, allowed: frozenset[str], judgments: str, hint: str) -> MeasureSet:
    """``mset``, or a :class:`MeasureError` naming the measures ``judgments`` cannot give."""
    bad = [m.name for m in mset if m.family not in allowed]
    if bad:
        msg = f"measure(s) {', '.join(bad)} cannot be computed from {judgments}\n  hint: {hint}"
        raise MeasureError(msg)
    return mset


def parse_jg_measures(measures: MeasuresLike, *, compat: int = 9) -> MeasureSet:
    """Parse measures for a judgment-group evaluation (default: the ``qrels_jg`` set).

    Only the ``*_avgjg`` families (and ``runid``, ``num_q``) are defined over
    judgment groups, as in trec_eval.
    """
    mset = parse_measures(measures if measures else ["qrels_jg"], compat=compat)
    hint = "use map_avgjg, P_avgjg, Rprec_mult_avgjg (the 'qrels_jg' set)"
    return _only(mset, JG_FAMILIES, "qrels with judgment groups", hint)


def parse_prefs_measures(measures: MeasuresLike | MeasureSet, *, compat: int = 9) -> MeasureSet:
    """Parse measures for an evaluation against preferences (default: the ``all_prefs`` set).

    Only the ``prefs_*`` families (and ``runid``, ``num_q``) are defined over
    preference judgments, as in trec_eval.
    """
    if not isinstance(measures, MeasureSet):
        measures = parse_measures(measures if measures else ["all_prefs"], compat=compat)
    hint = "use all_prefs, prefs or the prefs_* measures"
    return _only(measures, PREFS_FAMILIES | {"num_q"}, "preference judgments", hint)


def parse_request(measures: MeasuresLike, *, compat: int = 9, rel_format: str = "qrels") -> Request:
    """Parse measure names once into a :class:`Request` (see :func:`fasteval.evaluate`).

    Default (``None``): trec_eval's ``official`` set, or the ``qrels_jg`` set
    for qrels with judgment groups. Diversity measures read other qrels and
    cannot be mixed with the rest.
    """
    check_rel_format(rel_format)
    if rel_format == "qrels_jg":
        return Request(parse_jg_measures(measures, compat=compat), judgment_groups=True)
    if rel_format != "qrels":  # prefs or qrels_prefs
        return Request(parse_prefs_measures(measures, compat=compat), preferences=rel_format)
    groups = split(measures)
    if "content" in groups:
        msg = (
            f"{', '.join(groups['content'])} read the documents: give the collection "
            "(CLI: --collection FILE; API: collection=...)"
        )
        raise ParameterError(msg)
    if "diversity" in groups:
        other = [n for ev, ns in groups.items() if ev != "diversity" for n in ns]
        if other:
            msg = (
                f"diversity measures need diversity qrels; cannot mix them with {', '.join(other)}"
                "\n  hint: evaluate the ad-hoc measures in a separate call"
            )
            raise MeasureError(msg)
        return Request(diversity=tuple(diversity.parse_diversity_measures(groups["diversity"])))
    hist = tuple(dict.fromkeys(n.upper() for n in groups.get("histogram", [])))
    mset = MeasureSet()
    if not groups or "ranking" in groups:  # no name: parse_measures' default set (or error)
        mset = parse_measures(groups.get("ranking", measures), compat=compat)
    prefs = [m.name for m in mset if m.family in PREFS_FAMILIES]
    if prefs:
        msg = (
            f"{', '.join(prefs)} need preference judgments"
            "\n  hint: rel_format='prefs' or 'qrels_prefs' (CLI: -R prefs)"
        )
        raise MeasureError(msg)
    return Request(mset, ric="ric" in groups, histogram=hist)


_NAMES = (*FAMILIES, *NICKNAMES, *IR_MEASURES, *ALIASES, *diversity.FAMILIES, RIC, HSA, DO)
KNOWN_NAMES = tuple(dict.fromkeys((*_NAMES, *content.FAMILIES)))
"""Every name an evaluator knows, without parameters (for "did you mean")."""
KNOWN_FAMILIES = (
    "trec_eval names (map, P.5,10, ndcg_cut.10, recall.100, official, all_trec), "
    "ir_measures names (AP, P@10, nDCG@10, RR, R@100), diversity names (alpha_nDCG@20, "
    "ERR_IA@20, NRBP, P_IA@10, strec@10), RIC, HSA, DO, content names (LMJS@10, LMKL@10, "
    "LMJS_IA@10)"
)


def _edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) turning ``a`` into ``b``."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(
                d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


# set while suggestions are checked: a candidate's own failure suggests nothing (no recursion)
_CHECKING: ContextVar[bool] = ContextVar("fasteval_checking_suggestions", default=False)


def is_valid_name(name: str) -> bool:
    """Whether ``name`` is a measure some evaluator computes (:func:`output_names`)."""
    token = _CHECKING.set(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(output_names(name))
    except (MeasureError, ValueError):  # ParameterError is a ValueError
        return False
    finally:
        _CHECKING.reset(token)


def suggest_measures(arg: str, limit: int = 3) -> list[str]:
    """The valid measure names closest to ``arg`` (edit distance, case-insensitive).

    Compares the name without its parameters (``@10``, ``.5,10``, ``(rel=2)``)
    against :data:`KNOWN_NAMES` and gives back the closest ones with ``arg``'s
    parameters; where those parameters are what is wrong (``AP@ten``), with a
    cutoff of 10 or none. Every suggestion is itself a valid name
    (:func:`is_valid_name`), so following one never leads to another "did you mean".
    """
    arg = arg.strip()
    base = re.split(r"[@.(]", arg, maxsplit=1)[0]
    rest = arg[len(base) :]
    if not base or _CHECKING.get():
        return []
    scored = sorted((_edit_distance(base.lower(), n.lower()), n) for n in KNOWN_NAMES)
    bound = max(1, len(base) // 3)
    # arg's parameters; failing those, its cutoff as 10, a cutoff of 10, or none
    endings = [rest, re.sub(r"@[^@]*$", "@10", rest), "@10" if "@" in rest else ".10", ""]
    out: list[str] = []
    for _, n in (s for s in scored if s[0] <= bound):
        for end in dict.fromkeys(endings if rest else [""]):
            candidate = n + end
            if candidate != arg and candidate not in out and is_valid_name(candidate):
                out.append(candidate)
                break
        if len(out) == limit:
            break
    return out


def unknown_measure_message(arg: str) -> str:
    """One line for an unknown measure: "did you mean" suggestions and the families, short."""
    msg = f"unknown measure {arg!r}"
    close = suggest_measures(arg)
    if close:
        msg += "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    return f"{msg} (known: {KNOWN_FAMILIES})"
