"""Kept for engine/ranking.py, which imports :class:`EvalOptions` from here until its
next change moves that import to :mod:`fasteval.options`."""

from fasteval.options import EvalOptions as EvalOptions  # noqa: PLC0414 (re-export)
