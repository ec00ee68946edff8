"""The documentation site: built strictly, complete, generated from the code, for users.

``mkdocs build --strict`` runs when the ``docs`` extra is installed (it is part of
the ``test`` extra): a broken link, a missing page, a docstring that does not
render or a page pointing to an internal document fails it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.docs._support import DOCS, REPO, benchmark_plots, catalogue, headline, pages

README_MAX_LINES = 150


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with ``mkdocs build --strict``."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    pytest.importorskip("mkdocs_click")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "-f",
            "mkdocs.yml",
            "-d",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _ids(html: str) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', html))


def test_every_public_name_has_an_api_entry(site: Path) -> None:
    import fasteval

    ids = _ids((site / "reference" / "api" / "index.html").read_text())
    missing = [n for n in fasteval.__all__ if not any(i.endswith(f".{n}") for i in ids)]
    assert not missing


def _commands(group: click.Group, prefix: str) -> list[str]:
    out = []
    for name, cmd in group.commands.items():
        out.append(f"{prefix}-{name}")
        if isinstance(cmd, click.Group):
            out += _commands(cmd, f"{prefix}-{name}")
    return out


def test_every_command_has_a_cli_entry(site: Path) -> None:
    from fasteval.cli import main

    ids = _ids((site / "reference" / "cli" / "index.html").read_text())
    commands = _commands(main, "fasteval")
    assert len(commands) >= 15
    assert not [c for c in commands if c not in ids]


def test_the_catalogue_lists_every_measure_family() -> None:
    from fasteval.measures import diversity
    from fasteval.measures.registry import FAMILIES, IR_MEASURES

    ranking = catalogue.ranking_table()
    for fam in FAMILIES:
        assert f"| `{fam}` |" in ranking
    for name, (cut, whole) in IR_MEASURES.items():
        if whole:
            assert f"`{name}`" in ranking
        if cut:
            assert f"`{name}@k`" in ranking
    div = catalogue.diversity_table()
    for fam, (_, _, ndeval_name) in diversity.FAMILIES.items():
        assert f"| `{fam}` | `{ndeval_name}` |" in div
    other = catalogue.other_table()
    for name in ("RIC", "DO", "HSA", "LMJS@k", "LMKL@k", "LMJS_IA@k"):
        assert f"| `{name}` |" in other
    # every row has a definition
    for table in (ranking, div, other):
        for row in table.splitlines()[2:]:
            if row.startswith("|"):
                cells = [c.strip() for c in row.strip("|").split("|")]
                assert all(len(c) > 0 for c in cells[:1]) and len(max(cells, key=len)) > 20


def test_citations_are_split_from_definitions() -> None:
    text, cite = catalogue.split_citation("Average precision over R (Buckley & Voorhees 2005).")
    assert (text, cite) == ("Average precision over R.", "Buckley & Voorhees 2005")
    assert catalogue.split_citation("No citation here.") == ("No citation here.", "")


def test_benchmark_numbers_come_from_the_results(tmp_path: Path) -> None:
    res = benchmark_plots.parse_results(REPO / "benchmarks" / "RESULTS.md")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", res.date)
    assert all(c.startswith(("python benchmarks/", "TREC_EVAL=")) for c in res.commands)
    assert res.rows and all("fasteval" in tools for tools in res.rows.values())
    table = benchmark_plots.table_markdown(res)
    for tools in res.rows.values():
        fe = tools["fasteval"]["wall"]
        for tool, t in tools.items():
            if tool != "fasteval":
                assert f"{t['wall']:.2f} s ({t['wall'] / fe:.1f}x)" in table
    assert benchmark_plots.plot_png(res)[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_changed_results_table_changes_the_page(tmp_path: Path) -> None:
    text = (REPO / "benchmarks" / "RESULTS.md").read_text()
    changed = re.sub(
        r"\| trec8-text \| ([\d,]+) \| fasteval \| [\d.]+ \|",
        r"| trec8-text | \1 | fasteval | 1.00 |",
        text,
    )
    assert changed != text
    (tmp_path / "RESULTS.md").write_text(changed)
    res = benchmark_plots.parse_results(tmp_path / "RESULTS.md")
    assert res.rows["trec8-text"]["fasteval"]["wall"] == 1.0


def test_readme_is_a_front_page() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES


def test_readme_and_home_page_show_the_recorded_headline_numbers() -> None:
    """Both pages' headline blocks are scripts/headline.py's rendering of RESULTS.md."""
    for page, text in headline.pages_now().items():
        assert page.read_text() == text, f"{page.name}: run python scripts/headline.py"
    blocks = [headline.BLOCK.search(p.read_text()).group(0) for p in headline.PAGES]
    tables = [[ln.strip() for ln in b.splitlines() if ln.strip().startswith("|")] for b in blocks]
    assert tables[0] == tables[1] and len(tables[0]) >= 5  # the same numbers on both
    rows, _ = headline.read_source()
    shown = headline._shown(rows[0].cells["fasteval"])  # as rendered (1.78 s -> 1.8 s)
    assert f"| {shown} |" in tables[0][2]


def test_a_changed_headline_row_changes_both_pages(tmp_path: Path) -> None:
    text = (REPO / "benchmarks" / "RESULTS.md").read_text()
    changed = re.sub(r"(\| TREC-8, 129 runs[^|]*\| )[\d.]+ s", r"\g<1>0.50 s", text, count=1)
    assert changed != text
    (tmp_path / "RESULTS.md").write_text(changed)
    for page, new in headline.pages_now(tmp_path / "RESULTS.md").items():
        assert new != page.read_text() and "| 0.50 s |" in new


# words that belong to the project's own notes, not to a user's page
_INTERNAL = re.compile(
    r"\bSPEC\b|\.ci/|this project's|\bissue \d+|\b[0-9a-f]{7,40}\b(?<![0-9]{7})|2-core machine",
)


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_pages_hold_no_internal_notes(page: Path) -> None:
    text = re.sub(r"<!--.*?-->", "", page.read_text(), flags=re.S)  # not shown to readers
    hits = [m.group(0) for m in _INTERNAL.finditer(text)]
    assert not hits, f"{page.relative_to(REPO)}: {hits}"


def test_the_docs_folder_holds_only_pages_images_and_hooks() -> None:
    odd = [
        p
        for p in DOCS.rglob("*")
        if p.is_file()
        and p.suffix not in {".md", ".png", ".svg", ".css"}
        and "hooks" not in p.parts
        and "__pycache__" not in p.parts
    ]
    assert not odd


# ------------------------------------------------------------------ what a reader meets (issue 47)

_RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|math):(?:<code>|`)")


def test_no_page_shows_a_raw_sphinx_role(site: Path) -> None:
    raw = {
        str(p.relative_to(site)): len(_RAW_ROLE.findall(p.read_text()))
        for p in site.rglob("*.html")
        if _RAW_ROLE.search(p.read_text())
    }
    assert not raw
    api = (site / "reference" / "api" / "index.html").read_text()
    assert '<a href="#fasteval.api.evaluate"><code>fasteval.evaluate</code></a>' in api


def _imports(page: Path) -> list[str]:
    """``fasteval.x.y.name`` for each ``from fasteval.x.y import name`` of a page's code."""
    out = []
    for m in re.finditer(r"^from (fasteval[\w.]*) import ([\w, ]+)", page.read_text(), re.M):
        names = [n.strip().split(" as ")[0] for n in m[2].split(",")]
        out += [f"{m[1]}.{n}" for n in names if n]
    return out


def test_every_name_the_guides_import_has_an_api_entry(site: Path) -> None:
    ids = _ids((site / "reference" / "api" / "index.html").read_text())
    used = {name for page in pages() if "contributing" not in page.parts for name in _imports(page)}
    assert "fasteval.analysis.hsa.sample_judgments" in used  # the guides do import these
    import fasteval

    def documented(name: str) -> bool:
        head, _, last = name.rpartition(".")
        if head == "fasteval" and last in fasteval.__all__:  # a re-export: where it is defined
            return any(i.endswith(f".{last}") for i in ids)
        return name in ids or any(i.startswith(name + ".") for i in ids)

    assert not sorted(n for n in used if not documented(n))
    for name in ("fasteval.studies", "fasteval.analysis.meta.discriminative_power"):
        assert name in ids


def test_the_ir_measures_provider_has_its_page(site: Path) -> None:
    page = (site / "ir-measures" / "index.html").read_text()
    assert "use_fasteval" in page and "PyTerrier" in page
    nav = (site / "index.html").read_text()
    assert "ir-measures/" in nav
    ids = _ids((site / "reference" / "api" / "index.html").read_text())
    assert "fasteval.ir_measures_provider.use_fasteval" in ids


def test_the_catalogue_takes_the_whole_width(site: Path) -> None:
    page = (site / "measures" / "index.html").read_text()
    assert 'class="fe-catalogue"' in page and "stylesheets/catalogue.css" in page
    css = (site / "stylesheets" / "catalogue.css").read_text()
    assert ".md-grid:has(.fe-catalogue)" in css and "max-width: none" in css
