"""The measures catalogue, generated from fasteval's measure registry (never typed by hand).

Every row comes from the code: the trec_eval families and their one-line
definitions from :mod:`fasteval.measures.registry`, the ir_measures names from
its ``IR_MEASURES`` table and :mod:`fasteval.measures.ir_measures_names`, the
diversity measures from :mod:`fasteval.measures.diversity` with their
definitions from :mod:`fasteval.engine.diversity`'s docstring, and RIC, HSA / DO
and the content measures from the docstrings of the modules that compute them.
A family the generator cannot describe stops the build.
"""

from __future__ import annotations

import html
import inspect
import re

from fasteval.analysis import hsa, information
from fasteval.engine import diversity as diversity_engine
from fasteval.measures import diversity, registry
from fasteval.measures.content import ContentMeasure
from fasteval.measures.ir_measures_names import ALIASES

_YEAR_PAREN = re.compile(r"\s*\((?P<cite>[^()]*\b(?:19|20)\d\d[^()]*)\)\.?\s*$")


def md_inline(text: str) -> str:
    """reStructuredText inline markup -> Markdown inline code, for a table cell."""
    text = re.sub(r":(?:math|func|class|mod|data|meth|attr):`([^`]*)`", r"`\1`", text)
    text = text.replace("``", "`")
    text = " ".join(text.split())
    # a `|` ends a table cell: escape it outside code spans, and write code spans
    # that hold one as HTML (an escaped `\\|` in a code span would show its backslash)
    out = []
    for part in re.split(r"(`[^`]*`)", text):
        is_code = part.startswith("`") and part.endswith("`") and len(part) > 1
        if is_code and "|" in part:
            out.append(f"<code>{html.escape(part[1:-1]).replace('|', '&#124;')}</code>")
        elif is_code:
            out.append(part)
        else:
            out.append(part.replace("|", "\\|"))
    return "".join(out)


def split_citation(doc: str) -> tuple[str, str]:
    """A registry line ``definition (Author Year).`` -> (definition, citation)."""
    m = _YEAR_PAREN.search(doc)
    if not m:
        return doc.strip(), ""
    return doc[: m.start()].strip().rstrip(".") + ".", m["cite"].strip()


def _bullets(doc: str) -> list[str]:
    """The ``* item`` bullets of a docstring, each joined into one line."""
    out: list[str] = []
    current: list[str] | None = None
    for raw in inspect.cleandoc(doc).splitlines():
        line = raw.strip()
        if line.startswith("* "):
            if current is not None:
                out.append(" ".join(current))
            current = [line[2:]]
        elif current is not None and line and raw.startswith(" "):
            current.append(line)
        else:
            if current is not None:
                out.append(" ".join(current))
            current = None
    if current is not None:
        out.append(" ".join(current))
    return out


def _references(doc: str) -> str:
    """The numpydoc ``References`` section of a docstring, on one line."""
    text = inspect.cleandoc(doc)
    m = re.search(r"References\n-+\n(?P<body>.*?)(?:\n\n|\Z)", text, re.S)
    return " ".join(m["body"].split()) if m else ""


def _ir_measures_names() -> dict[str, list[str]]:
    alias_of: dict[str, list[str]] = {}
    for alias, name in ALIASES.items():
        alias_of.setdefault(name, []).append(alias)
    out: dict[str, list[str]] = {}
    for name, (cut_family, whole_family) in registry.IR_MEASURES.items():
        shown = name + "".join(f" / {a}" for a in alias_of.get(name, []))
        if whole_family is not None:
            out.setdefault(whole_family, []).append(f"`{name}`")
        if cut_family is not None:
            out.setdefault(cut_family, []).append(f"`{name}@k`")
        if shown != name:
            for fam in {cut_family, whole_family} - {None}:
                aliases = ", ".join(f"`{a}`" for a in alias_of[name])
                out[fam].append(f"(alias {aliases})")
    return out


def _parameters(fam: object) -> str:
    kind = fam.kind  # type: ignore[attr-defined]
    defaults = fam.defaults  # type: ignore[attr-defined]
    shown = ",".join(f"{d:g}" for d in defaults)
    if kind == "cutoffs":
        return f"cutoff k (default {shown})"
    if kind == "levels":
        return f"recall levels (default {shown})"
    if kind == "list":
        return f"parameter list (default {shown})" if defaults else "parameter list"
    if kind == "gains":
        return "`grade=gain` pairs" + (f" (default {shown})" if defaults else "")
    return ""


def ranking_table() -> str:
    """trec_eval's families (and fasteval's additions), one row each, in trec_eval's order."""
    irm = _ir_measures_names()
    order = [f for f in registry.TREC_ORDER if f in registry.FAMILIES]
    order += [f for f in registry.FAMILIES if f not in registry.TREC_ORDER]
    rows = [
        "| trec_eval name | ir_measures name | parameters | over queries | definition | citation |",
        "|---|---|---|---|---|---|",
    ]
    for name in order:
        fam = registry.FAMILIES[name]
        if not fam.doc.strip():
            msg = f"measure family {name!r} has no description in the registry"
            raise ValueError(msg)
        definition, cite = split_citation(fam.doc)
        if name in registry.V10_ONLY:
            definition += " trec_eval 10 only (left out of nicknames under `--compat 9`)."
        agg = {
            "mean": "mean",
            "sum": "sum",
            "gm": "geometric mean",
            "count": "count",
            "defined": "mean where defined",
            "none": "—",
        }[fam.aggregate]
        if not fam.per_query:
            agg += " (no per-query value)"
        if fam.text:
            agg = "per query only (text)"
        rows.append(
            f"| `{name}` | {' '.join(irm.get(name, [])) or '—'} | {_parameters(fam)} | {agg} "
            f"| {md_inline(definition)} | {md_inline(cite) or '—'} |"
        )
    return "\n".join(rows)


def diversity_table() -> str:
    """ndeval's measures: name, ndeval's spelling, cutoff, definition, citation."""
    doc = diversity_engine.__doc__ or ""
    bullets = _bullets(doc)
    cite_m = re.search(r"Measures \((?P<cite>[^)]*)\)", " ".join(doc.split()))
    cite = cite_m["cite"] if cite_m else ""
    rows = [
        "| fasteval name | ndeval name | cutoff | definition |",
        "|---|---|---|---|",
    ]
    for name, (_, takes_cutoff, ndeval_name) in diversity.FAMILIES.items():
        pattern = re.compile(rf"``{re.escape(name)}(?:@k)?``")
        found = [b for b in bullets if pattern.search(b)]
        if not found:
            msg = f"no definition of the diversity measure {name!r} in fasteval.engine.diversity"
            raise ValueError(msg)
        cutoff = (
            f"k (bare name: {', '.join(map(str, diversity.DEFAULT_CUTOFFS))})"
            if takes_cutoff
            else "—"
        )
        rows.append(f"| `{name}` | `{ndeval_name}` | {cutoff} | {md_inline(found[0])} |")
    return "\n".join(rows) + f"\n\nCitations: {md_inline(cite)}."


def other_table() -> str:
    """RIC, HSA / DO and the content measures, from the modules that compute them."""
    rows = ["| name | definition | citation |", "|---|---|---|"]
    info = [b for b in _bullets(information.__doc__ or "") if b.startswith("RIC")]
    hsa_bullets = _bullets(hsa.__doc__ or "")
    do = [b for b in hsa_bullets if "DO =" in b]
    slope = [b for b in hsa_bullets if b.startswith("HSA")]
    content_doc = inspect.cleandoc(ContentMeasure.__doc__ or "")
    families = re.search(r"Families\n-+\n(?P<body>.*?)\n\n(?=\S)", content_doc + "\n\n", re.S)
    if not (info and do and slope and families):
        msg = "the definitions of RIC, DO, HSA or the content measures moved out of the docstrings"
        raise ValueError(msg)
    rows.append(
        f"| `RIC` | {md_inline(info[0])} | {md_inline(_references(information.__doc__ or ''))} |"
    )
    hsa_cite = md_inline(_references(hsa.__doc__ or ""))
    rows.append(f"| `DO` | {md_inline(do[0])} | {hsa_cite} |")
    rows.append(f"| `HSA` | {md_inline(slope[0])} | {hsa_cite} |")
    entries = re.findall(r"^``(?P<name>[^`]+)``\n(?P<body>(?:    .*\n?)+)", families["body"], re.M)
    if not entries:
        msg = "no content measure in ContentMeasure's docstring"
        raise ValueError(msg)
    content_cite = md_inline(_references(ContentMeasure.__doc__ or ""))
    for name, body in entries:
        rows.append(f"| `{name}` | {md_inline(body)} | {content_cite} |")
    return "\n".join(rows)


def nicknames_table() -> str:
    """trec_eval's nicknames and the families each stands for."""
    rows = ["| nickname | families |", "|---|---|"]
    for nick, families in registry.NICKNAMES.items():
        rows.append(f"| `{nick}` | {', '.join(f'`{f}`' for f in families)} |")
    return "\n".join(rows)


SECTIONS = {
    "ranking": ranking_table,
    "diversity": diversity_table,
    "other": other_table,
    "nicknames": nicknames_table,
}
_PLACEHOLDER = re.compile(r"<!--\s*catalogue:\s*(?P<name>[a-z]+)\s*-->")


def fill(markdown: str) -> str:
    """Replace each ``<!-- catalogue: NAME -->`` in a page by the generated table."""
    return _PLACEHOLDER.sub(lambda m: SECTIONS[m["name"]](), markdown)
