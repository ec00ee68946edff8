"""fasteval: a vectorized batch engine for information-retrieval evaluation.

Evaluate whole TREC archives at once with trec_eval's exact numbers.
"""

from fasteval.analysis.fusion import fuse
from fasteval.engine import evaluate
from fasteval.errors import (
    DataMismatchError,
    FastevalError,
    InputFormatError,
    MeasureError,
    SchemaError,
)
from fasteval.io.tables import load_qrels, load_runs
from fasteval.measures.parser import Measure, parse_measure, parse_measures

__all__ = [
    "DataMismatchError",
    "FastevalError",
    "InputFormatError",
    "Measure",
    "MeasureError",
    "SchemaError",
    "evaluate",
    "fuse",
    "load_qrels",
    "load_runs",
    "parse_measure",
    "parse_measures",
]

__version__ = "0.1.0"
