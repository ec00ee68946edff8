"""trec_eval's z-score file (``-Z``): per query and measure, a reference mean and stddev.

Format (trec_eval ``get_zscores.c``): one line per (query, measure),
``qid measure_name mean stddev``, fields separated by blanks. fasteval also
skips blank lines and lines starting with ``#`` (as it does in qrels), and
is stricter than trec_eval's ``atof``: a mean or stddev that is not a number
(``nan`` and ``inf`` are numbers: trec_eval 9.0.8's own z-score file has
``nan`` entries, which give ``nan`` z-scores), a negative stddev, a line
without exactly four fields and a repeated (query, measure) pair are errors
naming the file, the line and the value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fasteval.errors import InputFormatError
from fasteval.io import coerce, need_columns
from fasteval.io.files import content_lines

if TYPE_CHECKING:
    import polars as pl

# trec_eval's MISSING_ZSCORE_VALUE: printed when no (finite) z-score can be formed
MISSING_ZSCORE = -1000000.0


@dataclass(frozen=True)
class ZScores:
    """Reference means and standard deviations, keyed by ``(query_id, measure)``."""

    table: dict[tuple[str, str], tuple[float, float]]
    name: str = "<table>"

    def __len__(self) -> int:
        return len(self.table)


def _number(text: str, what: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        msg = f"{where}: {what} {text!r} is not a number"
        raise InputFormatError(msg) from None


def _checked(rows: Iterable[tuple[Any, ...]], name: str) -> ZScores:
    """Z-scores from ``(where, place, qid, measure, mean, stddev)`` rows, checked (``where``
    names a row in messages, ``place`` its place for a repeat's message)."""
    table: dict[tuple[str, str], tuple[float, float]] = {}
    first: dict[tuple[str, str], str] = {}
    for where, place, qid, meas, mean_v, std_v in rows:
        mean = _number(str(mean_v), "mean", where)
        std = _number(str(std_v), "stddev", where)
        if std < 0.0:
            msg = f"{where}: stddev {std_v!r} is negative"
            raise InputFormatError(msg)
        key = (str(qid), str(meas))
        if key in table:
            msg = f"{where}: query {qid!r} measure {meas!r} repeated (first {first[key]})"
            raise InputFormatError(msg)
        table[key] = (mean, std)
        first[key] = place
    return ZScores(table, name)


def read_zscores(path: str | os.PathLike[str]) -> ZScores:
    """Read a trec_eval z-score file.

    Parameters
    ----------
    path
        A text file (optionally gzip-compressed) of ``qid measure mean stddev`` lines.

    Returns
    -------
    ZScores

    Raises
    ------
    InputFormatError
        For an unreadable file or a malformed line (file, line and value named).
    """
    name = os.fspath(path)
    rows = []
    for no, line, fields in content_lines(path):
        if len(fields) != 4:
            msg = (
                f"{name}:{no}: expected 4 fields (qid measure mean stddev), found "
                f"{len(fields)}: {line.strip()[:200]!r}"
            )
            raise InputFormatError(msg)
        rows.append((f"{name}:{no}", f"on line {no}", *fields))
    if not rows:
        msg = f"{name}: no z-score lines"
        raise InputFormatError(msg)
    return _checked(rows, name)


def zscores_from_frame(df: pl.DataFrame, name: str = "<table>") -> ZScores:
    """Z-score reference from a frame with columns ``query_id, measure, mean, stddev``."""
    need = ["query_id", "measure", "mean", "stddev"]
    need_columns(df.columns, need, name, "z-score")
    rows = enumerate(df.select(need).iter_rows(), start=1)
    return _checked(((f"{name}, row {i}", f"at row {i}", *r) for i, r in rows), name)


def as_zscores(x: Any) -> ZScores:
    """A :class:`ZScores` from a path, a polars frame or a :class:`ZScores`."""
    return coerce(x, ZScores, "zscores", zscores_from_frame, read_zscores)
