"""The package's shape: no module over 800 lines, few functions over 60 lines of code.

Lines of code: non-blank, non-comment lines of a function, its docstring aside.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "fasteval"
MODULES = sorted(ROOT.rglob("*.py"))
MAX_MODULE_LINES = 800
MAX_FUNCTION_LOC = 60
MAX_LONG_FUNCTIONS = 5  # today: evaluate_groups (numba; its docstring says why)


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """Non-blank, non-comment lines of ``node``, its docstring aside."""
    skip: set[int] = set()
    first = node.body[0]
    value = first.value if isinstance(first, ast.Expr) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        skip = set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    end = node.end_lineno or node.lineno
    return sum(
        1
        for i in range(node.lineno, end + 1)
        if i not in skip and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")
    )


def long_functions(path: Path) -> list[str]:
    src = path.read_text()
    lines = src.splitlines()
    return [
        f"{path.relative_to(ROOT.parent)}:{n.lineno} {n.name} ({code_lines(n, lines)})"
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and code_lines(n, lines) > MAX_FUNCTION_LOC
    ]


def test_no_module_over_800_lines() -> None:
    assert len(MODULES) > 40
    big = [
        f"{p.relative_to(ROOT.parent)}: {n}"
        for p in MODULES
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert big == []


def test_few_functions_over_60_lines_of_code() -> None:
    found = [f for p in MODULES for f in long_functions(p)]
    assert len(found) <= MAX_LONG_FUNCTIONS, "\n".join(found)


def test_the_count_skips_the_docstring_blank_lines_and_comments() -> None:
    src = 'def f():\n    """Doc.\n\n    More.\n    """\n\n    # note\n    x = 1\n    return x\n'
    fn = ast.parse(src).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert code_lines(fn, src.splitlines()) == 3
