"""Robustness studies: ``fasteval.studies.subsample(...)`` etc.

The documented public path of the study API (docs/studies.md): the names users
call, gathered from where they are defined (:mod:`fasteval.analysis.studies`,
:mod:`fasteval.analysis.study_scorers`, :mod:`fasteval.analysis.variants`).
Code inside the package imports them from there.
"""

from fasteval.analysis.studies import (
    DEFAULT_DEPTHS,
    DEFAULT_MEASURES,
    DEFAULT_RATES,
    StudyResult,
    leave_out,
    pool_depth,
    run_unit,
    subsample,
    summarize,
)
from fasteval.analysis.study_scorers import DiversityScorer, HSAScorer, RICScorer, scorer_for
from fasteval.analysis.variants import AdhocScorer, Scorer

__all__ = [
    "DEFAULT_DEPTHS",
    "DEFAULT_MEASURES",
    "DEFAULT_RATES",
    "AdhocScorer",
    "DiversityScorer",
    "HSAScorer",
    "RICScorer",
    "Scorer",
    "StudyResult",
    "leave_out",
    "pool_depth",
    "run_unit",
    "scorer_for",
    "subsample",
    "summarize",
]
