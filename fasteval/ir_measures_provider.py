# ir_measures ships type hints (py.typed) but leaves its constructors unannotated
# mypy: disable-error-code="no-untyped-call"
"""An ir_measures provider that computes measures with fasteval.

Importing this module registers the provider in ir_measures' registry
(``ir_measures.providers.register``, the mechanism ir_measures' own
providers use), under the name ``"fasteval"``::

    import ir_measures
    from fasteval.ir_measures_provider import provider   # registers "fasteval"

    provider.calc_aggregate([ir_measures.AP, ir_measures.nDCG@10], qrels, run)
    ir_measures.providers.registry["fasteval"].iter_calc(measures, qrels, run)

:func:`use_fasteval` puts the provider first in ir_measures' default pipeline,
so ``ir_measures.calc_aggregate``, ``ir_measures.iter_calc`` and everything
built on them (PyTerrier's ``pt.Experiment``, which evaluates through
ir_measures) run on fasteval for the measures it claims, and fall back to
ir_measures' other providers for the rest.

Claimed measures (each checked against ir_measures' default providers, i.e.
pytrec_eval, on TREC-8 runs: ``tests/oracle/test_ir_measures_provider.py``):
``P@k``, ``R@k``, ``AP``, ``AP@k``, ``RR``, ``Rprec``, ``nDCG``, ``nDCG@k``
(``dcg='log2'``, no custom gains), ``Bpref``, ``infAP``, ``Success@k``,
``IPrec@r``, ``SetP``, ``SetR``, ``NumRet``, ``NumRel``, ``NumRelRet``
(``NumRet(rel=1)``), ``NumQ``, ``SetAP``, ``SetF(beta=)``,
``SetP(relative=True)`` and gdeval's ``nDCG(dcg='exp-log2')@k``, with ``rel=`` where
pytrec_eval takes it and
``judged_only=`` (trec_eval ``-J``). Like the pytrec_eval provider, a qrels
query the run lacks yields the measure's default (0), so aggregates are over
every qrels query. The C/W/L measures (``INST``, ``BPM``, ...) are computed by
fasteval too but not claimed here: ir_measures' cwl_eval provider keeps tied scores
in file order, fasteval (as trec_eval) puts the larger document id first, so on
runs with ties the values differ (INST on TREC-8's INQ603: 1.3e-5 relative; equal
to 2e-16 once the ties are broken the same way).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

try:
    import ir_measures
except ModuleNotFoundError as e:  # the optional extra is not installed: one clear line
    msg = (
        "fasteval.ir_measures_provider needs ir_measures (the 'irmeasures' extra): "
        "pip install -e '.[irmeasures]' in a checkout, or pip install 'fasteval[irmeasures]'"
    )
    raise ModuleNotFoundError(msg, name=e.name) from None
from ir_measures import Metric, providers
from ir_measures import measures as irm
from ir_measures.providers.base import NOT_PROVIDED, Choices
from ir_measures.providers.base import Any as AnyParam

from fasteval.errors import DataMismatchError

__all__ = ["FastevalEvaluator", "FastevalProvider", "provider", "use_fasteval"]

_ANY = AnyParam()
_REQ = AnyParam(required=True)
_NOT = Choices(NOT_PROVIDED)


def _claims() -> list[Any]:
    return [
        irm._P(cutoff=_REQ, rel=_ANY, judged_only=_ANY),
        irm._R(cutoff=_REQ, judged_only=_ANY),
        irm._AP(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        irm._RR(cutoff=_NOT, rel=_ANY, judged_only=_ANY),
        irm._Rprec(rel=_ANY, judged_only=_ANY),
        irm._nDCG(cutoff=_ANY, dcg=Choices("log2"), gains=_NOT, judged_only=_ANY),
        # gdeval's nDCG@k (exponential gains), the TREC Web track's official measure
        irm._nDCG(cutoff=_REQ, dcg=Choices("exp-log2"), gains=_NOT, judged_only=Choices(False)),
        irm._Bpref(rel=_ANY),
        irm._infAP(rel=_ANY),
        irm._Success(cutoff=_REQ, rel=_ANY, judged_only=_ANY),
        irm._IPrec(recall=_REQ, judged_only=_ANY),
        irm._SetP(rel=_ANY, relative=_ANY, judged_only=_ANY),
        irm._SetR(rel=_ANY),
        irm._SetAP(rel=_ANY, judged_only=_ANY),
        irm._SetF(rel=_ANY, beta=_ANY, judged_only=_ANY),
        irm._NumRet(rel=_ANY),
        irm._NumRel(rel=Choices(1)),
        irm._NumQ(),
    ]


def _fasteval_name(measure: Any) -> tuple[str, bool]:
    """``(fasteval measure string, judged_only)`` for an ir_measures measure."""
    from fasteval.measures.ir_measures_names import canonical, split_judged_only

    names, judged_only = split_judged_only([canonical(measure)])
    return names[0], judged_only


def _qrels_table(qrels: Any) -> Any:
    """The qrels as an Arrow table ``query_id, doc_id, relevance`` (converted in bulk)."""
    from fasteval.io import adapters
    from fasteval.io.tables import load_qrels

    got = adapters.adapt(qrels, "qrels")
    return got[0] if got is not None else load_qrels(qrels).to_arrow()


class FastevalEvaluator(providers.Evaluator):
    """Runs scored against qrels prepared once (a :class:`fasteval.Evaluator` per
    ``judged_only`` setting)."""

    def __init__(self, measures: Iterable[Any], qrels: Any) -> None:
        import pyarrow.compute as pc

        from fasteval.evaluator import Evaluator
        from fasteval.measures.parser import parse_measure

        table = qrels if _is_arrow_table(qrels) else _qrels_table(qrels)
        self.table = table
        self.snapshot: dict[Any, dict[Any, Any]] | None = None  # the dict it came from
        super().__init__(list(measures), set(pc.unique(table.column("query_id")).to_pylist()))
        # judged_only -> (fasteval arguments, output name -> ir_measures measure)
        by_jo: dict[bool, list[tuple[str, str, Any]]] = {}
        # measures undefined for some queries (Accuracy with nothing relevant retrieved):
        # such a query has no row and gets no default, as ir_measures' own provider does
        self.sometimes_undefined: set[Any] = set()
        for m in self.measures:
            arg, jo = _fasteval_name(m)
            parsed = parse_measure(arg)[0]
            by_jo.setdefault(jo, []).append((arg, parsed.name, m))
            if parsed.info.aggregate == "defined":
                self.sometimes_undefined.add(m)
        self.groups: list[tuple[Evaluator, dict[str, Any]]] = [
            (
                Evaluator(table, [a for a, _, _ in items], judged_only=jo),
                {out: m for _, out, m in items},
            )
            for jo, items in by_jo.items()
        ]

    def _rows(self, run: Any) -> Iterator[tuple[list[str], list[Any], list[float]]]:
        """Per evaluator group: the per-query rows' query ids, measures and values.

        An empty run yields nothing: ir_measures then gives every qrels query the
        measure's default (0), as its default provider does (its own test).
        """
        import polars as pl

        from fasteval.io import adapters
        from fasteval.io.tables import as_run

        run = _non_empty(run)
        if run is None:
            return
        got = adapters.adapt(run, "run", default_run="run")
        if got is not None:  # ir_measures' inputs: one run, converted once, straight to Arrow
            table = got[0]
            n = table.num_rows
            if n == 0:
                return
            table = table.set_column(
                table.column_names.index("run_id"),
                "run_id",
                adapters.constant_strings("run", n),
            )
            runs: Any = table
        else:
            frame = as_run(run, name="run")
            if frame.height == 0:
                return
            runs = frame.with_columns(pl.lit("run").alias("run_id"))
        for ev, by_out in self.groups:
            try:
                df = ev.evaluate(runs)
            except DataMismatchError:  # no query in common: every qrels query gets the default
                continue
            rows = df.filter(pl.col("query_id") != "all")
            names = rows["measure"].to_list()
            yield rows["query_id"].to_list(), [by_out[n] for n in names], rows["value"].to_list()

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        for qids, measures, values in self._rows(run):
            for q, m, v in zip(qids, measures, values, strict=True):
                yield Metric(query_id=q, measure=m, value=v)

    def iter_calc(self, run: Any) -> Iterator[Metric]:
        """Per-query values; a qrels query without one gets the measure's default,
        except for measures left undefined there (ir_measures' base class, less those)."""
        expected = {(m, q) for m in self.measures for q in self.qrel_qids}
        for metric in self._iter_calc(run):
            expected.discard((metric.measure, metric.query_id))
            yield metric
        for m, q in sorted(expected, key=lambda x: (str(x[0]), x[1])):
            if m not in self.sometimes_undefined:
                yield Metric(query_id=q, measure=m, value=m.DEFAULT)

    def calc_aggregate(self, run: Any) -> dict[Any, Any]:
        """The aggregates ir_measures' own ``calc_aggregate`` gives, without a ``Metric``
        per query: each measure's aggregator takes the same values in the same order
        (the computed ones, then the default of every qrels query without one, sorted
        as ir_measures sorts them), so the sums are the same to the last bit."""
        aggregators = {m: m.aggregator() for m in self.measures}
        seen: dict[Any, set[str]] = {m: set() for m in self.measures}
        # by identity: an ir_measures measure hashes through its repr, slowly
        slot = {id(m): (aggregators[m].add, seen[m]) for m in self.measures}
        for qids, measures, values in self._rows(run):
            for q, m, v in zip(qids, measures, values, strict=True):
                add, got = slot[id(m)]
                add(v)
                got.add(q)
        missing = sorted(
            (
                (str(m), q, m)
                for m, got in seen.items()
                if m not in self.sometimes_undefined
                for q in self.qrel_qids
                if q not in got
            ),
            key=lambda x: (x[0], x[1]),
        )
        for _, _, m in missing:
            aggregators[m].add(m.DEFAULT)
        return {m: agg.result() for m, agg in aggregators.items()}


def _non_empty(run: Any) -> Any:
    """``run``, or None when it holds no ranking (an empty list, dict or iterator).

    An iterator (``ir_measures.read_trec_run``) is looked into by its first
    record, which is put back in front of the rest.
    """
    if isinstance(run, list | tuple | dict):
        return run if len(run) else None
    if isinstance(run, Iterator):
        first = next(run, _NOTHING)
        return None if first is _NOTHING else itertools.chain([first], run)
    return run


_NOTHING = object()


def _is_arrow_table(x: Any) -> bool:
    import pyarrow as pa

    return isinstance(x, pa.Table)


class FastevalProvider(providers.Provider):
    """fasteval: trec_eval 9.0.8's numbers from numba kernels.

    ir_measures asks for a new evaluator on every ``calc_aggregate`` /
    ``iter_calc`` call; the provider keeps the last few, one per (qrels,
    measures), and hands back the prepared one when the same qrels (equal
    content, compared as Arrow tables) and measures come again.
    """

    NAME = "fasteval"
    SUPPORTED_MEASURES = _claims()
    CACHE_SIZE = 4

    def __init__(self) -> None:
        super().__init__()
        self._cache: OrderedDict[tuple[str, ...], list[FastevalEvaluator]] = OrderedDict()
        self._lock = threading.Lock()

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> FastevalEvaluator:
        from fasteval.engine.recent import is_qrels_dict, snapshot

        measures = list(measures)
        key = tuple(sorted(str(m) for m in measures))
        is_dict = is_qrels_dict(qrels)
        if is_dict:  # compared with dict equality (in C), not converted
            with self._lock:
                for ev in self._cache.get(key, []):
                    if ev.snapshot is not None and ev.snapshot == qrels:
                        self._cache.move_to_end(key)
                        return ev
        table = _qrels_table(qrels)
        with self._lock:
            for ev in self._cache.get(key, []):
                if ev.table.equals(table):
                    self._cache.move_to_end(key)
                    return ev
        ev = FastevalEvaluator(measures, table)
        ev.snapshot = snapshot(qrels) if is_dict else None
        with self._lock:
            self._cache.setdefault(key, []).insert(0, ev)
            del self._cache[key][2:]
            self._cache.move_to_end(key)
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return ev


def _register() -> FastevalProvider:
    existing = providers.registry.get(FastevalProvider.NAME)
    if isinstance(existing, FastevalProvider):
        return existing
    p = FastevalProvider()
    providers.register(p)
    return p


provider = _register()
"""The provider, registered in ir_measures as ``"fasteval"`` when this module is imported:
``provider.calc_aggregate(measures, qrels, run)``, ``provider.iter_calc(...)``."""


def use_fasteval(enable: bool = True) -> None:
    """Put the fasteval provider first in ir_measures' default pipeline (or take it out).

    Afterwards ``ir_measures.calc_aggregate`` / ``iter_calc`` / ``evaluator``
    (and PyTerrier's ``pt.Experiment``) compute the claimed measures with
    fasteval; the others still go to ir_measures' own providers.
    """
    chain = ir_measures.DefaultPipeline.providers
    while provider in chain:
        chain.remove(provider)
    if enable:
        chain.insert(0, provider)
