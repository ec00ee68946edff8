"""Qrels and runs from where users already hold them -> fasteval's fixed schemas.

Recognised inputs (besides the paths, polars frames and Arrow tables that
:mod:`fasteval.io.tables` reads itself):

* **pandas DataFrames**, converted through Arrow; pandas is never imported
  by fasteval (an object is recognised by its type's module), and any other
  object exporting the Arrow C stream interface (``__arrow_c_stream__``:
  DuckDB relations, pandas >= 2.2, ...) and polars ``LazyFrame`` s are read
  the same way;
* **dict-of-dicts** as pytrec_eval and ranx take them: qrels
  ``{qid: {doc_id: relevance}}``, a run ``{qid: {doc_id: score}}``, or
  several runs ``{run_id: {qid: {doc_id: score}}}``;
* **iterables of named tuples**: ir_datasets' ``qrels_iter()`` / ``scoreddocs_iter()``,
  ir_measures' ``Qrel`` / ``ScoredDoc`` (fields ``query_id, doc_id, relevance``
  / ``score``), or any records with the column names below;
* ranx ``Qrels`` / ``Run`` objects (their ``to_dict()`` and ``name``).

Column names of the ecosystem are recognised (first match wins):

=============  ==========================================================
``query_id``   ``query_id``, ``qid`` (PyTerrier), ``q_id``, ``topic``
``doc_id``     ``doc_id``, ``docno`` (PyTerrier), ``docid``, ``did``
``relevance``  ``relevance``, ``label`` (PyTerrier), ``rel``, ``judgment``, ``grade``
``score``      ``score``
``rank``       ``rank``
``run_id``     ``run_id``, ``runid``, ``run``, ``system``, ``name``, ``tag``
=============  ==========================================================

PyTerrier's ``docid`` is its index's internal number; ``docno`` is the
document's name and wins when both are present. ``columns=`` maps names
explicitly (``{"my_qid": "query_id", ...}``). A run without a run id column
is named ``default_run`` (``"run"``; ``run1``, ``run2``, ... when several
are given at once, so that two unnamed runs are never merged).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import polars as pl
import pyarrow as pa

from fasteval.errors import InputFormatError, SchemaError

ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "q_id", "topic", "topic_id"),
    "doc_id": ("doc_id", "docno", "docid", "did"),
    "relevance": ("relevance", "label", "rel", "judgment", "grade"),
    "score": ("score",),
    "rank": ("rank",),
    "run_id": ("run_id", "runid", "run", "system", "name", "tag"),
}
QRELS_COLS = ("query_id", "doc_id", "relevance")
RUN_COLS = ("run_id", "query_id", "doc_id", "score", "rank")


def _module(x: Any) -> str:
    return type(x).__module__ or ""


def is_frame_like(x: Any) -> bool:
    """A pandas frame, a polars LazyFrame, or an object exporting an Arrow C stream."""
    if isinstance(x, (pl.DataFrame, pa.Table)):
        return False
    return (
        _module(x).startswith("pandas")
        or isinstance(x, pl.LazyFrame)
        or hasattr(x, "__arrow_c_stream__")
    )


def is_records(x: Any) -> bool:
    """A list/tuple of named tuples (e.g. ir_measures ``Qrel``), not a single record."""
    return (
        isinstance(x, (list, tuple))
        and not hasattr(x, "_fields")
        and len(x) > 0
        and hasattr(x[0], "_fields")
    )


def is_single_input(x: Any) -> bool:
    """Whether ``x`` is one qrels/run object this module reads (not a list of inputs).

    An iterator is not decided here (it cannot be looked into without being
    consumed): materialise it, then ask :func:`is_records`.
    """
    if isinstance(x, (str, bytes)):
        return False
    return (
        is_frame_like(x) or isinstance(x, Mapping) or is_records(x) or _module(x).startswith("ranx")
    )


def _frame_to_arrow(x: Any) -> pa.Table:
    if isinstance(x, pl.LazyFrame):
        return x.collect().to_arrow()
    if _module(x).startswith("pandas"):
        # by Arrow; the index is not data (PyTerrier frames carry a RangeIndex)
        return pa.Table.from_pandas(x, preserve_index=False)
    return pa.table(x)


def _dict_rows(x: Mapping[Any, Any], what: str) -> pa.Table:
    """Dict-of-dicts -> table (``{run: {qid: {doc: v}}}`` for several runs)."""
    value = "relevance" if what == "qrels" else "score"
    first = next(iter(x.values()), None)
    if not isinstance(first, Mapping):
        msg = (
            f"{what} dict: expected {{query_id: {{doc_id: {value}}}}}, "
            f"got values of type {type(first).__name__}"
        )
        raise SchemaError(msg)
    inner = next(iter(first.values()), None)
    cols: dict[str, list[Any]] = {"query_id": [], "doc_id": [], value: []}
    if what == "run" and isinstance(inner, Mapping):
        cols["run_id"] = []
        for run, qs in x.items():
            for q, docs in qs.items():
                for d, v in docs.items():
                    cols["run_id"].append(str(run))
                    cols["query_id"].append(str(q))
                    cols["doc_id"].append(str(d))
                    cols[value].append(v)
    else:
        for q, docs in x.items():
            if not isinstance(docs, Mapping):
                msg = (
                    f"{what} dict, query {q!r}: expected a dict {{doc_id: {value}}}, "
                    f"got {type(docs).__name__}"
                )
                raise SchemaError(msg)
            for d, v in docs.items():
                cols["query_id"].append(str(q))
                cols["doc_id"].append(str(d))
                cols[value].append(v)
    return _typed(cols, what, f"{what} dict")


def _typed(cols: dict[str, list[Any]], what: str, name: str) -> pa.Table:
    arrays = {}
    for k, v in cols.items():
        if k in ("query_id", "doc_id", "run_id"):
            arrays[k] = pa.array(v, pa.large_string())
        elif k == "relevance":
            arrays[k] = _int_array(v, name)
        elif k == "rank":
            arrays[k] = pa.array(v, pa.int64())
        else:
            try:
                arrays[k] = pa.array(v, pa.float64())
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
                bad = next((i for i, s in enumerate(v) if not isinstance(s, (int, float))), 0)
                msg = f"{name}, row {bad + 1}: {k} is not a number: {v[bad]!r}"
                raise InputFormatError(msg) from None
    return pa.table(arrays)


def _int_array(v: list[Any], name: str) -> pa.Array:
    out = []
    for i, g in enumerate(v):
        if isinstance(g, bool) or not isinstance(g, (int, float)) or int(g) != g:
            msg = f"{name}, row {i + 1}: relevance must be an integer grade, got {g!r}"
            raise InputFormatError(msg)
        out.append(int(g))
    return pa.array(out, pa.int32())


def _records(x: Iterable[Any], what: str) -> pa.Table:
    it = iter(x)
    first = next(it, None)
    if first is None:
        msg = f"the {what} are empty (an iterable with no records)"
        raise InputFormatError(msg)
    fields = getattr(first, "_fields", None)
    if fields is None:
        msg = (
            f"cannot read {what} from an iterable of {type(first).__name__}; "
            "give named tuples (ir_datasets / ir_measures records), a dict or a frame"
        )
        raise SchemaError(msg)
    cols: dict[str, list[Any]] = {f: [] for f in fields}
    for rec in itertools.chain([first], it):
        for f, v in zip(fields, rec, strict=False):
            cols[f].append(v)
    ren = _renames(list(fields), what, None)
    keep = {ren[f]: cols[f] for f in fields if f in ren}
    name = f"{what} records ({type(first).__name__})"
    return _typed(keep, what, name)


def _renames(names: list[str], what: str, columns: Mapping[str, str] | None) -> dict[str, str]:
    """Source column -> fasteval column, for the columns fasteval needs."""
    wanted = QRELS_COLS if what == "qrels" else RUN_COLS
    out: dict[str, str] = {}
    explicit = dict(columns or {})
    unknown = [c for c in explicit if c not in names]
    if unknown:
        msg = f"columns= names {unknown} not in the {what} (columns: {', '.join(names)})"
        raise SchemaError(msg)
    bad = [v for v in explicit.values() if v not in wanted]
    if bad:
        msg = f"columns= maps to {bad}; the {what} columns are {', '.join(wanted)}"
        raise SchemaError(msg)
    taken = set(explicit.values())
    out.update(explicit)
    for target in wanted:
        if target in taken:
            continue
        for alias in ALIASES[target]:
            if alias in names and alias not in out:
                out[alias] = target
                break
    return out


def _apply_columns(
    table: pa.Table, what: str, name: str, columns: Mapping[str, str] | None, default_run: str
) -> pa.Table:
    ren = _renames(table.column_names, what, columns)
    cols = {ren[c]: table.column(c) for c in table.column_names if c in ren}
    if what == "run" and "run_id" not in cols:
        cols["run_id"] = pa.chunked_array(
            [pa.array([default_run] * table.num_rows, pa.large_string())]
        )
    if what == "qrels" and "relevance" in cols and pa.types.is_floating(cols["relevance"].type):
        rel = cols["relevance"].to_pylist()
        cols["relevance"] = pa.chunked_array([_int_array(rel, name)])
    wanted = QRELS_COLS if what == "qrels" else RUN_COLS
    missing = [c for c in wanted if c not in cols and c != "rank"]
    if missing:
        hints = "; ".join(f"{c}: one of {', '.join(ALIASES[c])}" for c in missing)
        msg = (
            f"{name}: missing column(s) {', '.join(missing)} ({hints}); "
            f"found {', '.join(table.column_names)}"
            "\n  hint: map them with columns={'your_name': 'query_id', ...}"
        )
        raise SchemaError(msg)
    order = [c for c in wanted if c in cols]
    return pa.table({c: cols[c] for c in order})


def to_arrow(
    x: Any,
    what: str,
    *,
    columns: Mapping[str, str] | None = None,
    default_run: str = "run",
) -> tuple[pa.Table, str] | None:
    """``(table, name)`` in fasteval's column names, or ``None`` if ``x`` is not recognised.

    ``what`` is ``"qrels"`` or ``"run"``. The table still goes through
    :func:`fasteval.io.tables.qrels_from_table` / ``runs_from_table`` for
    its checks (nulls, types, finite scores).
    """
    if isinstance(x, (str, bytes)) or what not in ("qrels", "run"):
        return None  # other tables (diversity qrels, z-scores, ...) keep their own readers
    name: str
    if is_frame_like(x):
        table, name = _frame_to_arrow(x), f"{what} {type(x).__name__}"
    elif isinstance(x, (pl.DataFrame, pa.Table)):
        names = list(x.columns) if isinstance(x, pl.DataFrame) else x.column_names
        need = QRELS_COLS if what == "qrels" else RUN_COLS[:4]
        if not columns and all(c in names for c in need):
            return None  # already in fasteval's names: io.tables reads it as it is
        table = x.to_arrow() if isinstance(x, pl.DataFrame) else x
        name = f"{what} {type(x).__name__}"
    elif _module(x).startswith("ranx") and hasattr(x, "to_dict"):
        d = x.to_dict()
        table, name = _dict_rows(d, what), f"ranx {type(x).__name__}"
        if what == "run" and getattr(x, "name", None):
            default_run = str(x.name)
    elif isinstance(x, Mapping):
        if not x:
            msg = f"the {what} dict is empty"
            raise InputFormatError(msg)
        table, name = _dict_rows(x, what), f"{what} dict"
    elif is_records(x) or isinstance(x, Iterator):
        table = _records(x, what)
        name = f"{what} records"
    else:
        return None
    return _apply_columns(table, what, name, columns, default_run), name
