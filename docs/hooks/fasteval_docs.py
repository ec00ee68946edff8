"""MkDocs hooks: the pages that follow the code by themselves.

* ``<!-- catalogue: NAME -->``: a table of the measures catalogue, generated from
  the measure registry (:mod:`catalogue`).
* ``<!-- api-reference -->``: one mkdocstrings entry per name in ``fasteval.__all__``,
  grouped by the module that defines it, so a new public name gets its entry.
* ``<!-- benchmarks: table -->`` / ``<!-- benchmarks: setup -->``: the current
  side-by-side numbers, with their commands and date, read from
  ``benchmarks/RESULTS.md`` by ``scripts/benchmark_plots.py``, which also draws
  ``img/benchmarks.png``.
* ``<!-- figure: img/NAME.png -->`` before a Python block: the block is run at
  build time on the shipped sample data and the image it writes is put in the site.

A page that mentions the internal spec document fails the build.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import matplotlib
from mkdocs.structure.files import File

import fasteval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

matplotlib.use("Agg")

import catalogue  # noqa: E402
import docs_support  # noqa: E402

log = logging.getLogger("mkdocs.hooks.fasteval_docs")
_API = "<!-- api-reference -->"
_BENCH = re.compile(r"<!--\s*benchmarks:\s*(?P<what>[a-z]+)\s*-->")

# module -> section title of the API reference (modules not listed get their own name)
_SECTIONS = {
    "fasteval.api": "Evaluating",
    "fasteval.evaluator": "Evaluating",
    "fasteval.io.tables": "Reading qrels and runs",
    "fasteval.io.diversity": "Reading qrels and runs",
    "fasteval.engine.table": "Result tables",
    "fasteval.measures.parser": "Measures",
    "fasteval.comparison": "Comparing systems",
    "fasteval.analysis.comparison": "Comparing systems",
    "fasteval.analysis.report": "The evaluation report",
    "fasteval.engine.diversity": "Diversity (ndeval)",
    "fasteval.analysis.information": "Information-theoretic evaluation",
    "fasteval.analysis.correlation": "Information-theoretic evaluation",
    "fasteval.analysis.hsa": "Histogram analysis (DO, HSA)",
    "fasteval.analysis.fusion": "Fusion",
    "fasteval.errors": "Errors and warnings",
}


# what the guides use beyond fasteval.__all__: (section, entries); a module entry
# documents its public names. tests/docs/test_docs_site.py checks that every name a
# page imports from fasteval has an entry.
GUIDE_NAMES = [
    ("Reading qrels and runs", ["fasteval.io.tables.as_qrels", "fasteval.io.tables.as_run"]),
    ("Studies and meta-evaluation", ["fasteval.studies", "fasteval.analysis.meta"]),
    (
        "Histogram analysis (DO, HSA)",
        [
            "fasteval.analysis.hsa.histogram_analysis_scores",
            "fasteval.analysis.hsa.sample_judgments",
        ],
    ),
    (
        "Fusion",
        [
            "fasteval.analysis.fusion.prepare_fusion",
            "fasteval.analysis.fusion.upper_bound_study",
            "fasteval.analysis.fusion.upper_bound_summary",
            "fasteval.analysis.fusion.random_groups",
            "fasteval.analysis.fusion.fuse_groups",
        ],
    ),
    ("Content-based evaluation", ["fasteval.analysis.content.evaluate_content"]),
    ("Agreement between judgment sets", ["fasteval.analysis.agreement.simulate_assessor"]),
    ("ir_measures and PyTerrier", ["fasteval.ir_measures_provider"]),
    ("Evaluating on a Dask cluster", ["fasteval.distributed"]),
    (
        "Figures",
        [
            "fasteval.plots.compare",
            "fasteval.plots.studies",
            "fasteval.plots.report_html",
            "fasteval.plots.agreement",
        ],
    ),
]


def _benchmarks() -> Any:
    if "benchmark_plots" in sys.modules:
        return sys.modules["benchmark_plots"]
    spec = importlib.util.spec_from_file_location(
        "benchmark_plots", ROOT / "scripts" / "benchmark_plots.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmark_plots"] = module
    spec.loader.exec_module(module)
    return module


def api_reference() -> str:
    """``::: module.name`` for every public name, grouped by the module defining it."""
    groups: dict[str, list[str]] = {}
    for name in sorted(fasteval.__all__, key=str.lower):
        obj = getattr(fasteval, name)
        module = getattr(obj, "__module__", "fasteval")
        groups.setdefault(_SECTIONS.get(module, module), []).append(f"{module}.{name}")
    for title, paths in GUIDE_NAMES:
        groups.setdefault(title, []).extend(paths)
    order = [*dict.fromkeys([*_SECTIONS.values(), *(t for t, _ in GUIDE_NAMES)])]
    out: list[str] = []
    for title in sorted(groups, key=lambda t: (order.index(t) if t in order else len(order), t)):
        out.append(f"## {title}\n")
        out += [f"::: {path}\n" for path in groups[title]]
    return "\n".join(out)


def on_files(files: Any, config: Any) -> Any:
    """Add the images drawn at build time: the benchmark bars and the pages' figures."""
    bench = _benchmarks()
    results = bench.parse_results(ROOT / "benchmarks" / "RESULTS.md")
    files.append(File.generated(config, "img/benchmarks.png", content=bench.plot_png(results)))
    docs = Path(config["docs_dir"])
    for page in sorted(docs.rglob("*.md")):
        for block in docs_support.code_blocks(page.read_text(), str(page.relative_to(docs))):
            if block.figure:
                files.append(File.generated(config, block.figure, content=_render(block)))
    return files


def _render(block: docs_support.CodeBlock) -> bytes:
    """Run a figure block on the sample data; the bytes of the image it wrote."""
    cwd = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        docs_support.sample_workspace(Path(tmp))
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(block.code, f"{block.page}:{block.line}", "exec"), {})
        finally:
            os.chdir(cwd)
        image = Path(tmp) / Path(block.figure or "").name
        if not image.exists():
            msg = f"{block.page}:{block.line}: the figure block did not write {image.name}"
            raise FileNotFoundError(msg)
        return image.read_bytes()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the generated parts of a page."""
    markdown = catalogue.fill(markdown)
    if _API in markdown:
        markdown = markdown.replace(_API, api_reference())
    if _BENCH.search(markdown):
        bench = _benchmarks()
        results = bench.parse_results(ROOT / "benchmarks" / "RESULTS.md")
        parts = {"table": bench.table_markdown(results), "setup": bench.setup_markdown(results)}
        markdown = _BENCH.sub(lambda m: parts[m["what"]], markdown)
    return markdown


# a Sphinx cross-reference role in a docstring (":func:`x`"), as mkdocstrings renders it
ROLE = re.compile(
    r":(?:py:)?(?P<role>func|class|meth|mod|data|attr|exc|obj|const|term|math):"
    r"<code>(?P<target>[^<]+)</code>"
)


def _entry(name: str, ids: set[str]) -> str | None:
    """The id of ``name``'s entry on the page, if it has exactly one."""
    if name in ids:
        return name
    head, _, last = name.rpartition(".")
    if head == "fasteval" and last in fasteval.__all__:  # a re-export: where it is defined
        module = getattr(getattr(fasteval, last), "__module__", "fasteval")
        if f"{module}.{last}" in ids:
            return f"{module}.{last}"
    ends = [i for i in ids if i.endswith(f".{name}")]
    return ends[0] if len(ends) == 1 else None


def resolve_roles(html: str) -> str:
    """Turn the raw roles of docstrings into links to the page's own entries.

    ``:func:<code>fasteval.evaluate</code>`` becomes a link to the entry of
    ``fasteval.evaluate`` when the page has one (by its full name, by where a
    re-export of the package is defined, or by the one entry whose name ends
    so), else just the code; ``~a.b.c`` shows ``c``, as Sphinx does.
    """
    ids = set(re.findall(r'id="(fasteval[\w.]*)"', html))

    def link(m: re.Match[str]) -> str:
        raw = m["target"].strip()
        if m["role"] == "math":  # a formula: its text, as code
            return f"<code>{raw}</code>"
        name = raw.lstrip("~.").removesuffix("()")
        shown = name.rsplit(".", 1)[-1] if raw.startswith("~") else name
        entry = _entry(name, ids)
        return f'<a href="#{entry}"><code>{shown}</code></a>' if entry else f"<code>{shown}</code>"

    return ROLE.sub(link, html)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Resolve the docstrings' roles; widen the catalogue; refuse pages that point users
    to the internal spec."""
    html = resolve_roles(html)
    if page.file.src_uri == "measures.md":  # docs/stylesheets/catalogue.css
        html = '<div class="fe-catalogue">\n' + html + "\n</div>"
    for m in re.finditer(r"\bSPEC\b", html):
        context = re.sub(r"<[^>]+>", "", html[max(0, m.start() - 80) : m.end() + 20])
        log.warning(
            "%s mentions SPEC, a document users do not have: ...%s...",
            page.file.src_uri,
            " ".join(context.split()),
        )
    return html
