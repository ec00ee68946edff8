"""Every code block of the documentation runs, on the sample data shipped in the package.

A ``python`` block is executed (the blocks of one page share a namespace and a
working folder, in page order); a ``bash`` / ``sh`` block runs each of its
``fasteval ...`` lines through the command's click entry point. The working folder
holds the sample data under the names the pages use (``qrels.txt``,
``runs.parquet``, ``runs/``). A block that cannot run here (it needs TREC data, a
cluster, a network, an installation) says so on the line before it:
``<!-- not-runnable: the reason -->``. ``text`` blocks are output and formats.
"""

from __future__ import annotations

import gc
import itertools
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.docs._support import REPO, docs_support, pages

BLOCKS = [
    block
    for page in pages()
    for block in docs_support.code_blocks(page.read_text(), str(page.relative_to(REPO)))
]
KNOWN = {*docs_support.CODE_LANGUAGES, "text"}
RUNNABLE = [b for b in BLOCKS if b.kind is not None and b.not_runnable is None]
# a shell block -> the text block after it that shows its output exactly
OUTPUT_OF = {
    (a.page, a.line): b.code
    for a, b in itertools.pairwise(BLOCKS)
    if b.output and a.kind == "shell" and a.page == b.page
}


def test_every_block_is_classified() -> None:
    """Each fenced block names a known language; marked blocks give a reason."""
    bad = [
        f"{b.page}:{b.line}: language {b.language!r} (use one of {sorted(KNOWN)})"
        for b in BLOCKS
        if b.language not in KNOWN
    ]
    bad += [
        f"{b.page}:{b.line}: not-runnable without a reason" for b in BLOCKS if b.not_runnable == ""
    ]
    assert not bad, "\n".join(bad)
    assert len(RUNNABLE) >= 20  # the docs do show running examples


# A page's blocks share one namespace, in page order: they need one process, which the
# README's `pytest -n 2 --dist loadfile` gives (each file's tests on one worker).
_STATE: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One sample workspace per page, made on first use."""
    return {}


def _workspace(page: str, workspaces: dict[str, Path], factory: pytest.TempPathFactory) -> Path:
    if page not in workspaces:
        workspaces[page] = docs_support.sample_workspace(factory.mktemp("docs"))
    return workspaces[page]


def _run_shell(code: str, where: str) -> str:
    """Run the ``fasteval`` lines of a shell block; the standard output of the last one."""
    from click.testing import CliRunner

    from fasteval.cli import main

    logical = code.replace("\\\n", " ").splitlines()
    commands = [ln.split(" #")[0].strip() for ln in logical]
    commands = [c for c in commands if c and not c.startswith("#")]
    assert commands, f"{where}: a shell block without a command"
    runner = CliRunner()
    stdout = ""
    for cmd in commands:
        argv = shlex.split(cmd)
        assert argv[0] == "fasteval", (
            f"{where}: only `fasteval` commands run here; mark the block "
            f"<!-- not-runnable: reason --> for {cmd!r}"
        )
        try:
            res = runner.invoke(main, argv[1:], catch_exceptions=True)
        finally:
            gc.unfreeze()  # the command freezes the heap before a process exits
        if res.exit_code != 0:
            pytest.fail(f"{where}: `{cmd}` exited {res.exit_code}:\n{res.output}{res.exception!r}")
        stdout = res.stdout
    return stdout


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"{b.page}:{b.line}" for b in RUNNABLE])
def test_block_runs(
    block: Any,
    workspaces: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The block runs without an error in its page's workspace."""
    import matplotlib

    matplotlib.use("Agg")
    where = f"{block.page}:{block.line}"
    monkeypatch.chdir(_workspace(block.page, workspaces, tmp_path_factory))
    monkeypatch.delenv("FASTEVAL_CLUSTER", raising=False)  # examples run on this machine
    if block.kind == "shell":
        stdout = _run_shell(block.code, where)
        expected = OUTPUT_OF.get((block.page, block.line))
        if expected is not None:
            assert stdout == expected, f"{where}: the page shows another output than the command's"
    else:
        namespace = _STATE.setdefault(block.page, {"__name__": "__docs__"})
        exec(compile(block.code, where, "exec"), namespace)
        import matplotlib.pyplot as plt

        plt.close("all")
