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
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import polars as pl
import pyarrow as pa

from fasteval.columns import QrelsColumns
from fasteval.errors import InputFormatError, SchemaError
from fasteval.io import coerce, need_columns
from fasteval.io.tables import qrels_from_table
from fasteval.io.tokens import Fields, read_judgments

LAYOUT = "qid jg docno rel"
QRELS_JG_LINE = Fields([0, 1, 2], 3, -1, -1)


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


def _check_duplicates(jg: QrelsJG, where: Callable[[int], str]) -> None:
    seen: dict[tuple[str, str, str], int] = {}
    for i, key in enumerate(zip(jg.qid, jg.group, jg.doc, strict=True)):
        if key in seen:
            msg = (
                f"{where(i)}: document {key[2]!r} judged twice for query {key[0]!r} in "
                f"judgment group {key[1]!r} (first at {where(seen[key])})"
            )
            raise InputFormatError(msg)
        seen[key] = i


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
    said = ("qrels_jg", LAYOUT, "relevance")
    tok, rel = read_judgments([path], QRELS_JG_LINE, lenient, said)
    qid, group, doc = (tok.field(j).to_arrow().to_pylist() for j in range(3))
    out = QrelsJG(qid, group, doc, rel.tolist(), os.fspath(path))
    _check_duplicates(out, tok.where)
    return out


def qrels_jg_from_frame(df: pl.DataFrame, name: str = "<table>") -> QrelsJG:
    """Judgments from a frame with ``query_id, judgment_group, doc_id, relevance``."""
    need = ["query_id", "judgment_group", "doc_id", "relevance"]
    need_columns(df.columns, need, name, "qrels_jg")
    if df.select(need).null_count().sum_horizontal()[0]:
        msg = f"{name}: qrels_jg table has null values"
        raise SchemaError(msg)
    if not df["relevance"].dtype.is_integer():
        msg = f"{name}: column 'relevance' must be integer, found {df['relevance'].dtype}"
        raise SchemaError(msg)
    if df.height == 0:
        msg = f"{name}: the qrels are empty"
        raise InputFormatError(msg)
    qid, group, doc = ([str(x) for x in df[c]] for c in need[:3])
    out = QrelsJG(qid, group, doc, df["relevance"].to_list(), name)
    _check_duplicates(out, lambda i: f"{name}, row {i + 1}")
    return out


def as_qrels_jg(x: Any, *, lenient: bool = False) -> QrelsJG:
    """A :class:`QrelsJG` from a path, a polars frame or a :class:`QrelsJG`."""
    return coerce(
        x, QrelsJG, "qrels_jg", qrels_jg_from_frame, partial(read_qrels_jg, lenient=lenient)
    )
