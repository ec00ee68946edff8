"""The package's layers: every import (function-level ones included) points down or sideways.

kernels, errors < parallel, columns < io, measures < encode < engine < analysis
< api, the package facades < plots, distributed, warmup < commands, cli.
No import cycle between modules, and no private name of one module used in another
(``from x import _private`` or ``x._private``), in fasteval/ and benchmarks/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "fasteval"

# top-level part of the package -> layer (a module may import its own layer and below)
LAYERS: dict[str, int] = {
    "kernels": 0,
    "errors": 0,
    "_version": 0,  # fasteval.__version__, stamped on outputs by io
    "parallel": 1,
    "columns": 1,
    "io": 2,
    "options": 2,  # fasteval.EvalOptions: read by io and engine alike
    "measures": 2,
    "engine": 4,
    "analysis": 5,
    "api": 6,
    "evaluator": 6,  # fasteval.Evaluator: routes requests to engine and analysis kinds
    "studies": 6,  # facade: fasteval.studies re-exports analysis.studies
    "comparison": 6,  # fasteval.compare(): evaluates, then analysis.comparison tests and tabulates
    "": 6,  # fasteval/__init__.py: the lazy public names
    "plots": 7,
    "distributed": 7,
    "warmup": 7,
    "aot": 7,  # builds the ahead-of-time kernel library by running the evaluation
    "ir_measures_provider": 7,  # an ir_measures provider calling fasteval.evaluate
    "commands": 8,
    "cli": 8,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    assert top in LAYERS, f"{module}: no layer for {top!r}; add it to LAYERS"
    return LAYERS[top]


def _resolve(name: str) -> str:
    """The module an import of ``name`` loads (the longest prefix that is one of ours)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` reads from, relative imports resolved in ``package``."""
    base = node.module or ""
    if node.level:
        up = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*up, *([base] if base else [])])
    return base


def _imports(module: str) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) of every fasteval import in ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, _resolve(a.name), []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in MODULES:  # from fasteval.analysis import variants
                    out.append((node.lineno, sub, []))
                else:
                    out.append((node.lineno, _resolve(base), [a.name]))
    return [(line, m, names) for line, m, names in out if m.split(".")[0] == "fasteval"]


EDGES = {m: _imports(m) for m in MODULES}


def test_the_walk_sees_the_package() -> None:
    assert len(MODULES) > 40
    assert sum(len(v) for v in EDGES.values()) > 100
    # a function-level import is seen too
    assert any(m == "fasteval.api" for _, m, _ in EDGES["fasteval.cli"])


def test_no_upward_import() -> None:
    upward = [
        f"{m}:{line} imports {target}"
        for m, edges in EDGES.items()
        for line, target, _ in edges
        if _layer(target) > _layer(m)
    ]
    assert upward == []


def test_no_import_cycle() -> None:
    graph = {m: {t for _, t, _ in edges if t != m} for m, edges in EDGES.items()}
    # a package's __init__ importing its own submodules is how packages work;
    # a cycle through it counts only if a submodule imports the package back
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycles.append([*path[path.index(t) :], t] if t in path else [m, t])
            elif t not in state:
                visit(t, [*path, t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


@pytest.mark.parametrize(
    ("module", "target"),
    [("fasteval.engine.ranking", "fasteval.analysis.information")],
)
def test_an_upward_import_would_be_caught(module: str, target: str) -> None:
    assert _layer(target) > _layer(module)


# --- private names across modules, in the package and in benchmarks/ (scripts there
# import their siblings by bare name, so those are registered under both names)
BENCHMARKS = ROOT.parent / "benchmarks"


def _all_files() -> dict[str, Path]:
    files = dict(MODULES)
    for p in sorted(BENCHMARKS.rglob("*.py")):
        parts = list(p.relative_to(BENCHMARKS).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            files[".".join(parts)] = p
            files[".".join(["benchmarks", *parts])] = p
    return files


FILES = _all_files()


def _find(name: str) -> str | None:
    """The longest prefix of ``name`` that is one of our modules."""
    while name not in FILES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in FILES else None


def _private_uses(path: Path, tree: ast.AST, package: str) -> list[str]:
    """``from x import _y`` and ``x._y`` in ``tree`` where ``x`` is another of our modules."""
    aliases: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name if a.asname else a.name.split(".")[0]
                if _find(a.name) is not None and _find(top) is not None:
                    aliases[a.asname or top] = top
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for a in node.names:
                if f"{base}.{a.name}" in FILES:
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
                elif _private(a.name) and _other(_find(base), path):
                    found.append(f"{path.name}:{node.lineno} imports {base}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain: list[str] = []
            value: ast.expr = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in aliases:
                target = ".".join([aliases[value.id], *reversed(chain)])
                if target in FILES and _other(target, path):
                    found.append(f"{path.name}:{node.lineno} uses {target}.{node.attr}")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _other(module: str | None, path: Path) -> bool:
    return module is not None and FILES[module] != path


def _uses_in(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    return _private_uses(path, tree, package)


@pytest.mark.parametrize("root", [ROOT, BENCHMARKS], ids=["fasteval", "benchmarks"])
def test_no_private_name_used_across_modules(root: Path) -> None:
    names = {p: m for m, p in sorted(FILES.items(), reverse=True)}  # benchmarks.x over x
    found = [u for p, m in sorted(names.items()) if p.is_relative_to(root) for u in _uses_in(p, m)]
    assert found == []


def test_the_private_check_sees_both_forms() -> None:
    src = "from fasteval.kernels import text\nfrom fasteval.io.trec import _x\ny = text._hidden\n"
    found = _private_uses(ROOT / "api.py", ast.parse(src), "fasteval")
    assert len(found) == 2
    assert "fasteval.io.trec._x" in found[0] and "fasteval.kernels.text._hidden" in found[1]
