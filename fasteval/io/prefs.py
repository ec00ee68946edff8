"""Preference judgments (trec_eval ``-R prefs`` and ``-R qrels_prefs``).

``prefs`` (trec_eval ``get_prefs.c``): ``qid jg jsg docno rel_level`` lines. A
judgment group (``jg``, for instance one user) holds judgment sub-groups
(``jsg``); within a sub-group a document with a higher ``rel_level`` (a
number) is preferred to one with a lower level; a group's preferences are the
transitive closure of its sub-groups'. ``rel_level`` 0 marks a non-relevant
document, and some measures treat those apart.

``qrels_prefs`` (``get_qrels_prefs.c``): an ordinary qrels file ``qid jg docno
rel`` read as preferences, the second field naming the judgment group and one
sub-group per group: every relevant document is preferred to every
non-relevant one (and higher grades to lower).

Blank lines and lines whose first non-blank character is ``#`` are skipped (trec_eval
10); a line with too few or too many fields, or a level that is not a number,
is an error naming the file, the line and the value (``lenient=True`` skips
such lines and says how many).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import polars as pl

from fasteval.errors import FastevalWarning, InputFormatError, SchemaError
from fasteval.io import coerce, need_columns
from fasteval.io.files import content_lines

PREFS_FORMATS = ("prefs", "qrels_prefs")
_FIELDS = {"prefs": 5, "qrels_prefs": 4}
_LAYOUT = {"prefs": "qid jg jsg docno rel_level", "qrels_prefs": "qid jg docno rel"}
FRAME_COLUMNS = ("query_id", "judgment_group", "subgroup", "doc_id", "relevance")


@dataclass(frozen=True)
class Prefs:
    """Preference judgments: one entry per line, in file order.

    Attributes
    ----------
    qid, jg, jsg, doc
        Query, judgment group, judgment sub-group and document of each line.
    rel
        The line's ``rel_level`` (float64).
    name
        Where they came from (a path, or ``<table>``).
    """

    qid: list[str]
    jg: list[str]
    jsg: list[str]
    doc: list[str]
    rel: np.ndarray
    name: str

    def __len__(self) -> int:
        return len(self.doc)

    def queries(self) -> list[str]:
        """The judged queries, sorted as trec_eval sorts them (by bytes)."""
        return sorted(set(self.qid), key=lambda s: s.encode())

    def by_query(self) -> dict[str, list[int]]:
        """The line numbers (0-based) of each query."""
        out: dict[str, list[int]] = {}
        for i, q in enumerate(self.qid):
            out.setdefault(q, []).append(i)
        return out


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if np.isfinite(v) else None


def read_prefs(
    path: str | os.PathLike[str], *, rel_format: str = "prefs", lenient: bool = False
) -> Prefs:
    """Read preference judgments in trec_eval's ``prefs`` or ``qrels_prefs`` format.

    Parameters
    ----------
    path
        Text file, optionally gzip-compressed.
    rel_format
        ``"prefs"`` (``qid jg jsg docno rel_level``) or ``"qrels_prefs"``
        (``qid jg docno rel``; one sub-group ``"0"`` per group).
    lenient
        Skip malformed lines (counted in a warning) instead of raising.

    Raises
    ------
    InputFormatError
        For a malformed line (file, line number and value named) or a file
        without judgments.
    """
    if rel_format not in PREFS_FORMATS:
        msg = f"unknown preference format {rel_format!r}; choose one of {', '.join(PREFS_FORMATS)}"
        raise SchemaError(msg)
    name = os.fspath(path)
    n_fields = _FIELDS[rel_format]
    qid: list[str] = []
    jg: list[str] = []
    jsg: list[str] = []
    doc: list[str] = []
    rel: list[float] = []
    skipped = 0
    for no, line, fields in content_lines(path):
        level = _number(fields[-1]) if len(fields) == n_fields else None
        if level is None:
            if lenient:
                skipped += 1
                continue
            problem = (
                f"expected {n_fields} columns ({_LAYOUT[rel_format]}), found {len(fields)}: "
                f"{line.strip()[:200]!r}"
                if len(fields) != n_fields
                else f"rel_level is not a number: {fields[-1]!r}"
            )
            msg = f"{name}:{no}: {problem}"
            raise InputFormatError(msg)
        qid.append(fields[0])
        jg.append(fields[1])
        jsg.append(fields[2] if rel_format == "prefs" else "0")
        doc.append(fields[-2])  # docno: the field before the level in both layouts
        rel.append(level)
    if skipped:
        msg = f"{name}: skipped {skipped} malformed {rel_format} line(s)"
        warnings.warn(msg, FastevalWarning, stacklevel=2)
    if not rel:
        msg = f"{name}: no valid {rel_format} lines"
        raise InputFormatError(msg)
    return Prefs(qid, jg, jsg, doc, np.asarray(rel, np.float64), name)


def prefs_from_frame(df: pl.DataFrame, name: str = "<table>") -> Prefs:
    """Preferences from a frame with ``query_id, judgment_group, subgroup, doc_id, relevance``.

    ``subgroup`` may be left out (one sub-group per group, as ``qrels_prefs``).
    """
    cols = list(FRAME_COLUMNS)
    if "subgroup" not in df.columns:
        df = df.with_columns(pl.lit("0").alias("subgroup"))
    need_columns(df.columns, cols, name, "preference")
    df = df.select(
        *(pl.col(c).cast(pl.String) for c in cols[:4]), pl.col("relevance").cast(pl.Float64)
    )
    if df.null_count().sum_horizontal().item():
        msg = f"{name}: preference table has missing values"
        raise SchemaError(msg)
    return Prefs(
        df["query_id"].to_list(),
        df["judgment_group"].to_list(),
        df["subgroup"].to_list(),
        df["doc_id"].to_list(),
        df["relevance"].to_numpy().astype(np.float64),
        name,
    )


def as_prefs(x: Any, *, rel_format: str = "prefs", lenient: bool = False) -> Prefs:
    """A :class:`Prefs` from a path, a polars frame or a :class:`Prefs`."""
    read = partial(read_prefs, rel_format=rel_format, lenient=lenient)
    return coerce(x, Prefs, "preferences", prefs_from_frame, read)
