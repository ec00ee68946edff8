"""A/B two or more source trees of fasteval, fresh processes alternated.

Each tree is a checkout (or worktree) with its kernel library built; it is put on
``PYTHONPATH`` under this interpreter (the working folder never shadows it). Rounds
alternate the trees (the order reversed every other round), and each tree's figure is
the median over rounds; the paired ratio is the median of each round's ratio to the
first tree. These hosts have quiet and busy phases: compare trees only within one run
of this script.

Rows:

- ``frame``: a warm ``Evaluator.evaluate(run frame)`` on one TREC-8 run (map, P_10,
  ndcg_cut_10), ``--calls`` calls a process after one warm-up; wall and CPU per call;
- ``cmd``: one fresh ``fasteval`` command per tree and round (the arguments after
  ``--``); wall, CPU (user + system) and peak RSS.

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

TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"
FRAME = """
import json, statistics, sys, time
sys.path.remove("")
import fasteval
d, calls = sys.argv[1], int(sys.argv[2])
qrels = fasteval.load_qrels(d + "/qrels.trec8.adhoc.gz")
run = fasteval.load_runs(d + "/runs/input.INQ603.gz")
ev = fasteval.Evaluator(qrels, ["map", "P_10", "ndcg_cut_10"])
ev.evaluate(run)
w, c = [], []
for _ in range(calls):
    c0, w0 = time.process_time(), time.perf_counter()
    ev.evaluate(run)
    w.append(time.perf_counter() - w0)
    c.append(time.process_time() - c0)
print(json.dumps([statistics.median(w), statistics.median(c), 0.0]))
"""
CLI = (
    "import sys; sys.path.remove(''); from fasteval.cli import main; "
    "sys.argv[0] = 'fasteval'; sys.exit(main())"
)


def _env(tree: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's shell keeps bytecode
    env["PYTHONPATH"] = tree
    return env


def _frame(tree: str, calls: int, data: Path) -> list[float]:
    argv = [sys.executable, "-c", FRAME, str(data), str(calls)]
    out = subprocess.run(argv, env=_env(tree), capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(out.stderr)
    return [x * 1000 for x in json.loads(out.stdout)]  # ms


def _cmd(tree: str, args: list[str]) -> list[float]:
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
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
    ap.add_argument("row", choices=["frame", "cmd"])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=60, help="calls a process (frame)")
    ap.add_argument("--data", type=Path, default=TREC8, help="the TREC-8 folder (frame)")
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)

    def one(tree: str) -> list[float]:
        return _frame(tree, args.calls, args.data) if args.row == "frame" else _cmd(tree, rest)

    for tree in args.trees:
        one(tree)  # bytecode written, files in the page cache
    got: dict[str, list[list[float]]] = {t: [] for t in args.trees}
    for r in range(args.rounds):
        for tree in args.trees if r % 2 == 0 else args.trees[::-1]:
            got[tree].append(one(tree))
    first = got[args.trees[0]]
    unit = "ms" if args.row == "frame" else "s"
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
