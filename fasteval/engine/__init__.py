"""The engine: read and join the inputs once, run an evaluator's kernels, build the long table.

``encode`` (ids to codes, rankings in trec_eval's order), ``inputs`` (:func:`prepare`,
:class:`Prepared`), ``ranking`` (the one-pass kernel's plan, gains, :func:`compute`,
aggregation), ``stream`` (the same in batches), ``table`` (the long table),
``diversity``, ``judgment_groups``, ``prefs``, ``compact``, ``recent``, ``relstring``
and ``zscores``. :func:`fasteval.evaluate` (in :mod:`fasteval.api`) routes measures
to them.
"""

from __future__ import annotations

from fasteval.engine.inputs import Prepared, QrelsLike, RunsLike, prepare
from fasteval.engine.ranking import compute, evaluate_ranking
from fasteval.engine.table import Evaluation, to_frame

__all__ = [
    "Evaluation",
    "Prepared",
    "QrelsLike",
    "RunsLike",
    "compute",
    "evaluate_ranking",
    "prepare",
    "to_frame",
]
