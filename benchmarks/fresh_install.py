"""Fresh install: what a new user gets from a fresh clone and the README's set-up alone.

Clones this checkout's HEAD into a temporary folder, runs the README's set-up
command there (``python3 -m venv .venv && .venv/bin/pip install -q -e .``, timed),
and then, with ``HOME`` set to an empty folder (no numba cache, nothing left by
earlier runs) and no other step:

- the first command after the install (one TREC-8 run, ``-m map -m P_10``), once;
- ``--reps`` fresh commands of each workload below, alternated with the pytrec_eval
  script (``peers.py``, this interpreter's pytrec_eval) and the trec_eval binary
  (``TREC_EVAL`` or ``trec_eval`` on the PATH; one process per run file);
- with ``--wheel``, a wheel built from the clone, installed into another venv, and
  its first command run from a folder outside the checkout.

Workloads: ``trec8-one`` (one run, map + P_10), ``trec8-text``, ``trec8-gz``,
``trec8-parquet`` (all 129 runs; seven measures) and ``msmarco4``, as in
``archive_scale.py``. Every row: median wall, CPU (user + system) and peak RSS.

Usage::

    TREC_EVAL=/path/to/trec_eval python benchmarks/fresh_install.py --reps 5 --wheel --write

``--write`` replaces the "Fresh install" section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import archive_scale as scale  # noqa: E402

SECTION = "## Fresh install"
WORKLOADS = "trec8-one,trec8-text,trec8-gz,trec8-parquet,msmarco4"


def _timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> scale.Sample:
    """One child process, outside this checkout's PYTHONPATH: wall, CPU, peak RSS."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd or Path.cwd()
        )
        _, status, use = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            msg = f"{' '.join(cmd[:4])} ... failed: {err.read().decode()[-500:]}"
            raise RuntimeError(msg)
    return scale.Sample(wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024.0)


def set_up(root: Path) -> tuple[Path, float]:
    """A fresh clone of HEAD in ``root`` and the README's set-up; (its venv's bin, seconds)."""
    clone = root / "fasteval"
    subprocess.run(["git", "clone", "-q", str(scale.REPO), str(clone)], check=True)
    t0 = time.perf_counter()
    subprocess.run(
        "python3 -m venv .venv && .venv/bin/pip install -q -e .",
        shell=True,
        check=True,
        cwd=clone,
        env=_clean_env(root / "home"),
    )
    return clone / ".venv" / "bin", time.perf_counter() - t0


def _clean_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    # a new user's shell: no kernel or bytecode settings of this machine's (the sandbox's
    # PYTHONDONTWRITEBYTECODE made every command compile fasteval's modules from source)
    drop = (
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "FASTEVAL_AOT",
        "FASTEVAL_AOT_DIR",
        "NUMBA_CACHE_DIR",
        "VIRTUAL_ENV",
    )
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["HOME"] = str(home)
    return env


def wheel(root: Path, clone: Path) -> tuple[float, scale.Sample]:
    """Build a wheel from the clone, install it into a new venv; (build + install seconds,
    the first command from a folder outside any checkout)."""
    env = _clean_env(root / "home-wheel")
    t0 = time.perf_counter()
    dist = root / "dist"
    py = clone / ".venv" / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(clone)],
                   check=True, env=env)  # fmt: skip
    venv = root / "wheel-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    whl = next(dist.glob("fasteval-*.whl"))
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(whl)], check=True, env=env)
    seconds = time.perf_counter() - t0
    qrels, run, _ = scale.workload("trec8-one")
    outside = root / "elsewhere"
    outside.mkdir()
    cmd = [str(venv / "bin" / "fasteval"), "eval", str(qrels), str(run), "-m", "map", "-m", "P_10"]
    return seconds, _timed(cmd, env, cwd=outside)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=WORKLOADS)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--wheel", action="store_true", help="also a wheel, outside the checkout")
    ap.add_argument("--write", action="store_true", help="replace the section in RESULTS.md")
    args = ap.parse_args(argv)
    binary = os.environ.get("TREC_EVAL") or scale.shutil.which("trec_eval")
    names = args.workloads.split(",")
    inputs = {n: scale.workload(n) for n in names}  # made (and ingested) before timing
    load0 = os.getloadavg()
    rows: list[dict] = []
    extra: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fresh-install-") as d:
        root = Path(d)
        bin_dir, install = set_up(root)
        env = _clean_env(root / "home")
        print(f"install: {install:.1f} s", file=sys.stderr)
        extra.append(f"- `pip install -e .` in the fresh clone: **{install:.1f} s**.")
        q1, r1, _ = inputs.get("trec8-one") or scale.workload("trec8-one")
        scale.warm([q1, r1])
        first = _timed([str(bin_dir / "fasteval"), "eval", str(q1), str(r1), "-m", "map",
                        "-m", "P_10"], env)  # fmt: skip
        extra.append(
            f"- The first command after it (one TREC-8 run, map + P_10): **{first.wall:.2f} s** "
            f"wall, {first.cpu:.2f} s CPU, {first.rss_mb:.0f} MB."
        )
        for name in names:
            qrels, runs, measures = inputs[name]
            lines = scale.count_lines(runs)
            scale.warm([qrels, runs])
            fe = [str(bin_dir / "fasteval"), "eval", str(qrels), str(runs)]
            for m in measures:
                fe += ["-m", m]
            if name != "trec8-one":
                fe += ["-q", "--format", "parquet", "-o", str(root / "fe.parquet")]
            samples: dict[str, list[scale.Sample]] = {}
            for _ in range(args.reps):
                samples.setdefault("fasteval", []).append(_timed(fe, env))
                if name != "trec8-parquet":
                    out = root / "pytrec.json"
                    samples.setdefault("pytrec_eval", []).append(
                        scale.pytrec(qrels, runs, measures, out)
                    )
                    if binary is not None and name != "trec8-gz":
                        samples.setdefault("trec_eval", []).append(
                            scale.trec_eval(binary, qrels, runs, measures)
                        )
            rows += scale.summarise(name, lines, samples)
            for r in rows[-len(samples) :]:
                print(f"{name} {r['tool']}: {r['wall']:.2f} s", file=sys.stderr)
        if args.wheel:
            seconds, ws = wheel(root, bin_dir.parents[1])
            extra.append(
                f"- A wheel built from the clone and installed into a new venv ({seconds:.1f} s),"
                f" its first command run outside the checkout: **{ws.wall:.2f} s** wall, "
                f"{ws.cpu:.2f} s CPU, {ws.rss_mb:.0f} MB."
            )
    load1 = os.getloadavg()
    trec8_text = next(
        (r["wall"] for r in rows if r["workload"] == "trec8-text" and r["tool"] == "fasteval"),
        None,
    )
    parquet = next(
        (r["wall"] for r in rows if r["workload"] == "trec8-parquet" and r["tool"] == "fasteval"),
        None,
    )
    if trec8_text and parquet:
        extra.append(f"- The Parquet archive against the text files: {parquet / trec8_text:.2f}x.")
    body = "\n".join(
        [
            SECTION,
            "",
            f"Measured at {scale.commit()} on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
            f" (load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end): a fresh "
            "clone, the README's set-up command only, `HOME` an empty folder, nothing else. "
            f"Medians of {args.reps} fresh processes, the tools alternated. Command: "
            "`TREC_EVAL=... python benchmarks/fresh_install.py --reps "
            f"{args.reps}{' --wheel' if args.wheel else ''} --write`.",
            "",
            *extra,
            "",
            scale.table(rows),
            "",
        ]
    )
    print(body)
    if args.write:
        scale.SECTION = SECTION
        scale.write_section(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
