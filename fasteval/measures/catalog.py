"""Measures grouped by the evaluator that computes them.

:func:`parse_request` parses a list of names once into a :class:`Request` of measure
values per evaluator (:data:`fasteval.evaluator.KINDS` serves them), routed by
:func:`fasteval.measures.parser.evaluator_of`; evaluators never see the strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fasteval.errors import MeasureError, ParameterError
from fasteval.measures import diversity, names_of
from fasteval.measures.diversity import DiversityMeasure
from fasteval.measures.parser import (
    Evaluator,
    MeasureSet,
    evaluator_of,
    output_names,
    parse_measures,
)
from fasteval.measures.registry import NICKNAMES, PREFS_FAMILIES

JG_FAMILIES = frozenset(NICKNAMES["qrels_jg"]) - {"runid"}

MeasuresLike = str | Sequence[str] | None


def split(measures: MeasuresLike) -> dict[Evaluator, list[str]]:
    """Group measure names by evaluator (each group in the order given)."""
    out: dict[Evaluator, list[str]] = {}
    for n in names_of(measures):
        out.setdefault(evaluator_of(n), []).append(n)
    return out


@dataclass(frozen=True)
class Request:
    """Measures parsed once and grouped by the evaluator that computes them.

    ``ranking`` holds the ranking measures (the judgment-group ones with
    ``judgment_groups``, the preference ones with ``preferences``); ``diversity`` the
    diversity measures (then nothing else).
    """

    ranking: MeasureSet = field(default_factory=MeasureSet)
    diversity: tuple[DiversityMeasure, ...] = ()
    ric: bool = False
    judgment_groups: bool = False
    preferences: str | None = None  # "prefs" or "qrels_prefs" (fasteval.engine.prefs)


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
    """Parse measures for a judgment-group evaluation (default: the ``qrels_jg`` set):
    only the ``*_avgjg`` families (and ``num_q``) are defined there, as in trec_eval."""
    mset = parse_measures(measures if measures else ["qrels_jg"], compat=compat)
    hint = "use map_avgjg, P_avgjg, Rprec_mult_avgjg (the 'qrels_jg' set)"
    return _only(mset, JG_FAMILIES, "qrels with judgment groups", hint)


def parse_prefs_measures(measures: MeasuresLike | MeasureSet, *, compat: int = 9) -> MeasureSet:
    """Parse measures for an evaluation against preferences (default: ``all_prefs``):
    only the ``prefs_*`` families (and ``num_q``) are defined there, as in trec_eval."""
    if not isinstance(measures, MeasureSet):
        measures = parse_measures(measures if measures else ["all_prefs"], compat=compat)
    hint = "use all_prefs, prefs or the prefs_* measures"
    return _only(measures, PREFS_FAMILIES | {"num_q"}, "preference judgments", hint)


def parse_request(measures: MeasuresLike, *, compat: int = 9, rel_format: str = "qrels") -> Request:
    """Parse measure names once into a :class:`Request` (see :func:`fasteval.evaluate`).

    Default (``None``): trec_eval's ``official`` set (``qrels_jg`` for judgment
    groups). Diversity measures read other qrels and cannot be mixed with the rest.
    ``rel_format`` is one :class:`fasteval.options.EvalOptions` accepts (checked there).
    """
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
    if "histogram" in groups:  # per-run statistics
        msg = (
            f"{', '.join(dict.fromkeys(n.upper() for n in groups['histogram']))} are not "
            "per-query measures of evaluate()"
            "\n  hint: fasteval.histogram_analysis (CLI: fasteval hsa) computes them"
        )
        raise MeasureError(msg)
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
    return Request(mset, ric="ric" in groups)
