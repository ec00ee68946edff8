"""The benchmark figure and tables of the documentation, from the recorded results.

Reads the side-by-side table of the "Archive scale" section of
``benchmarks/RESULTS.md`` (written by ``benchmarks/archive_scale.py --write``),
its date and the commands that produced it, and draws wall time and peak memory
per workload and tool. The documentation build calls it (``docs/hooks``); by hand::

    python scripts/benchmark_plots.py -o benchmarks.png

Nothing here is measured or typed in: change RESULTS.md and the page follows.
"""

from __future__ import annotations

import argparse
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Archive scale"
TOOLS = ("fasteval", "pytrec_eval", "trec_eval")

# what each workload of benchmarks/archive_scale.py is, for the reader
LABELS = {
    "trec8-text": "TREC-8, 129 runs, plain text",
    "trec8-gz": "TREC-8, 129 runs, gzipped as distributed",
    "trec8-parquet": "TREC-8, 129 runs, `fasteval ingest` archive",
    "trec8-one": "one TREC-8 run, `-m map -m P_10`",
    "msmarco4": "MS MARCO dev shape, 4 runs x 6,980 queries x 1,000",
    "msmarco50": "MS MARCO dev shape, 50 runs",
    "synthetic100": "synthetic, 100 runs",
    "synthetic400": "synthetic, 400 runs",
    "synthetic2000": "synthetic, 2,000 runs",
}


@dataclass
class Results:
    """The recorded side-by-side measurements."""

    date: str
    commands: list[str]
    # workload -> tool -> {"lines", "wall", "cpu", "rss"}
    rows: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def _number(cell: str) -> float:
    return float(cell.replace(",", "").replace("x", "").strip())


def parse_results(path: Path) -> Results:
    """The first side-by-side table of RESULTS.md's "Archive scale" section."""
    text = path.read_text()
    start = text.find(f"\n{SECTION}\n")
    if start < 0:
        msg = f"{path}: no '{SECTION}' section"
        raise ValueError(msg)
    section = text[start + 1 :]
    nxt = re.search(r"\n## ", section[len(SECTION) :])
    if nxt:
        section = section[: len(SECTION) + nxt.start()]
    lines = section.splitlines()
    header = next(
        (i for i, ln in enumerate(lines) if re.match(r"\|\s*workload\s*\|.*\|\s*tool\s*\|", ln)),
        None,
    )
    if header is None:
        msg = f"{path}: no 'workload | ... | tool |' table in '{SECTION}'"
        raise ValueError(msg)
    before = "\n".join(lines[:header])
    date = re.search(r"\d{4}-\d{2}-\d{2}", before)
    commands = [
        ln.strip() for ln in lines[:header] if re.match(r"\s{4}\S*\s*python benchmarks/", ln)
    ]
    if date is None or not commands:
        msg = f"{path}: the '{SECTION}' table lacks its date or its commands"
        raise ValueError(msg)
    names = [c.strip() for c in lines[header].strip("|").split("|")]
    col = {n.split(" (")[0]: i for i, n in enumerate(names)}
    out = Results(date=date.group(0), commands=commands)
    for ln in lines[header + 2 :]:
        if not ln.startswith("|"):
            break
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        out.rows.setdefault(cells[col["workload"]], {})[cells[col["tool"]]] = {
            "lines": _number(cells[col["lines"]]),
            "wall": _number(cells[col["wall"]]),
            "cpu": _number(cells[col["CPU"]]),
            "rss": _number(cells[col["peak RSS"]]),
        }
    return out


def table_markdown(res: Results) -> str:
    """Wall time per tool (ratio to fasteval) and fasteval's peak memory, per workload."""
    rows = [
        "| workload | lines | fasteval | pytrec_eval | trec_eval | fasteval peak memory |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for workload, tools in res.rows.items():
        fe = tools.get("fasteval")
        if fe is None:
            continue
        cells = []
        for tool in TOOLS:
            t = tools.get(tool)
            if t is None:
                cells.append("")
            elif tool == "fasteval":
                cells.append(f"{t['wall']:.2f} s")
            else:
                cells.append(f"{t['wall']:.2f} s ({t['wall'] / fe['wall']:.1f}x)")
        label = LABELS.get(workload, workload)
        rows.append(f"| {label} | {fe['lines']:,.0f} | {' | '.join(cells)} | {fe['rss']:,.0f} MB |")
    return "\n".join(rows)


def setup_markdown(res: Results) -> str:
    """The date and the commands of the recorded measurements."""
    cmds = "\n".join(res.commands)
    return f"Measured on {res.date} with:\n\n```text\n{cmds}\n```"


def plot_png(res: Results) -> bytes:
    """Two bar charts (wall time, peak memory) per workload and tool, as PNG bytes."""
    workloads = [w for w in res.rows if "fasteval" in res.rows[w]]
    x = np.arange(len(workloads))
    width = 0.8 / len(TOOLS)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, key, title in (
        (axes[0], "wall", "wall time (s, log scale)"),
        (axes[1], "rss", "peak memory (MB, log scale)"),
    ):
        for i, tool in enumerate(TOOLS):
            vals = [res.rows[w].get(tool, {}).get(key, np.nan) for w in workloads]
            ax.bar(x + (i - 1) * width, vals, width, label=tool)
        ax.set_yscale("log")
        ax.set_xticks(x, workloads, rotation=30, ha="right")
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"fasteval, pytrec_eval and trec_eval, whole processes ({res.date})")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    p.add_argument("-o", "--output", type=Path, default=Path("benchmarks.png"))
    args = p.parse_args()
    res = parse_results(args.results)
    args.output.write_bytes(plot_png(res))
    print(table_markdown(res))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
