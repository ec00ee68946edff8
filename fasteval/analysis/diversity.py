"""Diversity evaluation's public names, kept at their old path.

The measures live in :mod:`fasteval.measures.diversity`, their evaluation in
:mod:`fasteval.engine.diversity` (see its docstring for the definitions).
"""

from __future__ import annotations

from fasteval.engine.diversity import diversity_evaluate, subtopic_coverage

__all__ = ["diversity_evaluate", "subtopic_coverage"]
