"""Measures as immutable values, and the parser for their names.

Two syntaxes: trec_eval's ``-m`` arguments (``map``, ``P.5,10``, ``P_10``,
``iprec_at_recall..10,.20``, ``set_F.0.5``, the nicknames ``official``, ``all_trec``)
and ir_measures strings (``AP@100``, ``P(rel=2)@5``, ``nDCG@10``, ``RR``, ``IPrec@0.1``).
A measure's string form is its identity, in the syntax asked for (``P_10`` for
``P.10``, ``P@10`` for ``P@10``).

:func:`evaluator_of` is the one place that says which evaluator computes a name: the
catalogue, :func:`output_names` and the "did you mean" (:func:`unknown_measure_message`)
read it.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Literal

from fasteval.errors import MeasureError
from fasteval.measures import content, diversity, names_of
from fasteval.measures.family import Family
from fasteval.measures.ir_measures_names import ALIASES, IRM_FORM, canonical, param_value, params
from fasteval.measures.registry import FAMILIES, IR_MEASURES, NICKNAMES, TREC_ORDER, V10_ONLY

Evaluator = Literal["ranking", "diversity", "ric", "histogram", "content"]

RIC = "RIC"
HSA = "HSA"
DO = "DO"
HISTOGRAM_NAMES = (HSA, DO)


@dataclass(frozen=True)
class Measure:
    """One output column: a family with concrete parameters.

    Attributes
    ----------
    family
        trec_eval family name (see :data:`fasteval.measures.registry.FAMILIES`).
    params
        The parameters: a single cutoff or recall level, a parameter list
        (``11pt_avg``, ``set_F``), or ``()``.
    rel
        Relevance level for this measure only (ir_measures ``rel=``);
        ``None`` uses the evaluation's level.
    name
        The output name, which is also the identity.
    """

    family: str
    params: tuple[float, ...]
    rel: int | None
    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def info(self) -> Family:
        """The family's registry entry."""
        return FAMILIES[self.family]


class MeasureSet(list[Measure]):
    """Parsed measures, plus trec_eval's ``runid`` pseudo-measure flag."""

    runid: bool = False


_TREC_ARG = re.compile(r"^(?P<fam>[A-Za-z0-9_]+?)(?:\.(?P<params>.*))?$")
# the printed form name_value (P_10, iprec_at_recall_0.10) of the cutoff and level families
_NAME_VALUE = sorted((n for n, f in FAMILIES.items() if f.kind in ("cutoffs", "levels")), key=len)
_TREC_OUT = re.compile(rf"^(?P<fam>{'|'.join(reversed(_NAME_VALUE))})_(?P<params>\d+(?:\.\d+)?)$")


def _float(text: str, msg: str) -> float:
    """``text`` as a number, else a :class:`MeasureError` saying ``msg``."""
    try:
        return float(text)
    except ValueError:
        raise MeasureError(msg) from None


def _cutoff(text: str, arg: str) -> float:
    # trec_eval reads cutoffs with atol: 23.4 -> 23
    k = int(_float(text, f"measure {arg!r}: cutoff {text!r} is not a number"))
    if k <= 0:
        msg = f"measure {arg!r}: cutoffs must be positive, got {text!r}"
        raise MeasureError(msg)
    return float(k)


def _level(text: str, arg: str, upper: float = 1.0) -> float:
    v = _float(text, f"measure {arg!r}: recall level {text!r} is not a number")
    if upper == math.inf and v < 0.0:
        msg = f"measure {arg!r}: multiple {text!r} must not be negative"
        raise MeasureError(msg)
    if not 0.0 <= v <= upper:
        msg = f"measure {arg!r}: recall level {text!r} must be in [0, 1]"
        raise MeasureError(msg)
    return v


def _expand_family(fam: Family, params_text: str | None, arg: str) -> list[Measure]:
    if fam.kind == "single":
        if params_text:
            msg = f"measure {arg!r}: {fam.name} takes no parameters"
            raise MeasureError(msg)
        return [Measure(fam.name, (), None, fam.name)]
    raw = params_text.split(",") if params_text else None
    if fam.kind == "cutoffs":
        vals = sorted({_cutoff(p, arg) for p in raw}) if raw else list(fam.defaults)
        return [Measure(fam.name, (v,), None, f"{fam.name}_{int(v)}") for v in vals]
    if fam.kind == "levels":
        upper = math.inf if fam.name.startswith("Rprec_mult") else 1.0
        vals = sorted({_level(p, arg, upper) for p in raw}) if raw else list(fam.defaults)
        return [Measure(fam.name, (v,), None, f"{fam.name}_{v:.2f}") for v in vals]
    if fam.kind == "gains":
        gains = _gain_params(fam, params_text or "", arg)
        name = f"{fam.name}_{params_text}" if params_text else fam.name
        return [Measure(fam.name, gains, None, name)]
    # "list": one value from a parameter list
    if raw is None:
        return [Measure(fam.name, fam.defaults, None, fam.name)]
    nums: tuple[float, ...]
    if fam.name == "11pt_avg":
        nums = tuple(sorted(_level(p, arg) for p in raw))
    else:
        msg = f"measure {arg!r}: parameter {params_text!r} is not a number list"
        nums = tuple(_float(p, msg) for p in raw)
        if fam.name == "set_F" and (len(nums) != 1 or nums[0] < 0):
            msg = f"measure {arg!r}: set_F takes one non-negative parameter"
            raise MeasureError(msg)
        if fam.name == "relstring" and (len(nums) != 1 or not 0 <= nums[0] < 2**31):
            msg = f"measure {arg!r}: relstring takes one length N >= 0, got {params_text!r}"
            raise MeasureError(msg)
        if fam.name == "utility" and len(nums) != 4:
            msg = f"measure {arg!r}: utility takes 4 coefficients p1,p2,p3,p4, got {len(nums)}"
            raise MeasureError(msg)
    return [Measure(fam.name, nums, None, f"{fam.name}_{params_text}")]


def _gain_params(fam: Family, text: str, arg: str) -> tuple[float, ...]:
    """``name=value`` pairs -> ``(p, level1, gain1, level2, gain2, ...)``.

    Integer names are grade -> gain maps (trec_eval's ``setup_gains``); ``p``
    is rbp's persistence (default 0.9); other names are ignored, as trec_eval
    does.
    """
    p = 0.9
    pairs: list[float] = []
    for item in filter(None, text.split(",")):
        name, eq, value = item.partition("=")
        msg = f"measure {arg!r}: parameter {item!r} is not of the form name=number"
        v = _float(value, msg) if eq else math.nan
        if math.isnan(v):
            raise MeasureError(msg)
        if name == "p":
            if not 0.0 < v < 1.0 and fam.name.startswith("rbp"):
                msg = f"measure {arg!r}: rbp persistence p must be in (0, 1), got {value}"
                raise MeasureError(msg)
            p = v
        elif re.fullmatch(r"[+-]?\d+", name):  # a grade
            pairs += [float(int(name)), v]
    return (p, *pairs)


def _parse_trec(arg: str) -> list[Measure] | None:
    m = _TREC_OUT.match(arg) or _TREC_ARG.match(arg)
    if m and m["fam"] in FAMILIES:
        return _expand_family(FAMILIES[m["fam"]], m["params"], arg)
    return None


# ir_measures parameters (besides rel=) of list-kind families, in the order of their params
_IRM_PARAMS: dict[str, tuple[str, ...]] = {"SetF": ("beta",), "Compat": ("p", "normalize")}


def _parse_cwl(fam: Family, name: str, args: str | None, k: float, arg: str) -> Measure:
    """A C/W/L measure (``INST(T=2, max_rel=3)``, ``BPM(T=1, max_rel=1)@20``,
    ``RBP(p=0.9, rel=1)``) as its family with params ``(T or p, min_rel, max_rel, k)``."""
    first = fam.cwl
    if name == "RBP":
        allowed: tuple[str, ...] = ("p", "rel")
    else:
        allowed = (*((first,) if first else ()), "min_rel", "max_rel")
        if name == "SDCG":
            allowed = (*allowed, "dcg")
    given = params(args, allowed, arg)
    if given.get("dcg", "log2") != "log2":
        msg = f"measure {arg!r}: SDCG takes dcg='log2' only"
        raise MeasureError(msg)
    values = {k: param_value(k, v, arg) for k, v in given.items() if k != "dcg"}
    a = values.get(first, fam.defaults[0]) if first else 0.0
    if name == "RBP":
        rel = values.get("rel", 1.0)
        return Measure(fam.name, (a, rel, rel, 0.0), None, arg)
    if "max_rel" not in values:
        msg = f"measure {arg!r}: {name} needs max_rel=, the largest grade (e.g. max_rel=3)"
        raise MeasureError(msg)
    lo, hi = values.get("min_rel", 0.0), values["max_rel"]
    if not lo < hi:
        msg = f"measure {arg!r}: min_rel must be less than max_rel, got {lo:g} and {hi:g}"
        raise MeasureError(msg)
    return Measure(fam.name, (a, lo, hi, k), None, arg)


def _parse_ir_measures(arg: str) -> Measure | None:
    m = IRM_FORM.match(arg)
    if not m or m["name"] not in IR_MEASURES:
        return None
    name, cut = m["name"], m["cut"]
    with_cut, without = IR_MEASURES[name]
    entry = FAMILIES[with_cut or without or ""]
    if name == "RBP" and "rel" in (m["args"] or ""):  # binary gains: cwl_eval's RBP
        entry = FAMILIES["rbp_bin"]
    if cut is not None and with_cut is None:
        msg = f"measure {arg!r}: {name} takes no @cutoff"
        raise MeasureError(msg)
    if cut is None and without is None:
        example = f"{name}(max_rel=1)@10" if entry.cwl is not None else f"{name}@10"
        msg = f"measure {arg!r}: {name} needs a cutoff, e.g. {example}"
        raise MeasureError(msg)
    fam = FAMILIES[(with_cut if cut is not None else without) or ""]
    k = (_level if fam.kind == "levels" else _cutoff)(cut, arg) if cut is not None else 0.0
    if entry.cwl is not None:
        return _parse_cwl(entry, name, m["args"], k, arg)
    names = _IRM_PARAMS.get(name, ())
    given = params(m["args"], ("rel", *names), arg)
    extra = {key: param_value(key, val, arg) for key, val in given.items()}
    rel = int(extra.pop("rel")) if "rel" in extra else None
    if cut is not None:
        return Measure(fam.name, (k,), rel, arg)
    base = _expand_family(fam, None, arg)[0].params
    values = (*(extra.get(n, v) for n, v in zip(names, base, strict=False)), *base[len(names) :])
    return Measure(fam.name, values, rel, arg)


def parse_measure(arg: str) -> list[Measure]:
    """Parse one measure argument into the measures it stands for.

    Parameters
    ----------
    arg
        A trec_eval ``-m`` argument (possibly a family with several cutoffs or a
        nickname) or an ir_measures string, ir_measures' aliases and
        parameters included (``MAP``, ``MRR@10``, ``NDCG@10``, ``Recall@100``,
        ``Precision@10``, ``BPref``, ``RPrec``, ``nDCG(dcg='exp-log2')``,
        ``RBP(p=0.8)``; see :mod:`fasteval.measures.ir_measures_names`).

    Returns
    -------
    list of Measure
        One entry per output column. A name that stands for one measure keeps
        the spelling asked for as its output name (``MAP`` stays ``MAP``,
        ``Recall@100`` stays ``Recall@100``).

    Raises
    ------
    MeasureError
        For an unknown name or a bad parameter.
    """
    arg = arg.strip()
    out = _parse_trec(arg)
    if out is not None:
        return out
    try:
        canon = canonical(arg)  # ir_measures aliases and parameters -> fasteval's own string
    except MeasureError:
        known = IRM_FORM.match(arg)
        if known and (known["name"] in IR_MEASURES or known["name"] in ALIASES):
            raise
        raise MeasureError(unknown_measure_message(arg)) from None
    try:
        out = _parse_trec(canon)
        if out is None:
            one = _parse_ir_measures(canon)
            out = [one] if one is not None else None
    except MeasureError as e:
        if canon == arg:
            raise
        msg = f"{e} (read {arg!r} as {canon!r})"
        raise MeasureError(msg) from None
    if out is None:
        raise MeasureError(unknown_measure_message(arg))
    # here arg is an ir_measures name or alias (a trec_eval one was read above)
    if len(out) != 1:  # "Precision" is not trec_eval's P family of 9 cutoffs
        msg = f"measure {arg!r}: {arg} needs a cutoff, e.g. {arg}@10"
        raise MeasureError(msg)
    return [replace(out[0], name=arg)]  # the ir_measures spelling asked for


def parse_measures(args: str | Sequence[str] | None, *, compat: int = 9) -> MeasureSet:
    """Parse a list of measure arguments, in trec_eval's output order, without repeats.

    ``None`` means trec_eval's default set, ``official``. Under ``compat=9`` the
    nicknames leave out trec_eval 10's families (rbp, rbp_resid, unj).
    """
    if args is None:
        args = ["official"]
    if isinstance(args, str):
        args = [args]
    result = MeasureSet()
    # trec_eval: "fam.params" sets the family's parameters, also for a family a
    # nickname marks (-m all_trec -m relstring.20 prints relstring_20 only)
    asked: set[str] = set()
    with_params: set[str] = set()
    for arg in args:
        a = arg.strip()
        if a in NICKNAMES or a == "runid":
            result.runid = True  # every nickname has runid
            for fam in NICKNAMES.get(a, []):
                if fam != "runid" and not (compat == 9 and fam in V10_ONLY):
                    result += _expand_family(FAMILIES[fam], None, a)
            continue
        tm = _TREC_ARG.match(a)
        if tm and tm["params"] and tm["fam"] in FAMILIES:
            with_params.add(tm["fam"])
        ms = parse_measure(a)
        asked.update(m.name for m in ms)
        result += ms
    first: dict[str, Measure] = {}
    for m in result:  # without repeats; a nickname's member of a family given parameters goes
        if m.name in asked or m.family not in with_params:
            first.setdefault(m.name, m)
    order = {f: i for i, f in enumerate(TREC_ORDER)}
    # stable: families in trec_eval order, parameters as parsed (already sorted)
    final = MeasureSet(sorted(first.values(), key=lambda m: order.get(m.family, len(order))))
    final.runid = result.runid
    if not final and not final.runid:
        msg = "no measures requested"
        raise MeasureError(msg)
    return final


def evaluator_of(name: str) -> Evaluator:
    """The evaluator that computes the measure ``name``: ``RIC``, ``HSA`` / ``DO`` (any
    case), diversity and content names have their own; every other name is a ranking
    measure (or a judgment-group or preference one, by the qrels)."""
    upper = name.strip().upper()
    if upper == RIC:
        return "ric"
    if upper in HISTOGRAM_NAMES:
        return "histogram"
    if diversity.is_diversity_measure(name):
        return "diversity"
    return "content" if content.is_content_measure(name) else "ranking"


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
        if ev in ("ric", "histogram"):  # RIC, HSA, DO in any case
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

    The name without its parameters is compared with :data:`KNOWN_NAMES`; the closest
    get ``arg``'s parameters, or where those are wrong (``AP@ten``) a cutoff of 10 or
    none. Every suggestion is a valid name (:func:`is_valid_name`).
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
