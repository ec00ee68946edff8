"""Small calls: one run in a warm process, one fresh command, the ir_measures provider.

The calls a researcher makes most often, side by side with pytrec_eval and
ir_measures in the same run. Every row runs in its own child process (so its
peak RSS is its own), repeats its call ``--reps`` times after one untimed
warm-up call, and reports the median wall and CPU time per call and the
child's peak RSS. Ratios are the peer's median over fasteval's.

With ``--rounds K`` each in-process row is measured K times, the tools' child
processes alternating (fasteval, peer, fasteval, peer, ...): the host this was
built on has quiet and busy phases of several minutes, and one process per tool
can fall in different phases. A row then reports each tool's median over the
rounds, and the median and range of the rounds' ratios (each round's processes
ran back to back).

Rows (one TREC-8 run, ``input.INQ603``: 50 queries x 1000 documents; the three
measures map, P_10, ndcg_cut_10 per query, as the issue measured them):

- ``frame``: fasteval ``Evaluator.evaluate(run frame)`` (qrels prepared once)
  against pytrec_eval's prebuilt ``RelevanceEvaluator.evaluate(run dict)``;
- ``frame-long``, ``frame-int``, ``frame-cat``: the same frame with a run id of 22
  bytes (longer than a string view inlines), integer query ids, and categorical run
  and query ids (the kinds of id columns users' frames hold);
- ``dicts``: ``fasteval.evaluate(qrels dict, run dict)`` against pytrec_eval's
  ``RelevanceEvaluator(qrels dict).evaluate(run dict)``;
- ``irm-pandas``, ``irm-dicts``, ``irm-iter``: ``ir_measures.calc_aggregate`` over 6
  TREC-8 runs through the fasteval provider against ir_measures' default
  providers, with pandas frames, dicts and ``read_trec_*`` iterators;
- ``cli``: a fresh ``fasteval eval QRELS RUN -m map -m P_10`` (with the ahead-of-time
  kernel library ``fasteval warmup`` builds, which this row builds first if it is
  missing, and on numba's JIT alone), a fresh Python reading the run into a polars
  frame and calling ``Evaluator.evaluate`` (a notebook's first call), against a Python
  script doing the same with pytrec_eval, and the trec_eval binary (``$TREC_EVAL``).

The in-process rows use the library too when it is there; ``FASTEVAL_AOT=0`` in the
environment runs them on numba's JIT.

Usage::

    python benchmarks/small_calls.py --reps 20
    python benchmarks/small_calls.py --rows frame --reps 100 --rounds 9
    TREC_EVAL=/path/to/trec_eval python benchmarks/small_calls.py --write

``--write`` replaces the "Small calls" section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))
TREC8 = SHARED / "trec8_adhoc"
QRELS = TREC8 / "qrels.trec8.adhoc.gz"
RUN = TREC8 / "runs" / "input.INQ603.gz"
SIX = [
    "input.INQ603",
    "input.INQ604",
    "input.CL99XT",
    "input.ok8amxc",
    "input.pir9Aa1",
    "input.Flab8as",
]
RESULTS = HERE / "RESULTS.md"
SECTION = "## Small calls"
MEASURES = ["map", "P_10", "ndcg_cut_10"]


LONG_RUN_ID = "-monoT5-reranked"
"""Appended to the run id in the ``frame-long`` row: ids of more than 12 bytes are not
inlined in a polars string view."""


def _timed(call: Callable[[], Any], reps: int) -> dict[str, float]:
    call()  # warm-up: imports, numba dispatch, the qrels prepared
    walls, cpus = [], []
    for _ in range(reps):
        c0, w0 = time.process_time(), time.perf_counter()
        call()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


def _dicts(path: Path, kind: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            p = line.split()
            if kind == "qrels":
                out.setdefault(p[0], {})[p[2]] = int(p[3])
            else:
                out.setdefault(p[0], {})[p[2]] = float(p[4])
    return out


def _six_paths() -> list[Path]:
    return [TREC8 / "runs" / f"{n}.gz" for n in SIX]


def child(row: str, tool: str, reps: int) -> dict[str, float]:
    """One row in this process: the median per call."""
    if row in ("frame", "frame-long", "frame-int", "frame-cat"):
        if tool == "fasteval":
            import polars as pl

            import fasteval

            qrels, run = fasteval.load_qrels(QRELS), fasteval.load_runs(RUN)
            if row == "frame-long":  # a run id as long as many are, stored on every row
                run = run.with_columns((pl.col("run_id") + LONG_RUN_ID).alias("run_id"))
            elif row == "frame-int":  # query ids as integers, as many frames hold them
                run = run.with_columns(pl.col("query_id").cast(pl.Int64))
            elif row == "frame-cat":  # run and query ids as polars categoricals
                run = run.with_columns(pl.col("run_id", "query_id").cast(pl.Categorical))
            ev = fasteval.Evaluator(qrels, MEASURES)
            return _timed(lambda: ev.evaluate(run), reps)
        import pytrec_eval

        q, r = _dicts(QRELS, "qrels"), _dicts(RUN, "run")
        pe = pytrec_eval.RelevanceEvaluator(q, {"map", "P_10", "ndcg_cut_10"})
        return _timed(lambda: pe.evaluate(r), reps)
    if row == "dicts":
        q, r = _dicts(QRELS, "qrels"), _dicts(RUN, "run")
        if tool == "fasteval":
            import fasteval

            return _timed(lambda: fasteval.evaluate(q, r, MEASURES), reps)
        import pytrec_eval

        return _timed(
            lambda: pytrec_eval.RelevanceEvaluator(q, {"map", "P_10", "ndcg_cut_10"}).evaluate(r),
            reps,
        )
    if row.startswith("irm-"):
        return _irm(row.removeprefix("irm-"), tool, reps)
    msg = f"unknown row {row!r}"
    raise SystemExit(msg)


def _irm(kind: str, tool: str, reps: int) -> dict[str, float]:
    import ir_measures

    if tool == "fasteval":
        from fasteval.ir_measures_provider import provider

        calc = provider.calc_aggregate
    else:
        calc = ir_measures.calc_aggregate
    ms = [ir_measures.AP, ir_measures.P @ 10, ir_measures.nDCG @ 10]
    if kind == "pandas":
        import pandas as pd

        qrels = pd.DataFrame(
            [(q, d, g) for q, ds in _dicts(QRELS, "qrels").items() for d, g in ds.items()],
            columns=["query_id", "doc_id", "relevance"],
        )
        runs = [
            pd.DataFrame(
                [(q, d, s) for q, ds in _dicts(p, "run").items() for d, s in ds.items()],
                columns=["query_id", "doc_id", "score"],
            )
            for p in _six_paths()
        ]
        return _timed(lambda: [calc(ms, qrels, r) for r in runs], reps)
    if kind == "dicts":
        qd = _dicts(QRELS, "qrels")
        rds = [_dicts(p, "run") for p in _six_paths()]
        return _timed(lambda: [calc(ms, qd, r) for r in rds], reps)
    # read_trec_* iterators: read from the files on every call, as a user's script does

    def one(p: Path) -> Any:
        with gzip.open(QRELS, "rt") as fq, gzip.open(p, "rt") as fr:
            return calc(ms, ir_measures.read_trec_qrels(fq), ir_measures.read_trec_run(fr))

    return _timed(lambda: [one(p) for p in _six_paths()], reps)


def _child_proc(
    args: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, float, str]:
    """A process whose peak RSS is its own (os.wait4 on it)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, env=env)
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"{' '.join(args)} exited {p.returncode}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.decode()


def _median_of(samples: Any) -> dict[str, float]:
    """Each key's median over several rows' results."""
    rows = list(samples)
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def in_process_row(row: str, tool: str, reps: int) -> dict[str, float]:
    args = [sys.executable, __file__, "--child", row, tool, "--reps", str(reps)]
    _, _, rss, out = _child_proc(args)
    got = json.loads(out.strip().splitlines()[-1])
    got["rss"] = rss
    return got


PYTREC_SCRIPT = """
import gzip, sys, pytrec_eval
def read(p, kind):
    out = {}
    with gzip.open(p, 'rt') if p.endswith('.gz') else open(p) as f:
        for line in f:
            x = line.split()
            if kind == 'q': out.setdefault(x[0], {})[x[2]] = int(x[3])
            else: out.setdefault(x[0], {})[x[2]] = float(x[4])
    return out
q, r = read(sys.argv[1], 'q'), read(sys.argv[2], 'r')
res = pytrec_eval.RelevanceEvaluator(q, {'map', 'P_10'}).evaluate(r)
for m in ('map', 'P_10'):
    print(m, 'all', sum(v[m] for v in res.values()) / len(res))
"""


FASTEVAL_SCRIPT = """
import sys, fasteval
qrels, run = fasteval.load_qrels(sys.argv[1]), fasteval.load_runs(sys.argv[2])
res = fasteval.Evaluator(qrels, ['map', 'P_10']).evaluate(run, per_query=False)
print(res)
"""
"""The first call of a notebook: the run read into a polars frame, then evaluated."""


def _library_built(env: dict[str, str]) -> bool:
    """Whether a fresh process finds the ahead-of-time kernel library for these sources."""
    code = "from fasteval.kernels import jit; print(jit.load_library()[0] is not None)"
    got = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    return got.stdout.strip() == "True"


def cli_rows(reps: int) -> list[tuple[str, dict[str, float]]]:
    """A fresh command, ``reps`` times each: fasteval, a pytrec_eval script, trec_eval."""
    fe = str(Path(sys.executable).with_name("fasteval"))
    fe_args = [fe, "eval", str(QRELS), str(RUN), "-m", "map", "-m", "P_10"]
    cmds = {
        "fasteval": fe_args,
        "fasteval, JIT only (`FASTEVAL_AOT=0`)": fe_args,
        "fasteval in Python: a polars frame, `Evaluator.evaluate`": [
            sys.executable,
            "-c",
            FASTEVAL_SCRIPT,
            str(QRELS),
            str(RUN),
        ],
        "pytrec_eval script": [sys.executable, "-c", PYTREC_SCRIPT, str(QRELS), str(RUN)],
    }
    te = os.environ.get("TREC_EVAL")
    if te:  # trec_eval reads plain text only
        plain = Path(tempfile.mkdtemp(prefix="small-calls-"))
        for f in (QRELS, RUN):
            (plain / f.stem).write_bytes(gzip.decompress(f.read_bytes()))
        files = [str(plain / f.stem) for f in (QRELS, RUN)]
        cmds["trec_eval"] = [te, "-m", "map", "-m", "P.10", *files]
    # as after an install: Python's bytecode cached (a PYTHONDONTWRITEBYTECODE set in the
    # environment would make every fresh process compile fasteval's modules again)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not _library_built(env):
        print("building the kernel library (`pip install -e .` does)", flush=True)
        from fasteval import aot

        print(aot.build())
    envs = {name: dict(env, FASTEVAL_AOT="0") if "JIT only" in name else env for name in cmds}
    for name, args in cmds.items():
        _child_proc(args, envs[name])  # warm the page cache, numba's cache and the bytecode
    samples: dict[str, list[tuple[float, float, float, str]]] = {name: [] for name in cmds}
    for _ in range(reps):  # interleaved, so a busy minute weighs on every tool alike
        for name, args in cmds.items():
            samples[name].append(_child_proc(args, envs[name]))
    out = []
    for name, got in samples.items():
        out.append(
            (
                name,
                {
                    "wall": statistics.median(s[0] for s in got),
                    "cpu": statistics.median(s[1] for s in got),
                    "rss": max(s[2] for s in got),
                },
            )
        )
    return out


ROWS = {
    "frame": (
        "one run frame, warm, `Evaluator.evaluate` vs prebuilt `RelevanceEvaluator`",
        ["fasteval", "pytrec_eval"],
    ),
    "frame-long": (
        "the same with a run id of 22 bytes (`INQ603-monoT5-reranked`)",
        ["fasteval", "pytrec_eval"],
    ),
    "frame-int": ("the same with integer query ids (`Int64`)", ["fasteval", "pytrec_eval"]),
    "frame-cat": (
        "the same with categorical run and query ids (`pl.Categorical`)",
        ["fasteval", "pytrec_eval"],
    ),
    "dicts": (
        "`evaluate(qrels dict, run dict)` vs pytrec_eval build + evaluate",
        ["fasteval", "pytrec_eval"],
    ),
    "irm-pandas": (
        "ir_measures `calc_aggregate`, 6 runs, pandas frames",
        ["fasteval", "ir_measures"],
    ),
    "irm-dicts": ("ir_measures `calc_aggregate`, 6 runs, dicts", ["fasteval", "ir_measures"]),
    "irm-iter": (
        "ir_measures `calc_aggregate`, 6 runs, `read_trec_*` iterators",
        ["fasteval", "ir_measures"],
    ),
}


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=20, help="calls per in-process row")
    ap.add_argument("--cli-reps", type=int, default=9, help="fresh commands per CLI row")
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="child processes per tool and in-process row, the tools alternating",
    )
    ap.add_argument("--rows", default=",".join([*ROWS, "cli"]))
    ap.add_argument("--write", action="store_true", help="replace the section in RESULTS.md")
    ap.add_argument("--child", nargs=2, metavar=("ROW", "TOOL"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], a.reps)))
        return
    if not QRELS.exists():
        raise SystemExit(f"TREC-8 data not found under {TREC8} (set FASTEVAL_SHARED_DATA)")
    load0 = os.getloadavg()[0]
    lines = [
        "| call | tool | median ms / call | CPU ms / call | peak RSS MB | peer / fasteval |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in a.rows.split(","):
        if row == "cli":
            got = cli_rows(a.cli_reps)
            base = got[0][1]["wall"]
            for name, g in got:
                lines.append(
                    f"| fresh process, one run, map + P_10 | {name} | {g['wall'] * 1e3:.0f} | "
                    f"{g['cpu'] * 1e3:.0f} | {g['rss']:.0f} | {g['wall'] / base:.2f} |"
                )
                print(lines[-1], flush=True)
            continue
        title, tools = ROWS[row]
        rounds = [{t: in_process_row(row, t, a.reps) for t in tools} for _ in range(a.rounds)]
        res = {t: _median_of(r[t] for r in rounds) for t in tools}
        for t in tools:
            g = res[t]
            ratios = sorted(r[t]["wall"] / r["fasteval"]["wall"] for r in rounds)
            ratio = f"{statistics.median(ratios):.2f}"
            if a.rounds > 1 and t != "fasteval":
                ratio += f" ({ratios[0]:.2f}-{ratios[-1]:.2f})"
            lines.append(
                f"| {title} | {t} | {g['wall'] * 1e3:.1f} | {g['cpu'] * 1e3:.1f} | "
                f"{g['rss']:.0f} | {ratio} |"
            )
            print(lines[-1], flush=True)
    load1 = os.getloadavg()[0]
    command = " ".join(x for x in sys.argv[1:] if x != "--write")
    head = [
        SECTION,
        "",
        f"Command: `python benchmarks/small_calls.py {command}`"
        f" at {_git_commit()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"load average {load0:.1f} at the start, {load1:.1f} at the end; "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}.",
        "",
        "Per call, median over the repetitions after one warm-up call; each row in a child "
        "process of its own (peak RSS is that process's). *peer / fasteval*: the row's "
        "median over fasteval's (higher: fasteval faster)."
        + (
            f" Each in-process row ran {a.rounds} rounds, the tools' processes alternating: "
            "medians over the rounds, and the median (range) of the rounds' ratios."
            if a.rounds > 1
            else ""
        ),
        "",
    ]
    text = "\n".join([*head, *lines, ""])
    print(text)
    if a.write:
        old = RESULTS.read_text()
        if SECTION in old:
            start = old.index(SECTION)
            nxt = old.find("\n## ", start + len(SECTION))
            new = old[:start] + text + (old[nxt + 1 :] if nxt >= 0 else "")
        else:
            new = old.rstrip("\n") + "\n\n" + text
        RESULTS.write_text(new)


if __name__ == "__main__":
    main()
