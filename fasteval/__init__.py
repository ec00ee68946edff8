"""fasteval: a vectorized batch engine for information-retrieval evaluation.

Evaluate whole TREC archives at once with trec_eval's exact numbers.

The public names below are imported on first use (PEP 562): ``import
fasteval`` stays cheap, and a command that needs only the engine does not
load the analysis modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fasteval.errors import (
    DataMismatchError,
    FastevalError,
    FastevalWarning,
    InputFormatError,
    MeasureError,
    SchemaError,
)

if TYPE_CHECKING:
    from fasteval.analysis.agreement import Agreement
    from fasteval.analysis.comparison import Comparison
    from fasteval.analysis.correlation import information_tau, rank_correlation
    from fasteval.analysis.fusion import cross_validate_fusion, fuse, optimize_fusion
    from fasteval.analysis.hsa import histogram_analysis, histogram_analysis_scores
    from fasteval.analysis.information import information_difference, joint_ric, ric
    from fasteval.analysis.report import Report, report
    from fasteval.api import evaluate
    from fasteval.comparison import agreement, compare, rank_intervals
    from fasteval.engine.diversity import diversity_evaluate, subtopic_coverage
    from fasteval.engine.table import wide_table
    from fasteval.evaluator import Evaluator
    from fasteval.io.diversity import load_diversity_qrels
    from fasteval.io.tables import load_qrels, load_runs
    from fasteval.measures.parser import Measure, parse_measure, parse_measures

# public name -> the module that defines it
_LAZY = {
    "Comparison": "fasteval.analysis.comparison",
    "compare": "fasteval.comparison",
    "Agreement": "fasteval.analysis.agreement",
    "agreement": "fasteval.comparison",
    "rank_intervals": "fasteval.comparison",
    "information_tau": "fasteval.analysis.correlation",
    "rank_correlation": "fasteval.analysis.correlation",
    "diversity_evaluate": "fasteval.engine.diversity",
    "subtopic_coverage": "fasteval.engine.diversity",
    "fuse": "fasteval.analysis.fusion",
    "optimize_fusion": "fasteval.analysis.fusion",
    "cross_validate_fusion": "fasteval.analysis.fusion",
    "histogram_analysis": "fasteval.analysis.hsa",
    "histogram_analysis_scores": "fasteval.analysis.hsa",
    "information_difference": "fasteval.analysis.information",
    "joint_ric": "fasteval.analysis.information",
    "ric": "fasteval.analysis.information",
    "Report": "fasteval.analysis.report",
    "report": "fasteval.analysis.report",
    "evaluate": "fasteval.api",
    "Evaluator": "fasteval.evaluator",
    "wide_table": "fasteval.engine.table",
    "load_diversity_qrels": "fasteval.io.diversity",
    "load_qrels": "fasteval.io.tables",
    "load_runs": "fasteval.io.tables",
    "Measure": "fasteval.measures.parser",
    "parse_measure": "fasteval.measures.parser",
    "parse_measures": "fasteval.measures.parser",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'fasteval' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])


__all__ = [
    "Agreement",
    "Comparison",
    "DataMismatchError",
    "Evaluator",
    "FastevalError",
    "FastevalWarning",
    "InputFormatError",
    "Measure",
    "MeasureError",
    "Report",
    "SchemaError",
    "agreement",
    "compare",
    "cross_validate_fusion",
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
    "optimize_fusion",
    "parse_measure",
    "parse_measures",
    "rank_correlation",
    "rank_intervals",
    "report",
    "ric",
    "subtopic_coverage",
    "wide_table",
]

from fasteval._version import __version__ as __version__  # noqa: E402 (after the lazy names)
