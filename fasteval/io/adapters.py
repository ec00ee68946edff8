"""Qrels and runs from where users already hold them -> fasteval's fixed schemas.

Recognised inputs (besides the paths, polars frames and Arrow tables that
:func:`fasteval.io.validate.to_arrow` reads itself):

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

import inspect
import itertools
import os
import types
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from fasteval.columns import numeric_numpy
from fasteval.errors import InputFormatError, SchemaError
from fasteval.io import is_polars

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
    if is_polars(x) or isinstance(x, pa.Table):
        return False
    return (
        _module(x).startswith("pandas")
        or is_polars(x, "LazyFrame")
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
    """Whether ``x`` is one qrels/run object this module reads, not a list of inputs (an
    iterator is not decided here: materialise it, then ask :func:`is_records`)."""
    if isinstance(x, (str, bytes)):
        return False
    return (
        is_frame_like(x)
        or isinstance(x, Mapping)
        or is_records(x)
        or _module(x).startswith("ranx")
        or is_trec_reader(x)
    )


def _dict_rows(x: Mapping[Any, Any], what: str) -> pa.Table:
    """Dict-of-dicts -> table (``{run: {qid: {doc: v}}}`` for several runs), converted in
    bulk (C-level iteration, then checks as columns; a bad value named by its place)."""
    first = next(iter(x.values()), None)
    inner = next(iter(first.values()), None) if isinstance(first, Mapping) else None
    if what == "run" and isinstance(inner, Mapping):
        parts = []
        for run, qs in x.items():
            t = _flat_dict(qs, what, f"run dict, run {run!r}")
            parts.append(t.append_column("run_id", constant_strings(str(run), t.num_rows)))
        return pa.concat_tables(parts)
    return _flat_dict(x, what, f"{what} dict")


def _strings(values: list[Any], kind: str, where: Any, *, views: bool = False) -> pa.Array:
    """Ids as Arrow strings (other scalars by ``str``); ``None`` is an error at ``where(i)``.
    ``views``: through polars (faster than Arrow), as string views the run reader takes in
    place (only for a run's document ids: not every compute function takes views)."""
    import polars as pl  # Python values only: text inputs never load it

    try:
        if views:
            ser = pl.Series(values, dtype=pl.String, strict=True)
            if not ser.null_count():
                return ser.to_arrow(compat_level=pl.CompatLevel.newest())
        else:
            arr = pa.array(values, pa.large_string())
            if not arr.null_count:
                return arr
    except (TypeError, pl.exceptions.PolarsError, pa.ArrowTypeError, pa.ArrowInvalid):
        pass
    out = []
    for i, v in enumerate(values):
        if v is None:
            msg = f"{where(i)}: the {kind} is None"
            raise InputFormatError(msg)
        out.append(v if isinstance(v, str) else str(v))
    return pa.array(out, pa.large_string())


def _flat_dict(x: Mapping[Any, Any], what: str, name: str) -> pa.Table:
    """``{qid: {doc: value}}`` -> ``query_id, doc_id, relevance|score`` columns."""
    value = "relevance" if what == "qrels" else "score"
    qids = list(x.keys())
    inner = list(x.values())
    for q, docs in zip(qids, inner, strict=True):
        if not isinstance(docs, Mapping):
            msg = (
                f"{name}, query {q!r}: expected a dict {{doc_id: {value}}}, "
                f"got {type(docs).__name__}"
            )
            raise SchemaError(msg)
    lens = np.fromiter(map(len, inner), np.int64, count=len(inner))
    ends = np.cumsum(lens)
    docs = list(itertools.chain.from_iterable(inner))
    vals = list(itertools.chain.from_iterable(d.values() for d in inner))

    def query(i: int) -> str:  # where value i is: the query it belongs to
        return f"{name}, query {qids[int(np.searchsorted(ends, i, side='right'))]!r}"

    def where(i: int) -> str:
        return f"{query(i)}, document {docs[i]!r}"

    q_arr = _strings(qids, "query id", lambda i: f"{name}, query {qids[i]!r}")
    doc_arr = _strings(docs, "document id", query, views=what == "run")
    q_col = q_arr.take(pa.array(np.repeat(np.arange(len(qids), dtype=np.int64), lens)))
    if what == "qrels":
        col = _int_array(vals, where)
    else:
        num = _numbers(vals, value, where)
        bad = np.flatnonzero(~np.isfinite(num))
        if bad.size:
            i = int(bad[0])
            msg = f"{where(i)}: score is not a finite number: {vals[i]!r}"
            raise InputFormatError(msg)
        col = pa.array(num)
    return pa.table({"query_id": q_col, "doc_id": doc_arr, value: col})


def _numbers(vals: list[Any], value: str, where: Any) -> np.ndarray:
    """Values as float64 (strings, ``None`` and other non-numbers are errors at ``where(i)``)."""
    try:
        arr = pa.array(vals, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        arr = None
    if arr is not None and not arr.null_count:
        return numeric_numpy(arr)
    # the slow way, only for the unusual: the first bad value named, others converted
    out = np.empty(len(vals), np.float64)
    for i, v in enumerate(vals):
        try:  # a number (Decimal, numpy scalars, ...): not None, not text
            if isinstance(v, (str, bytes)):
                raise TypeError
            out[i] = float(v)
        except (TypeError, ValueError):
            msg = f"{where(i)}: {value} is not a number: {v!r}"
            raise InputFormatError(msg) from None
    return out


def _typed(cols: dict[str, list[Any]], name: str) -> pa.Table:
    arrays = {}
    for k, v in cols.items():
        if k in ("query_id", "doc_id", "run_id"):
            arrays[k] = pa.array(v, pa.large_string())
        elif k == "relevance":
            arrays[k] = _int_array(v, lambda i: f"{name}, row {i + 1}")
        elif k == "rank":
            arrays[k] = pa.array(v, pa.int64())
        else:
            arrays[k] = pa.array(_numbers(v, k, lambda i: f"{name}, row {i + 1}"))
    return pa.table(arrays)


def _int_array(v: list[Any], where: Any) -> pa.Array:
    """Integer grades as int32 (floats with an integral value too); a bad one named by
    ``where(i)``."""
    num = _numbers(v, "relevance", where)
    bad = np.flatnonzero(np.isnan(num) | (num != np.round(num)))
    if bad.size:
        i = int(bad[0])
        msg = f"{where(i)}: relevance must be an integer grade, got {v[i]!r}"
        raise InputFormatError(msg)
    return pa.array(num.astype(np.int32))


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
    # one transposition in C (zip over the records), no Python work per row
    columns = list(zip(*itertools.chain([first], it), strict=False))
    ren = _renames(list(fields), what, None)
    keep = {ren[f]: list(c) for f, c in zip(fields, columns, strict=False) if f in ren}
    return _typed(keep, f"{what} records ({type(first).__name__})")


def _renames(names: list[str], what: str, columns: Mapping[str, str] | None) -> dict[str, str]:
    """Source column -> fasteval column, for the columns fasteval needs."""
    wanted = QRELS_COLS if what == "qrels" else RUN_COLS
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
    out = dict(explicit)
    for target in wanted:
        if target in taken:
            continue
        for alias in ALIASES[target]:
            if alias in names and alias not in out:
                out[alias] = target
                break
    return out


def constant_strings(value: str, n: int) -> pa.Array:
    """``n`` times the string ``value`` (a run id column), dictionary-encoded: built in C,
    and the run reader numbers it from its indices without comparing strings."""
    indices = pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(np.zeros(n, np.int32))])
    return pa.DictionaryArray.from_arrays(indices, pa.array([value], pa.large_string()))


def _apply_columns(
    table: pa.Table, what: str, name: str, columns: Mapping[str, str] | None, default_run: str
) -> pa.Table:
    ren = _renames(table.column_names, what, columns)
    cols = {ren[c]: table.column(c) for c in table.column_names if c in ren}
    if what == "run" and "run_id" not in cols:
        cols["run_id"] = pa.chunked_array([constant_strings(default_run, table.num_rows)])
    if what == "qrels" and "relevance" in cols and pa.types.is_floating(cols["relevance"].type):
        rel = cols["relevance"].to_pylist()
        grades = _int_array(rel, lambda i: f"{name}, row {i + 1}")
        cols["relevance"] = pa.chunked_array([grades])
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


def _trec_reader_source(x: Any, what: str) -> Any:
    """The file behind an unstarted ``ir_measures.read_trec_qrels`` / ``read_trec_run``
    generator (a path, or the text left in an open file), else ``None``: fasteval's
    tokenizer reads it instead of the generator's Python loop."""
    if not is_trec_reader(x, what):
        return None
    src = x.gi_frame.f_locals.get("file")
    if isinstance(src, str):
        return src if "\n" not in src else src.encode()
    if hasattr(src, "read"):
        data = src.read()
        return data.encode() if isinstance(data, str) else bytes(data)
    return None


def is_trec_reader(x: Any, what: str | None = None) -> bool:
    """Whether ``x`` is an unstarted ``ir_measures.read_trec_qrels`` (``what="qrels"``) or
    ``read_trec_run`` (``"run"``; either when ``None``) generator."""
    if not isinstance(x, types.GeneratorType):
        return False
    names = ("read_trec_qrels", "read_trec_run") if what is None else (f"read_trec_{what}",)
    code = x.gi_code
    return (
        code.co_name in names
        and code.co_filename.replace(os.sep, "/").endswith("ir_measures/util.py")
        and inspect.getgeneratorstate(x) == inspect.GEN_CREATED
        and x.gi_frame is not None
    )


def _trec_table(src: Any, what: str) -> pa.Table:
    """Arrow table of a TREC qrels / run file (a path, or its bytes) read by fasteval."""
    from fasteval.io import files, trec
    from fasteval.options import EvalOptions

    name = src if isinstance(src, str) else f"ir_measures.read_trec_{what}"
    raw = None
    if isinstance(src, bytes):
        buf = np.frombuffer(src + b"\n", np.uint8).copy()
        raw = files.RawFiles([name], buf, np.zeros(1, np.int64), np.array([buf.shape[0]]))
    if what == "qrels":
        q = trec.parse_qrels_files([name], raw=raw)
        return pa.table(
            {
                "query_id": q.qid.to_arrow(),
                "doc_id": q.doc.to_arrow(),
                "relevance": pa.array(q.rel, pa.int32()),
            }
        )
    # ir_measures reads no run id: every line is one run's, whatever its tag
    r = trec.parse_run_files([name], EvalOptions(run_id_from="filename"), raw=raw)
    return pa.table(
        {
            "query_id": r.qid.to_arrow(),
            "doc_id": r.doc.to_arrow(),
            "score": pa.array(r.score, pa.float64()),
        }
    )


def adapt(
    x: Any,
    what: str,
    *,
    columns: Mapping[str, str] | None = None,
    default_run: str = "run",
) -> tuple[pa.Table, str] | None:
    """``(table, name)`` in fasteval's column names for one of the ecosystem's objects (the
    module's docstring lists them) read as ``what`` (``"qrels"`` or ``"run"``), else
    ``None``; ``columns`` maps source columns before the ecosystem's names are tried,
    ``default_run`` names a run without a run id column. The table still goes through
    :func:`fasteval.io.tables.qrels_from_table` / ``runs_from_table`` for its checks."""
    if isinstance(x, (str, bytes)) or what not in ("qrels", "run"):
        return None  # other tables (diversity qrels, z-scores, ...) keep their own readers
    name: str
    if is_frame_like(x):
        if is_polars(x, "LazyFrame"):
            table = x.collect().to_arrow()
        elif _module(x).startswith("pandas"):  # the index is not data (PyTerrier's RangeIndex)
            table = pa.Table.from_pandas(x, preserve_index=False)
        else:
            table = pa.table(x)
        name = f"{what} {type(x).__name__}"
    elif is_polars(x) or isinstance(x, pa.Table):
        names = list(x.columns) if is_polars(x) else x.column_names
        need = QRELS_COLS if what == "qrels" else RUN_COLS[:4]
        if not columns and all(c in names for c in need):
            return None  # already in fasteval's names: io.tables reads it as it is
        table = x.to_arrow() if is_polars(x) else x
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
    elif (src := _trec_reader_source(x, what)) is not None:
        table, name = _trec_table(src, what), f"{what} file"
    elif is_records(x) or isinstance(x, Iterator):
        table = _records(x, what)
        name = f"{what} records"
    else:
        return None
    return _apply_columns(table, what, name, columns, default_run), name
