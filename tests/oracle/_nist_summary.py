"""Read the 1999 NIST per-run summaries (old, pre-v9 trec_eval text format).

A summary holds a line saying whether the run was pooled, one block per topic
and an ``all`` block (Retrieved / Relevant / Rel_ret, interpolated precision at
the 11 recall levels, average precision, P at 5..1000 documents, R-precision),
then a table of per-topic statistics over the run's category ("Statistics
computed over 20 automatic ad hoc runs that used just the title."): number of
relevant documents, and best / median / worst relevant retrieved at 100 and at
1000 documents and average precision.

Values are kept as the printed strings, so tests compare at the printed
precision.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

BLOCK = re.compile(r"Queryid \(Num\):\s+(\S+)\s+(\S+)\n(.*?)(?=\nQueryid|\nStatistics|\Z)", re.S)
COUNTS = re.compile(r"(Retrieved|Relevant|Rel_ret):\s+(\d+)")
LEVEL = re.compile(r"at (\d\.\d\d)\s+(\S+)")
AP = re.compile(r"Average precision \(non-interpolated\)[^\n]*\n\s+(\S+)")
PREC = re.compile(r"At\s+(\d+) docs:\s+(\S+)")
RPREC = re.compile(r"Exact:\s+(\S+)")
STATS = re.compile(r"Statistics computed over (\d+) (.*?)\n\n", re.S)
STATS_ROW = re.compile(r"^(\d+)\s+(\d+)((?:\s+\S+){9})\s*$", re.M)

COUNT_MEASURE = {"Retrieved": "num_ret", "Relevant": "num_rel", "Rel_ret": "num_rel_ret"}
STATS_COLUMNS = (
    "rel_ret_100_best",
    "rel_ret_100_median",
    "rel_ret_100_worst",
    "rel_ret_1000_best",
    "rel_ret_1000_median",
    "rel_ret_1000_worst",
    "map_best",
    "map_median",
    "map_worst",
)


@dataclass
class Summary:
    """One run's 1999 summary, as printed."""

    run_id: str
    judged: bool
    # (topic or "all", fasteval measure name) -> printed value
    values: dict[tuple[str, str], str] = field(default_factory=dict)
    n_group: int = 0
    group: str = ""  # on one line
    group_text: str = ""  # as printed (may span lines)
    # topic -> {"num_rel": ..., "map_median": ...}
    stats: dict[str, dict[str, str]] = field(default_factory=dict)


def read_summary(path: Path) -> Summary:
    """Parse one ``summary.<runid>.gz`` file."""
    with gzip.open(path, "rt") as f:
        text = f.read()
    blocks = BLOCK.findall(text)
    if not blocks:
        msg = f"{path}: no 'Queryid (Num):' blocks"
        raise ValueError(msg)
    s = Summary(run_id=blocks[0][1], judged="NOT judged" not in text.split("\n", 1)[0])
    for qid, run_id, body in blocks:
        if run_id != s.run_id:
            msg = f"{path}: block for {run_id!r} in the summary of {s.run_id!r}"
            raise ValueError(msg)
        for name, v in COUNTS.findall(body):
            s.values[(qid, COUNT_MEASURE[name])] = v
        for level, v in LEVEL.findall(body):
            s.values[(qid, f"iprec_at_recall_{level}")] = v
        s.values[(qid, "map")] = AP.search(body)[1]
        s.values[(qid, "Rprec")] = RPREC.search(body)[1]
        for k, v in PREC.findall(body):
            s.values[(qid, f"P_{k}")] = v
    m = STATS.search(text)
    if m:
        s.n_group = int(m[1])
        s.group = " ".join(m[2].split())
        s.group_text = m[2]
        for row in STATS_ROW.finditer(text[m.end() :]):
            cells = row[3].split()
            s.stats[row[1]] = {"num_rel": row[2], **dict(zip(STATS_COLUMNS, cells, strict=True))}
    return s


def read_summaries(folder: Path) -> dict[str, Summary]:
    """Every ``summary.*.gz`` in ``folder``, by run id."""
    out = {}
    for path in sorted(folder.glob("summary.*.gz")):
        s = read_summary(path)
        out[s.run_id] = s
    return out
