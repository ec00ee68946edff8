"""Load the documentation's helpers (``docs/hooks``) and the benchmark plot script."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def load(name: str, path: Path) -> ModuleType:
    """Import the module at ``path`` as ``name`` (once)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


docs_support = load("docs_support", DOCS / "hooks" / "docs_support.py")
catalogue = load("catalogue", DOCS / "hooks" / "catalogue.py")
benchmark_plots = load("benchmark_plots", REPO / "scripts" / "benchmark_plots.py")
headline = load("headline", REPO / "scripts" / "headline.py")


def pages() -> list[Path]:
    """The documentation's Markdown pages and the README (its front page)."""
    return [REPO / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]
