"""Measure the hot path's shape for issue 45: lines, option lists, suffix tests, timing claims.

Run ``python scripts/hotpath_metrics.py`` from the repository root; ``--list`` names
the functions, modules and lines behind each count.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fasteval"
ROOMS = ("kernels", "engine", "io", "measures")
ROOM_FILES = (
    "columns.py",
    "parallel.py",
    "evaluator.py",
    "api.py",
    "aot.py",
    "warmup.py",
    "options.py",  # engine/options.py before
)
OPTION_NAMES = {"compat", "on_duplicate", "relevance_level", "run_id_from"}
OPTION_SCOPE = ("engine", "io", "measures")
OPTION_FILES = ("commands/common.py",)
SUFFIX = re.compile(  # a path's suffix, or a string compared with a file extension
    r"""\.\s*suffix(es)?\b|endswith\s*\(\s*\(?\s*["']\.[a-z]|[=!]=\s*["']\.[a-z]+["']"""
    r"""|\bin\s+\(?\s*["']\.[a-z]+["']"""
)
TIMING = re.compile(
    r"(?<![\w.%-])(?!1[89]\d0s|95\s?%)\d+(\.\d+)?\s?(ms|us|µs|ns|s|sec|seconds?|x|%)(?!\w)",
    re.IGNORECASE,
)


def room_files() -> list[Path]:
    """Every module of the hot path's rooms."""
    out = [p for room in ROOMS for p in sorted((PKG / room).rglob("*.py"))]
    return out + [PKG / f for f in ROOM_FILES if (PKG / f).exists()]


def option_functions() -> list[str]:
    """Internal functions taking one of trec_eval's options as a parameter of its own
    (the public names of ``fasteval.__all__`` keep their keywords and are not counted)."""
    public = set(_public_names())
    files = [p for s in OPTION_SCOPE for p in sorted((PKG / s).rglob("*.py"))]
    files += [PKG / f for f in OPTION_FILES]
    found = []
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                if names & OPTION_NAMES and node.name not in public:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    return found


def _public_names() -> list[str]:
    tree = ast.parse((PKG / "__init__.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    return []


def suffix_modules() -> list[str]:
    """Modules whose code (not comments or docstrings) tests a file suffix."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        code = _code_only(path.read_text())
        if SUFFIX.search(code):
            found.append(str(path.relative_to(ROOT)))
    return found


def timing_claims() -> list[str]:
    """Comment and docstring lines of the package that state a timing or speed figure."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text()
        for lineno, line in _prose_lines(text):
            if TIMING.search(line):
                found.append(f"{path.relative_to(ROOT)}:{lineno} {line.strip()[:90]}")
    return found


def _code_only(text: str) -> str:
    docs = _docstring_lines(text)
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and tok.start[0] in docs):
            continue
        out.append(tok.string)
    return " ".join(out)


def _docstring_lines(text: str) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            v = body[0].value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                lines.update(range(v.lineno, (v.end_lineno or v.lineno) + 1))
    return lines


def _prose_lines(text: str) -> list[tuple[int, str]]:
    src = text.splitlines()
    out = [(n, src[n - 1]) for n in sorted(_docstring_lines(text))]
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
    return out


def main() -> None:
    """Print the four counts (and with ``--list`` what is behind them)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--list", action="store_true", help="name what each count counts")
    args = parser.parse_args()
    files = room_files()
    lines = sum(len(p.read_text().splitlines()) for p in files)
    opts, sufs, claims = option_functions(), suffix_modules(), timing_claims()
    print(f"hot-path lines      {lines:6d}  (target <= 15900)")
    print(f"option-list funcs   {len(opts):6d}  (target <= 10)")
    print(f"suffix-test modules {len(sufs):6d}  (target <= 2)")
    print(f"timing claims       {len(claims):6d}  (target <= 15)")
    if args.list:
        for title, items in (("options", opts), ("suffixes", sufs), ("timing", claims)):
            print(f"\n## {title}")
            print("\n".join(items))


if __name__ == "__main__":
    main()
