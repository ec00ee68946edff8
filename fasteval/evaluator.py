"""``Evaluator``: qrels read and prepared once, any number of runs scored against them.

:func:`fasteval.evaluate` is ``Evaluator(qrels, measures, **options).evaluate(runs)``.
The measures are parsed once (:mod:`fasteval.measures.catalog`) and served by the first
of the evaluator kinds in :data:`KINDS` that accepts them; ranking measures take the one
path of :mod:`fasteval.engine.stream`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fasteval.engine.encode import PreparedQrels, prepare_qrels
from fasteval.engine.inputs import QrelsLike, RunsLike
from fasteval.engine.recent import RECENT, is_qrels_dict
from fasteval.engine.table import Long
from fasteval.errors import FastevalError, FastevalWarning, InputFormatError, ParameterError
from fasteval.io import formats
from fasteval.io.tables import qrels_columns
from fasteval.io.writers import as_frame, in_measure_order
from fasteval.measures.catalog import Request, parse_request, split
from fasteval.measures.ir_measures_names import normalise_measures
from fasteval.measures.parser import output_names
from fasteval.options import EvalOptions
from fasteval.parallel import gc_paused

if TYPE_CHECKING:
    import polars as pl

    from fasteval.analysis.content import ContentReport

Progress = Callable[[int, int], None]


Scorer = Callable[[Any, RunsLike, bool, Progress | None], "Long | pl.DataFrame"]


def _keep(qrels: QrelsLike, req: Request, options: EvalOptions, extra: Any) -> Any:
    return (qrels, req, options)


@dataclass(frozen=True)
class Kind:
    """One evaluator kind: ``accepts(req, content)`` the requests it serves (``content``:
    a collection was given), ``prepare(qrels, req, options, extra)`` what every
    evaluation against ``qrels`` shares, ``evaluate(state, runs, per_query, progress)``
    the long table (a :class:`Long` or a polars frame)."""

    name: str
    accepts: Callable[[Request, bool], bool]
    evaluate: Scorer
    prepare: Callable[[QrelsLike, Request, EvalOptions, Any], Any] = _keep


def _prepare_ranking(qrels: QrelsLike, req: Request, options: EvalOptions, extra: Any) -> Any:
    """The qrels read and indexed once (a dict's reused from an earlier call)."""
    if isinstance(qrels, PreparedQrels):
        return (qrels, req, options)

    def make() -> PreparedQrels:
        with gc_paused():
            return prepare_qrels(qrels_columns(qrels, lenient=options.lenient))

    return (RECENT.prepared(qrels, make) if is_qrels_dict(qrels) else make(), req, options)


def _ranking(state: Any, runs: RunsLike, per_query: bool, progress: Progress | None) -> Long:
    """trec_eval's ranking measures: runs streamed in batches (:mod:`fasteval.engine.stream`)."""
    from fasteval.engine.stream import evaluate_ranking_stream  # noqa: PLC0415 (start-up)

    pq, req, o = state
    return evaluate_ranking_stream(pq, runs, req.ranking, o, per_query=per_query, progress=progress)


def _ric(state: Any, runs: RunsLike, per_query: bool, progress: Progress | None) -> pl.DataFrame:
    """Ranking measures with RIC, which reads every ranking at once (one batch)."""
    from fasteval.analysis.information import append_ric  # noqa: PLC0415 (start-up)
    from fasteval.engine.ranking import evaluate_ranking  # noqa: PLC0415 (start-up)

    pq, req, o = state
    df, prep = evaluate_ranking(pq, runs, req.ranking, o, per_query=per_query)
    return append_ric(df, prep, o.relevance_level, per_query)


def _jg(state: Any, runs: RunsLike, per_query: bool, progress: Progress | None) -> pl.DataFrame:
    """trec_eval ``-R qrels_jg``: the ``*_avgjg`` families over judgment groups."""
    from fasteval.engine.judgment_groups import evaluate_jg  # noqa: PLC0415 (start-up)

    qrels, req, o = state
    return evaluate_jg(qrels, runs, req.ranking, o, per_query=per_query)


def _prefs(state: Any, runs: RunsLike, per_query: bool, progress: Progress | None) -> pl.DataFrame:
    """trec_eval ``-R prefs`` / ``-R qrels_prefs``: the ``prefs_*`` measures."""
    from fasteval.engine.prefs import evaluate_prefs  # noqa: PLC0415 (start-up)

    prefs, req, o = state  # a Request given whole says how the prefs are read
    o = replace(o, rel_format=req.preferences or o.rel_format)
    return evaluate_prefs(prefs, runs, req.ranking, o, per_query=per_query)


_COMMON = ("relevance_level", "complete", "max_depth", "on_duplicate", "lenient", "run_id_from")


def _div(state: Any, runs: RunsLike, per_query: bool, progress: Progress | None) -> pl.DataFrame:
    """ndeval's measures over diversity qrels (ndeval's defaults: alpha = beta = 0.5)."""
    from fasteval.engine.diversity import diversity_evaluate  # noqa: PLC0415 (start-up)

    qrels, req, o = state  # scores are float64 whatever compat says
    div = list(req.diversity)
    return diversity_evaluate(qrels, runs, div, per_query=per_query, **o.as_kwargs(*_COMMON))


def _content(state: Any, runs: RunsLike, per_query: bool, progress: Progress | None) -> Any:
    """Content measures (``LMJS@20``, ...) over a collection, with any label measures."""
    qrels, o, (collection, content, label) = state
    df, report = evaluate_with_collection(
        qrels, runs, collection, content, label, per_query=per_query, options=o
    )
    if report.lines():  # never silently: what the collection lacked
        warnings.warn("; ".join(report.lines()), FastevalWarning, stacklevel=4)
    return df


KINDS: list[Kind] = [
    Kind("content", lambda req, c: c, _content, lambda q, req, o, extra: (q, o, extra)),
    Kind("judgment_groups", lambda req, c: not c and req.judgment_groups, _jg),
    Kind("preferences", lambda req, c: not c and bool(req.preferences), _prefs),
    Kind("diversity", lambda req, c: not c and bool(req.diversity), _div),
    Kind("ric", lambda req, c: not c and req.ric, _ric, _prepare_ranking),
    Kind("ranking", lambda req, c: not c, _ranking, _prepare_ranking),
]
"""The evaluator kinds, tried in order (the first that accepts a request serves it)."""


class Evaluator:
    """Qrels and measures prepared once; runs scored against them any number of times.

    Parameters
    ----------
    qrels
        As :func:`fasteval.evaluate`: a qrels file (plain, ``.gz``, ``.parquet``),
        a polars / Arrow / pandas frame or a ``{query: {doc: grade}}`` dict.
    measures
        As :func:`fasteval.evaluate` (trec_eval or ir_measures names, measure
        objects, a parsed request; default: trec_eval's ``official`` set).
    collection
        A document collection, for content measures (``LMJS@20``, ...).
    **options
        :func:`fasteval.evaluate`'s options: ``compat``, ``relevance_level``,
        ``complete``, ``max_depth``, ``judged_only``, ``num_docs``,
        ``on_duplicate``, ``lenient``, ``run_id_from``, ``zscores``,
        ``rel_format``, ``batch_rows``. They are checked here, once.

    Notes
    -----
    The qrels are read, checked and indexed here, once: their query ids in
    trec_eval's order, each query's judgments with a hash table of its judged
    documents, and (on first use) the per-query tables the measures read
    (relevant counts, ideal gains). :meth:`evaluate` then costs what the runs
    cost. An ``Evaluator`` is read-only after it is made, so threads may share
    one.

    Examples
    --------
    >>> import fasteval
    >>> qrels = {"q1": {"d1": 1, "d2": 0}}
    >>> ev = fasteval.Evaluator(qrels, ["map", "P@10"])
    >>> ev.evaluate({"q1": {"d1": 2.0, "d2": 1.0}}, per_query=False)["value"].to_list()
    [1.0, 0.1]
    """

    def __init__(
        self,
        qrels: QrelsLike,
        measures: str | Sequence[str] | Request | Any | None = None,
        *,
        collection: Any = None,
        **options: Any,
    ) -> None:
        try:
            opts = EvalOptions(**options)
        except TypeError as e:  # an unknown keyword
            msg = f"Evaluator: {e}".replace("EvalOptions.__init__() ", "")
            raise ParameterError(msg) from None
        req, names, extra, opts = _parse(measures, collection, opts)
        check_options(req, opts)
        self.request = req
        self.options = opts
        self.kind: Kind = next(k for k in KINDS if k.accepts(req, extra is not None))
        self._state = self.kind.prepare(qrels, req, opts, extra)
        self._order = asked_order(names, req, opts.compat)

    def evaluate(
        self, runs: RunsLike, per_query: bool = True, progress: Progress | None = None
    ) -> pl.DataFrame:
        """Score ``runs``: the table :func:`fasteval.evaluate` returns for them.

        Parameters
        ----------
        runs
            As :func:`fasteval.evaluate`: run files, directories, Parquet
            archives, polars / Arrow / pandas frames, ``{qid: {docid: score}}``
            or ``{run_id: {qid: {docid: score}}}``, or a list mixing these.
        per_query
            Include one row per (run, query) besides the ``all`` rows.
        progress
            Called after each batch with (inputs done, inputs in all); only
            when the runs take more than one batch.

        Returns
        -------
        polars.DataFrame
            ``run_id, query_id, measure, value`` (see :func:`fasteval.evaluate`).
        """
        df = as_frame(self.table(runs, per_query, progress))
        return df if self._order is None else in_measure_order(df, self._order)

    def table(
        self, runs: RunsLike, per_query: bool = True, progress: Progress | None = None
    ) -> Long | pl.DataFrame:
        """:meth:`evaluate`'s table in the kernels' (trec_eval's) order, before polars:
        a :class:`fasteval.engine.table.Long` for ranking measures (the command line
        renders it without loading polars), the other kinds' polars frame."""
        try:
            return self.kind.evaluate(self._state, runs, per_query, progress)
        except InputFormatError as e:
            raise qrels_given_as_run(e, runs) or e from None


def qrels_given_as_run(e: InputFormatError, runs: Any) -> InputFormatError | None:
    """The error to raise instead of ``e`` (a failed read of ``runs``) when the run file
    its message names is qrels (its first lines all ``qid iter docno rel``), else None."""
    name = str(e).split(":", 1)[0]
    given = runs if isinstance(runs, list | tuple) else [runs]
    paths = [Path(r) for r in given if isinstance(r, str | os.PathLike)]
    p = Path(name)
    if not p.is_file() or not any(p == r or r in p.parents for r in paths):
        return None
    head = formats.head(p) or b""
    texts = head.decode("utf-8", "replace").splitlines()
    if len(head) == 16384:
        texts = texts[:-1]  # the last line may be cut
    lines = [(i, t) for i, t in enumerate(texts, 1) if t.strip() and not t.startswith("#")][:10]
    for _, text in lines:
        fields = text.split()
        if len(fields) != 4 or fields[1] in ("Q0", "q0") or not fields[3].lstrip("-").isdigit():
            return None
    if not lines:
        return None
    no, line = lines[0]
    msg = (
        f"{name}:{no}: this looks like qrels, not a run: 4 columns ({line.strip()[:200]!r}), "
        "the layout qid iter docno rel; run lines are qid Q0 docno rank score tag\n"
        "  hint: give the qrels first, then the runs"
    )
    return InputFormatError(msg)


@functools.lru_cache(maxsize=64)
def _ranks(names: tuple[str, ...], compat: int) -> dict[str, int]:
    """Each output measure's place: the first of the asked names it comes from."""
    rank: dict[str, int] = {}
    for i, name in enumerate(names):
        with contextlib.suppress(FastevalError):  # parsed with the others only
            for out in output_names(name, compat=compat):
                rank.setdefault(out, i)
    return rank


def asked_order(names: list[str] | None, req: Request, compat: int) -> dict[str, int] | None:
    """Each output measure's place in the order of ``names`` (None: the default set or a
    parsed request), or None when trec_eval's order (the evaluators') is that order. A
    name that expands (``P.5,10``) keeps its members in trec_eval's order at its place; a
    measure asked twice keeps its first place."""
    if names is None or len(names) < 2:
        return None
    rank = _ranks(tuple(names), compat)
    outs = [d.name for d in req.diversity] + [m.name for m in req.ranking]
    keys = [rank.get(n, len(names)) for n in outs + (["RIC"] if req.ric else [])]
    return None if keys == sorted(keys) else rank


def _parse(
    measures: Any, collection: Any, opts: EvalOptions
) -> tuple[Request, list[str] | None, Any, EvalOptions]:
    """The parsed request, the names in the order asked (None: in trec_eval's, or the
    content kind's), the content kind's extra (None: another kind), the options."""
    if isinstance(measures, Request) or (measures is None and collection is None):
        if collection is not None:
            msg = "a collection is for content measures\n  hint: measures=['LMJS@20']"
            raise ParameterError(msg)
        req = measures or parse_request(None, compat=opts.compat, rel_format=opts.rel_format)
        return req, None, None, opts
    # ir_measures objects and aliases (MAP, MRR@10, ...); judged_only=True on all of them
    names, all_judged_only = normalise_measures("LMJS@20" if measures is None else measures)
    if all_judged_only:
        opts = replace(opts, judged_only=True)
    if collection is None:
        req = parse_request(names, compat=opts.compat, rel_format=opts.rel_format)
        return req, names, None, opts
    groups = split(names)  # content measures without a collection: parse_request says so
    content = groups.pop("content", [])
    label = [n for ns in groups.values() for n in ns]
    return Request(), None, (collection, content, label), opts


def evaluate_with_collection(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    content: list[str],
    label: list[str],
    *,
    per_query: bool,
    options: EvalOptions,
) -> tuple[pl.DataFrame, ContentReport]:
    """Content measures and any label measures in one table (per run, its ``all`` rows
    last), with the counts of what the collection lacked."""
    from fasteval.analysis.content import evaluate_content  # noqa: PLC0415 (start-up time)

    if not content:
        msg = "a collection is for content measures\n  hint: LMJS@20, LMKL@20 or LMJS_IA@20"
        raise ParameterError(msg)
    import polars as pl  # noqa: PLC0415 (start-up: a text evaluation does not load polars)

    opts = options.as_kwargs("relevance_level", "compat", "on_duplicate")
    ev = evaluate_content(qrels, runs, collection, content, per_query=per_query, **opts)
    if not label:
        return ev.table, ev.report
    lab = Evaluator(qrels, label, **options.as_kwargs()).evaluate(runs, per_query=per_query)
    order = {r: i for i, r in enumerate(ev.data.enc.run_names)}
    df = (
        pl.concat([lab.select(ev.table.columns), ev.table])
        .with_columns(
            pl.col("run_id").replace_strict(order, return_dtype=pl.Int64).alias("_r"),
            (pl.col("query_id") == "all").alias("_a"),
        )
        .sort(["_r", "_a"], maintain_order=True)
        .drop("_r", "_a")
    )
    return df, ev.report


def check_options(req: Request, opts: EvalOptions) -> None:
    """Raise for an option the request's evaluator lacks (``-Z``, ``-J``)."""
    if opts.zscores is not None and req.judgment_groups:
        msg = "z-scores (-Z) are only supported with plain qrels"
        raise ParameterError(msg)
    if req.diversity:
        if opts.zscores is not None:
            msg = "z-scores (-Z) are not supported for diversity measures"
            raise ParameterError(msg)
        if opts.judged_only:
            msg = "judged_only (-J) does not apply to diversity measures (ndeval has none)"
            raise ParameterError(msg)
