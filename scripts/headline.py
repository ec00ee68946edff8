"""The headline numbers of the README and the documentation's home page, from RESULTS.md.

``benchmarks/RESULTS.md`` holds one small table, between ``<!-- headline:source -->``
and ``<!-- headline:source-end -->``: a workload per row, each tool's time (and
fasteval's memory where it matters), and where in RESULTS.md the row was copied
from. This script renders it into the block between ``<!-- headline:start -->`` and
``<!-- headline:end -->`` of ``README.md`` and ``docs/index.md``, so the two pages
show the same numbers, and those are the recorded ones::

    python scripts/headline.py           # rewrite the two blocks
    python scripts/headline.py --check   # exit 1 if a page disagrees with RESULTS.md

To change a headline number, edit the source table's row (or replace a row with
one from another section, e.g. a fresh install), then run the script.
``tests/docs/test_docs_site.py`` fails while a page disagrees.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
# each page, and how it links to the benchmarks page
PAGES = {ROOT / "README.md": "docs/benchmarks.md", ROOT / "docs" / "index.md": "benchmarks.md"}
SOURCE = re.compile(r"<!-- headline:source -->\n(?P<body>.*?)<!-- headline:source-end -->", re.S)
BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)<!-- headline:start -->\n.*?^[ \t]*<!-- headline:end -->",
    re.S | re.M,
)
TOOLS = ("fasteval", "pytrec_eval", "trec_eval")


@dataclass(frozen=True)
class Row:
    """One headline: a workload and each tool's cell (``"0.96 s"``, ``"7.53 s, 322 MB"``)."""

    workload: str
    cells: dict[str, str]


def _seconds(cell: str) -> float | None:
    m = re.match(r"\s*([\d.]+)\s*s\b", cell)
    return float(m.group(1)) if m else None


def read_source(path: Path = RESULTS) -> tuple[list[Row], str]:
    """The source table's rows, and the note under it (one line, may be empty)."""
    m = SOURCE.search(path.read_text())
    if m is None:
        msg = f"{path}: no <!-- headline:source --> ... <!-- headline:source-end --> table"
        raise ValueError(msg)
    lines = [ln.strip() for ln in m["body"].strip().splitlines()]
    table = [ln for ln in lines if ln.startswith("|")]
    note = " ".join(ln for ln in lines if ln and not ln.startswith("|"))
    header = [c.strip() for c in table[0].strip("|").split("|")]
    col = {name: i for i, name in enumerate(header)}
    missing = [t for t in ("workload", *TOOLS) if t not in col]
    if missing:
        msg = f"{path}: the headline table lacks the column(s) {', '.join(missing)}"
        raise ValueError(msg)
    rows = []
    for ln in table[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows.append(Row(cells[col["workload"]], {t: cells[col[t]] for t in TOOLS}))
    return rows, note


def _shown(cell: str) -> str:
    """``104.93 s`` -> ``105 s``, ``5.74 s`` -> ``5.7 s``, ``0.36 s`` stays: a headline's digits."""

    def one(m: re.Match[str]) -> str:
        x = float(m.group(1))
        return f"{x:.0f} s" if x >= 100 else f"{x:.1f} s" if x >= 1 else f"{x:.2f} s"

    return re.sub(r"([\d.]+) s\b", one, cell)


def render(rows: list[Row], note: str, link: str) -> str:
    """The block a page shows: the table (times with their ratio to fasteval), the note."""
    out = ["| workload | fasteval | pytrec_eval | trec_eval |", "|---|---:|---:|---:|"]
    for r in rows:
        fe = _seconds(r.cells["fasteval"])
        shown = [_shown(r.cells["fasteval"])]
        for tool in TOOLS[1:]:
            t = _seconds(r.cells[tool])
            ratio = f" ({t / fe:.1f}x)" if t is not None and fe and t > fe else ""
            shown.append(_shown(r.cells[tool]) + ratio)
        out.append(f"| {r.workload} | " + " | ".join(shown) + " |")
    out.append("")
    text = f"{note} " if note else ""
    out.append(f"{text}Full tables, commands and dates: [Benchmarks]({link}).")
    return "\n".join(out)


def fill(page: str, block: str) -> str:
    """``page`` with its headline block replaced by ``block`` (at the block's indentation)."""
    m = BLOCK.search(page)
    if m is None:
        msg = "no <!-- headline:start --> ... <!-- headline:end --> block"
        raise ValueError(msg)
    ind = m["indent"]
    lines = ["<!-- headline:start -->", *block.splitlines(), "<!-- headline:end -->"]
    body = "\n".join(ind + ln if ln else "" for ln in lines)
    return page[: m.start()] + body + page[m.end() :]


def pages_now(results: Path = RESULTS) -> dict[Path, str]:
    """Each page's text as the source table says it should be."""
    rows, note = read_source(results)
    return {p: fill(p.read_text(), render(rows, note, link)) for p, link in PAGES.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check; exit 1 on a difference")
    args = ap.parse_args(argv)
    stale = []
    for page, text in pages_now().items():
        if page.read_text() != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(text)
    if args.check and stale:
        print(f"out of date: {', '.join(map(str, stale))}; run python scripts/headline.py")
        return 1
    for page in stale:
        print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
