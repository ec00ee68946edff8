"""The engine: read and join the inputs once, run an evaluator's kernels, build the long
table (its modules: ``docs/contributing/architecture.md``)."""

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
