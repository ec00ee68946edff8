"""ir_measures measure objects, aliases and parameters -> fasteval measure strings.

The parser (:mod:`fasteval.measures.parser`) reads ir_measures strings (``AP``,
``nDCG@10``, ``P(rel=2)@5``); :func:`canonical` widens that to measure **objects**
(``ir_measures.nDCG@10``: ``str(measure)``), the **aliases** (``MAP``, ``MRR``,
``NDCG``, ``Recall``, ``Precision``, ``BPref``, ``RPrec``), the **parameters**
``judged_only=`` (``True``: trec_eval ``-J``, :func:`split_judged_only`), ``dcg='log2'``
(dropped), RBP's ``p=`` (``rbp.p=...``), ``NumRet(rel=N)`` (``NumRelRet``) and
``nDCG(dcg='exp-log2')`` (trec_eval ``ndcg`` with gains ``2^g - 1``; with a cutoff
gdeval's nDCG@k, ``ndcg_exp``), and ranx's names with a cutoff (``hits@k``,
``ndcg_burges@k``: the registry's ``ranx=``). Anything else passes unchanged, so the
parser's own message names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from fasteval.errors import MeasureError
from fasteval.measures.registry import FAMILIES

ALIASES = {
    "MAP": "AP",
    "MRR": "RR",
    "NDCG": "nDCG",
    "Recall": "R",
    "Precision": "P",
    "BPref": "Bpref",
    "RPrec": "Rprec",
}
# ranx's names of the families that have one (the registry's ``ranx=``), with their @k
RANX_NAMES = {f.ranx: f.name for f in FAMILIES.values() if f.ranx}
_RANX = re.compile(rf"^(?P<name>{'|'.join(RANX_NAMES)})@(?P<cut>[0-9]+)$")
IRM_FORM = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9]*)(?:\((?P<args>[^)]*)\))?(?:@(?P<cut>[0-9]*\.?[0-9]+))?$"
)
"""An ir_measures string: ``name``, ``(args)``, ``@cut``."""
# grades 1..EXP_GRADES get gain 2^g - 1 under dcg='exp-log2'
EXP_GRADES = 10


def name_values(text: str, arg: str) -> dict[str, str]:
    """``rel=2, dcg='log2'`` -> ``{"rel": "2", "dcg": "log2"}`` (``arg``: the name, for errors)."""
    out: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, eq, val = item.partition("=")
        if not eq:
            msg = f"measure {arg!r}: parameter {item!r} is not of the form name=value"
            raise MeasureError(msg)
        out[key.strip()] = val.strip().strip("'\"")
    return out


def params(text: str | None, allowed: tuple[str, ...], arg: str) -> dict[str, str]:
    """The ``name=value`` parameters of an ir_measures string, each one of ``allowed``."""
    given = name_values(text or "", arg)
    bad = [f"{k}={v}" for k, v in given.items() if k not in allowed]
    if bad:
        msg = (
            f"measure {arg!r}: parameter {bad[0]!r} is not supported "
            f"(supported: {', '.join(f'{k}=' for k in allowed)})"
        )
        raise MeasureError(msg)
    return given


def param_value(key: str, text: str, arg: str) -> float:
    """A parameter's value (``True``: 1), checked: ``rel``, ``min_rel``, ``max_rel`` whole,
    ``p`` in (0, 1), ``beta`` not negative."""
    if text in ("True", "False"):
        return 1.0 if text == "True" else 0.0
    whole = key in ("min_rel", "max_rel", "rel")
    try:
        v = float(text)
    except ValueError:
        msg = (
            f"measure {arg!r}: {key} must be {'an integer' if whole else 'a number'}, got {text!r}"
        )
        raise MeasureError(msg) from None
    if whole and v != int(v):
        msg = f"measure {arg!r}: {key} must be an integer, got {text}"
        raise MeasureError(msg)
    if key == "p" and not 0.0 < v < 1.0:
        msg = f"measure {arg!r}: persistence p must be in (0, 1), got {text}"
        raise MeasureError(msg)
    if key == "beta" and v < 0.0:
        msg = f"measure {arg!r}: beta must not be negative, got {text}"
        raise MeasureError(msg)
    return v


def canonical(measure: Any) -> str:
    """The fasteval string for a measure name or an ir_measures measure object."""
    s = measure if isinstance(measure, str) else str(measure)
    s = s.strip()
    if not isinstance(measure, str) and getattr(measure, "NAME", None) == "RBP":
        # ir_measures leaves its default p (0.8, not trec_eval's 0.9) out of str()
        given = dict(getattr(measure, "params", {}))
        cut = given.pop("cutoff", None)
        s = _format("RBP", {"p": measure["p"], **given}, None if cut is None else str(cut))
    r = _RANX.match(s)
    if r:
        return f"{RANX_NAMES[r['name']]}.{r['cut']}"
    m = IRM_FORM.match(s)
    if not m or (m["name"] not in ALIASES and m["args"] is None):
        return ALIASES.get(s, s)
    name = ALIASES.get(m["name"], m["name"])
    args = name_values(m["args"] or "", s)
    cut = m["cut"]
    if args.get("judged_only", "False") == "False":
        args.pop("judged_only", None)
    if args.get("dcg") == "log2":
        args.pop("dcg")
    if name == "RBP" and "rel" in args:  # binary gains: the parser's C/W/L branch
        return s
    if name == "RBP" and "p" in args:
        p = args.pop("p")
        if args or cut:
            msg = f"measure {s!r}: RBP takes p= alone here (as trec_eval's rbp.p=...)"
            raise MeasureError(msg)
        return f"rbp.p={p}"
    if name == "nDCG" and args.get("dcg") == "exp-log2":
        args.pop("dcg")
        if args:
            msg = f"measure {s!r}: dcg='exp-log2' takes no other parameters"
            raise MeasureError(msg)
        if cut is not None:  # gdeval's nDCG@k
            return f"ndcg_exp.{cut}"
        gains = ",".join(f"{g}={2**g - 1}" for g in range(1, EXP_GRADES + 1))
        return f"ndcg.{gains}"
    if name == "SetP" and "relative" in args and args.pop("relative") == "True":
        name = "SetRelP"
    if name == "NumRet" and "rel" in args:
        name = "NumRelRet"
        if args["rel"] == "1":
            args.pop("rel")
    return _format(name, args, cut)


def _format(name: str, args: dict[str, Any], cut: str | None) -> str:
    """``name(k=v,...)@cut``, without the parentheses when there are no ``args``."""
    inner = ",".join(f"{k}={v}" for k, v in args.items())
    return name + (f"({inner})" if inner else "") + (f"@{cut}" if cut is not None else "")


def split_judged_only(names: Iterable[str]) -> tuple[list[str], bool]:
    """The ir_measures strings without ``judged_only=``, and whether it was ``True``: for
    all or none of them (trec_eval ``-J`` applies to a whole evaluation in fasteval)."""
    names = list(names)
    out: list[str] = []
    flags: list[bool] = []
    for n in names:
        m = IRM_FORM.match(n)
        if m and m["args"] is not None and "judged_only" in m["args"]:
            args = name_values(m["args"], n)
            flags.append(args.pop("judged_only", "False") == "True")
            out.append(_format(m["name"], args, m["cut"]))
        else:
            flags.append(False)
            out.append(n)
    if any(flags) and not all(flags):
        mixed = [n for n, f in zip(names, flags, strict=False) if f]
        msg = (
            f"judged_only=True is set for {mixed} but not for every measure; "
            "fasteval applies it (trec_eval -J) to a whole evaluation: evaluate those separately"
        )
        raise MeasureError(msg)
    return out, bool(flags) and all(flags)


def normalise_measures(measures: Any) -> tuple[list[str], bool]:
    """A measure argument of ``evaluate`` (a name, an object, or a list of them) as strings,
    and whether ``judged_only=True`` was asked (:func:`split_judged_only`). A name keeps
    the spelling asked for (``MAP``: the parser reads aliases); an object becomes its
    fasteval string (:func:`canonical`)."""
    items = (
        [measures]
        if isinstance(measures, str) or not isinstance(measures, Iterable)
        else list(measures)
    )
    if not items and not isinstance(measures, (list, tuple)):
        items = [measures]
    return split_judged_only(m.strip() if isinstance(m, str) else canonical(m) for m in items)
