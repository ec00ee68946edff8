"""A/B two or more source trees of fasteval, fresh processes alternated.

Each tree is a checkout (or worktree) with its kernel library built; it is put on
``PYTHONPATH`` under this interpreter (the working folder never shadows it). Rounds
alternate the trees (the order reversed every other round), and each tree's figure is
the median over rounds; the paired ratio is the median of each round's ratio to the
first tree. These hosts have quiet and busy phases: compare trees only within one run
of this script.

Rows:

- the in-process rows of ``small_calls.py`` (``frame``, ``frame-long``, ``frame-int``,
  ``frame-cat``, ``dicts``, ``irm-pandas``, ``irm-dicts``, ``irm-iter``): fasteval's call
  there, ``--calls`` calls a process after one warm-up; the median wall and CPU per call;
- ``cmd``: one fresh ``fasteval`` command per tree and round (the arguments after
  ``--``, ``{tree}`` in them replaced by the tree's folder name: each tree reads its own
  archive, say); wall, CPU (user + system) and peak RSS.

Usage::

    python benchmarks/ab_trees.py frame --rounds 25 --calls 60 TREE_A TREE_B
    python benchmarks/ab_trees.py cmd --rounds 9 TREE_A TREE_B -- eval QRELS RUNS -q -m map
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMALL = """
import json, sys
sys.path.remove("")
sys.path.append(sys.argv[1])  # after the tree: small_calls imports the tree's fasteval
import small_calls
got = small_calls.child(sys.argv[2], "fasteval", int(sys.argv[3]))
print(json.dumps([got["wall"], got["cpu"], 0.0]))
"""
SMALL_ROWS = [
    "frame",
    "frame-long",
    "frame-int",
    "frame-cat",
    "dicts",
    "irm-pandas",
    "irm-dicts",
    "irm-iter",
]

CLI = (
    "import sys; sys.path.remove(''); from fasteval.cli import main; "
    "sys.argv[0] = 'fasteval'; sys.exit(main())"
)


def _env(tree: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's shell keeps bytecode
    env["PYTHONPATH"] = tree
    return env


def _small(tree: str, row: str, calls: int) -> list[float]:
    argv = [sys.executable, "-c", SMALL, str(HERE), row, str(calls)]
    out = subprocess.run(argv, env=_env(tree), capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(out.stderr)
    return [x * 1000 for x in json.loads(out.stdout)]  # ms


def _cmd(tree: str, args: list[str]) -> list[float]:
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-c", CLI, *(a.replace("{tree}", Path(tree).name) for a in args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(tree),
    )
    _, status, use = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(p.stderr.read() if p.stderr else status)
    return [time.perf_counter() - t0, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024]


def main() -> None:
    """Run the rounds and print one line per tree."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("row", choices=[*SMALL_ROWS, "cmd"])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=60, help="calls a process (small calls)")
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)

    def one(tree: str) -> list[float]:
        return _cmd(tree, rest) if args.row == "cmd" else _small(tree, args.row, args.calls)

    for tree in args.trees:
        one(tree)  # bytecode written, files in the page cache
    got: dict[str, list[list[float]]] = {t: [] for t in args.trees}
    for r in range(args.rounds):
        for tree in args.trees if r % 2 == 0 else args.trees[::-1]:
            got[tree].append(one(tree))
    first = got[args.trees[0]]
    unit = "s" if args.row == "cmd" else "ms"
    for tree, rows in got.items():
        wall, cpu, rss = (statistics.median(x[i] for x in rows) for i in range(3))
        pw = statistics.median(x[0] / y[0] for x, y in zip(rows, first, strict=True))
        pc = statistics.median(x[1] / y[1] for x, y in zip(rows, first, strict=True))
        mem = f", {rss:.0f} MB" if args.row == "cmd" else ""
        print(
            f"{tree}: wall {wall:.3f} {unit}, CPU {cpu:.3f} {unit}{mem}; "
            f"paired ratio to the first: wall {pw:.3f}, CPU {pc:.3f} ({args.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
