"""fasteval: a vectorized batch engine for information-retrieval evaluation.

Evaluate whole TREC archives at once with trec_eval's exact numbers.
"""

from fasteval.analysis.correlation import information_tau, rank_correlation
from fasteval.analysis.diversity import diversity_evaluate, subtopic_coverage
from fasteval.analysis.fusion import fuse
from fasteval.analysis.hsa import histogram_analysis, histogram_analysis_scores
from fasteval.analysis.information import information_difference, joint_ric, ric
from fasteval.analysis.report import Report, report
from fasteval.engine import evaluate
from fasteval.errors import (
    DataMismatchError,
    FastevalError,
    InputFormatError,
    MeasureError,
    SchemaError,
)
from fasteval.io.diversity import load_diversity_qrels
from fasteval.io.tables import load_qrels, load_runs
from fasteval.measures.parser import Measure, parse_measure, parse_measures

__all__ = [
    "DataMismatchError",
    "FastevalError",
    "InputFormatError",
    "Measure",
    "MeasureError",
    "Report",
    "SchemaError",
    "diversity_evaluate",
    "evaluate",
    "fuse",
    "histogram_analysis",
    "histogram_analysis_scores",
    "information_difference",
    "information_tau",
    "joint_ric",
    "load_diversity_qrels",
    "load_qrels",
    "load_runs",
    "parse_measure",
    "parse_measures",
    "rank_correlation",
    "report",
    "ric",
    "subtopic_coverage",
]

__version__ = "0.1.0"
