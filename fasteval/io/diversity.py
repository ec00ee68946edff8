"""Diversity qrels: ``topic subtopic docno judgment`` (TREC Web track 2009-2014, ndeval).

The text format has the shape of ordinary qrels, with the second column holding
a subtopic (intent) number instead of the ignored ``iter`` field. Tables and
Parquet files use the columns ``query_id: str, subtopic: int or str,
doc_id: str, relevance: int``.

Subtopics are kept as ``int32``: their own value when every subtopic is a
natural number (ndeval requires that), otherwise a code in order of first
appearance with the labels kept in :attr:`DiversityQrels.subtopic_names`
(pyndeval accepts any label and numbers them that way). Judgments are kept as
given; measures decide what is relevant (``grade >= relevance_level``; ndeval
clamps grades above 1 to 1, and a negative grade is judged non-relevant).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from fasteval.columns import Source, StrColumn, dict_encode
from fasteval.errors import InputFormatError
from fasteval.io.files import PathLike
from fasteval.io.formats import is_parquet
from fasteval.io.tokens import Fields, read_judgments
from fasteval.io.validate import judgments, str_column, table_source, to_arrow

DIVERSITY_LINE = Fields([0, 1, 2], 3, -1, -1)  # topic subtopic docno judgment


@dataclass
class DiversityQrels:
    """Parsed diversity qrels: one row per (query, subtopic, document) judgment."""

    qid: StrColumn
    subtopic: np.ndarray  # int32: the subtopic number, or a first-appearance code
    doc: StrColumn
    rel: np.ndarray  # int32 grade as given
    source: Source
    subtopic_names: list[str] | None = None  # labels of the codes when subtopics are not numbers

    def __len__(self) -> int:
        return int(self.rel.shape[0])

    def subtopic_label(self, value: int) -> str:
        """The subtopic as the input spelled it."""
        return str(value) if self.subtopic_names is None else self.subtopic_names[value]


def _subtopics(col: StrColumn) -> tuple[np.ndarray, list[str] | None]:
    """Subtopic numbers, or first-appearance codes and labels when some are not numbers."""
    codes, first = dict_encode(col)
    labels = col.take(first).to_pylist()
    values = [int(s) if s.isascii() and s.isdigit() and len(s) <= 9 else None for s in labels]
    if all(v is not None for v in values):
        lut = np.array(values, dtype=np.int32)
        return lut[codes] if codes.size else codes, None
    return codes.astype(np.int32), labels


def parse_diversity_files(paths: list[PathLike], *, lenient: bool = False) -> DiversityQrels:
    """Parse diversity qrels files (``topic subtopic docno judgment``, plain or gzip).

    Raises
    ------
    InputFormatError
        Naming the file, line and value of the first malformed line (fewer than
        four columns, a judgment that is not an integer), unless ``lenient``.
    """
    said = ("diversity qrels", "topic subtopic docno judgment", "judgment")
    tok, rel = read_judgments(paths, DIVERSITY_LINE, lenient, said)
    sub, names = _subtopics(tok.field(1))
    return DiversityQrels(tok.field(0), sub, tok.field(2), rel, tok.source(), names)


def diversity_from_table(table: pa.Table, name: str) -> DiversityQrels:
    """Diversity qrels from an Arrow table ``query_id, subtopic, doc_id, relevance``."""
    cols = {"query_id": "str", "subtopic": "int or str", "doc_id": "str", "relevance": "int"}
    rel = judgments(table, name, cols, "diversity qrels")
    sub = table.column("subtopic")
    if pa.types.is_integer(sub.type):
        sv = sub.to_numpy().astype(np.int64)
        if (sv < 0).any() or (sv > np.iinfo(np.int32).max).any():
            r = int(np.flatnonzero((sv < 0) | (sv > np.iinfo(np.int32).max))[0])
            msg = f"{name}, row {r + 1}: subtopic must be a natural number, got {int(sv[r])}"
            raise InputFormatError(msg)
        subtopic, names = sv.astype(np.int32), None
    else:
        subtopic, names = _subtopics(str_column(table, name, "subtopic"))
    return DiversityQrels(
        str_column(table, name, "query_id"),
        subtopic,
        str_column(table, name, "doc_id"),
        rel,
        table_source(name),
        names,
    )


def diversity_qrels_columns(x: Any, *, lenient: bool = False) -> DiversityQrels:
    """Diversity qrels from a text/.gz/Parquet path, a polars DataFrame or an Arrow table."""
    if isinstance(x, DiversityQrels):
        return x
    if isinstance(x, (str, os.PathLike)) and not is_parquet(Path(x)):
        return parse_diversity_files([x], lenient=lenient)
    table, name = to_arrow(x, "diversity qrels")
    return diversity_from_table(table, name)


def load_diversity_qrels(source: Any, *, lenient: bool = False) -> pl.DataFrame:
    """Read diversity qrels into a polars DataFrame ``query_id, subtopic, doc_id, relevance``.

    Parameters
    ----------
    source
        A diversity qrels file (plain or .gz: ``topic subtopic docno judgment``),
        a Parquet file, a polars DataFrame or an Arrow table.
    lenient
        Skip malformed lines (reported in a warning) instead of raising.

    Returns
    -------
    polars.DataFrame
        ``subtopic`` is an integer column when every subtopic is a natural
        number, otherwise the labels as strings.
    """
    q = diversity_qrels_columns(source, lenient=lenient)
    if q.subtopic_names is None:
        sub = pa.array(q.subtopic, pa.int32())
    else:
        sub = pa.array(q.subtopic_names, pa.large_string()).take(pa.array(q.subtopic))
    t = pa.table(
        {
            "query_id": q.qid.to_arrow(),
            "subtopic": sub,
            "doc_id": q.doc.to_arrow(),
            "relevance": pa.array(q.rel, pa.int32()),
        }
    )
    return pl.from_arrow(t)  # type: ignore[return-value]
