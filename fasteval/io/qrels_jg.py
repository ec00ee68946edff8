"""Qrels with judgment groups (trec_eval ``-R qrels_jg``).

Format (trec_eval ``get_qrels_jg.c``): ``qid jg docno rel``, the second field
naming a judgment group (for instance one assessor) instead of being ignored
as in plain qrels. A query may be judged by several groups, each a complete
set of judgments of its own. Blank lines and lines whose first non-blank
character is ``#`` are skipped (trec_eval 10; a ``#`` inside a docno is
kept); extra columns are ignored. A repeated (qid, jg, docno), a relevance
that is not an integer and a line of fewer than four fields are errors naming
the file, the line and the value (``lenient=True`` skips bad lines and says
how many).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from fasteval.columns import QrelsColumns
from fasteval.errors import InputFormatError, SchemaError
from fasteval.io.files import content_lines, warn_skipped
from fasteval.io.tables import qrels_from_table
from fasteval.io.tokens import (
    RUN_FIELDS,
    header_message,
    is_number,
    is_run_line,
    run_layout_message,
)

LAYOUT = "qid jg docno rel"


@dataclass(frozen=True)
class QrelsJG:
    """Judgments with their judgment group: one entry per line, in file order."""

    qid: list[str]
    group: list[str]
    doc: list[str]
    rel: list[int]
    name: str

    def __len__(self) -> int:
        return len(self.rel)

    def groups_per_query(self) -> dict[str, list[str]]:
        """Each query's judgment groups, sorted as trec_eval sorts them (by bytes)."""
        out: dict[str, set[str]] = {}
        for q, g in zip(self.qid, self.group, strict=True):
            out.setdefault(q, set()).add(g)
        return {q: sorted(gs, key=lambda s: s.encode()) for q, gs in out.items()}

    def passes(self) -> list[QrelsColumns]:
        """Plain qrels, one per pass: pass ``j`` holds the ``j``-th group of every query.

        Evaluating a run against every pass and averaging a query's values over
        its groups gives trec_eval's ``*_avgjg`` measures.
        """

        rank = {(q, g): j for q, gs in self.groups_per_query().items() for j, g in enumerate(gs)}
        which = [rank[(q, g)] for q, g in zip(self.qid, self.group, strict=True)]
        out = []
        for j in range(max(which) + 1):
            rows = [i for i, w in enumerate(which) if w == j]
            table = pa.table(
                {
                    "query_id": pa.array([self.qid[i] for i in rows], pa.large_string()),
                    "doc_id": pa.array([self.doc[i] for i in rows], pa.large_string()),
                    "relevance": pa.array([self.rel[i] for i in rows], pa.int32()),
                }
            )
            out.append(qrels_from_table(table, f"{self.name} (judgment group pass {j + 1})"))
        return out


def _check_duplicates(jg: QrelsJG, where: list[str]) -> None:
    seen: dict[tuple[str, str, str], int] = {}
    for i, key in enumerate(zip(jg.qid, jg.group, jg.doc, strict=True)):
        if key in seen:
            msg = (
                f"{where[i]}: document {key[2]!r} judged twice for query {key[0]!r} in "
                f"judgment group {key[1]!r} (first at {where[seen[key]]})"
            )
            raise InputFormatError(msg)
        seen[key] = i


def _grade(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def _check_layout(name: str, lines: list[tuple[int, list[str]]], lenient: bool) -> None:
    """A run file (every line 6+ columns, the first a run line) or a header line: one message."""
    if not lines:
        return
    no, fields = lines[0]
    if is_run_line(fields) and all(len(f) >= RUN_FIELDS for _, f in lines):
        msg = run_layout_message(f"{name}:{no}", fields, "qrels_jg", LAYOUT)
        raise InputFormatError(msg)
    after = lines[1][1] if len(lines) > 1 else []
    header = len(fields) >= 4 and not is_number(fields[3])
    if not lenient and header and len(after) >= 4 and _grade(after[3]) is not None:
        line = " ".join(fields)[:200]
        raise InputFormatError(header_message(f"{name}:{no}", line, LAYOUT))


def read_qrels_jg(path: str | os.PathLike[str], *, lenient: bool = False) -> QrelsJG:
    """Read a qrels file with judgment groups (``qid jg docno rel``).

    Parameters
    ----------
    path
        Text file, optionally gzip-compressed.
    lenient
        Skip malformed lines (counted in a warning) instead of raising.

    Returns
    -------
    QrelsJG

    Raises
    ------
    InputFormatError
        For a malformed line, a repeated judgment, or a file without judgments.
    """
    name = os.fspath(path)
    lines = [(no, fields) for no, _, fields in content_lines(path)]
    _check_layout(name, lines, lenient)
    out = QrelsJG([], [], [], [], name)
    where: list[str] = []
    skipped = 0
    for no, fields in lines:
        grade = _grade(fields[3]) if len(fields) >= 4 else None
        if grade is None:
            if lenient:
                skipped += 1
                continue
            problem = (
                f"expected at least 4 columns ({LAYOUT}), found {len(fields)}"
                if len(fields) < 4
                else f"relevance is not an integer: {fields[3]!r}"
            )
            msg = f"{name}:{no}: {problem}"
            raise InputFormatError(msg)
        out.qid.append(fields[0])
        out.group.append(fields[1])
        out.doc.append(fields[2])
        out.rel.append(grade)
        where.append(f"{name}:{no}")
    warn_skipped(name, skipped, "qrels_jg")
    if not out.rel:
        msg = f"{name}: no valid qrels_jg lines"
        raise InputFormatError(msg)
    _check_duplicates(out, where)
    return out


def qrels_jg_from_frame(df: pl.DataFrame, name: str = "<table>") -> QrelsJG:
    """Judgments from a frame with ``query_id, judgment_group, doc_id, relevance``."""
    need = ["query_id", "judgment_group", "doc_id", "relevance"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        msg = f"{name}: qrels_jg table lacks column(s) {', '.join(missing)}"
        raise SchemaError(msg)
    if df.select(need).null_count().sum_horizontal()[0]:
        msg = f"{name}: qrels_jg table has null values"
        raise SchemaError(msg)
    if not df["relevance"].dtype.is_integer():
        msg = f"{name}: column 'relevance' must be integer, found {df['relevance'].dtype}"
        raise SchemaError(msg)
    if df.height == 0:
        msg = f"{name}: the qrels are empty"
        raise InputFormatError(msg)
    out = QrelsJG(
        [str(x) for x in df["query_id"]],
        [str(x) for x in df["judgment_group"]],
        [str(x) for x in df["doc_id"]],
        [int(x) for x in df["relevance"]],
        name,
    )
    _check_duplicates(out, [f"{name}, row {i + 1}" for i in range(df.height)])
    return out


def as_qrels_jg(x: Any, *, lenient: bool = False) -> QrelsJG:
    """A :class:`QrelsJG` from a path, a polars frame or a :class:`QrelsJG`."""
    if isinstance(x, QrelsJG):
        return x
    if isinstance(x, pl.DataFrame):
        return qrels_jg_from_frame(x)
    if isinstance(x, (str, os.PathLike)):
        return read_qrels_jg(x, lenient=lenient)
    msg = f"qrels_jg must be a path, a polars DataFrame or QrelsJG, got {type(x).__name__}"
    raise SchemaError(msg)
