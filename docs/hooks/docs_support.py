"""What the documentation build and the docs tests share.

* :func:`sample_workspace` lays out the sample data shipped in ``fasteval/data``
  under the file names the pages use (``qrels.txt``, ``runs.parquet``, ``runs/``).
* :func:`code_blocks` finds the fenced code blocks of a page and what their
  marker comment says about them: ``<!-- not-runnable: reason -->``,
  ``<!-- figure: img/name.png -->`` (run at build time, its image shown) or, before
  a ``text`` block, ``<!-- output -->`` (the exact output of the shell block before it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fasteval.commands.demo import write_workspace

# Languages that are code: each block in one of them runs in the test suite or
# carries a `<!-- not-runnable: reason -->` comment. `text` blocks are output
# or file formats shown as they are.
CODE_LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "sh": "shell"}
SHELL_LANGUAGES = {"bash", "sh"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^\n`]*)$")
_MARKER = re.compile(r"<!--\s*(?P<kind>not-runnable|figure|output)\s*(?::\s*(?P<arg>.*?))?\s*-->")


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block of a Markdown page."""

    page: str
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    not_runnable: str | None  # the reason, when marked not runnable
    figure: str | None  # the image path this block renders, when marked as a figure
    output: bool = False  # a text block: the exact output of the shell block before it

    @property
    def kind(self) -> str | None:
        """``"python"``, ``"shell"``, or ``None`` for output and formats."""
        return CODE_LANGUAGES.get(self.language)


def code_blocks(text: str, page: str = "") -> list[CodeBlock]:
    """The fenced code blocks of ``text``, each with the marker on the line before it."""
    lines = text.splitlines()
    out: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], m["indent"]
        language = m["info"].strip().split(" ")[0].split("{")[0].lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = _MARKER.search(lines[k]) if k >= 0 else None
        out.append(
            CodeBlock(
                page=page,
                line=i + 1,
                language=language,
                code="\n".join(body) + "\n",
                not_runnable=(marker["arg"] or "")
                if marker and marker["kind"] == "not-runnable"
                else None,
                figure=marker["arg"] if marker and marker["kind"] == "figure" else None,
                output=bool(marker and marker["kind"] == "output"),
            )
        )
        i = j + 1
    return out


def sample_workspace(where: Path) -> Path:
    """Write the shipped sample data into ``where`` under the names the pages use:
    what ``fasteval demo --workspace DIR`` leaves (``qrels.txt``, ``runs/``,
    ``runs.parquet``), so a reader's folder is the one the examples ran in."""
    return write_workspace(where)
