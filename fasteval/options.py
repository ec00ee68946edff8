"""The evaluation options: one frozen value, validated once, passed down as ``opts``
(the public functions keep their keywords and build one at their top)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from fasteval.errors import ParameterError


@dataclass(frozen=True)
class EvalOptions:
    """:func:`fasteval.evaluate`'s keyword arguments of the same names, checked when made;
    ``zscores`` given as a path or a frame is read here (a ``ZScores`` after)."""

    compat: int = 9
    relevance_level: int = 1
    complete: bool = False
    max_depth: int | None = None
    judged_only: bool = False
    num_docs: int = 0
    on_duplicate: str = "error"
    lenient: bool = False
    run_id_from: str = "tag"
    zscores: Any = None
    rel_format: str = "qrels"
    batch_rows: int | None = None

    def __post_init__(self) -> None:
        if self.compat not in (9, 10):
            msg = f"compat must be 9 or 10, got {self.compat!r}"
            raise ParameterError(msg)
        if self.max_depth is not None and self.max_depth <= 0:
            msg = f"max_depth must be positive, got {self.max_depth}"
            raise ParameterError(msg)
        if self.on_duplicate not in ("error", "first"):
            msg = f"on_duplicate must be 'error' or 'first', got {self.on_duplicate!r}"
            raise ParameterError(msg)
        if self.run_id_from not in ("tag", "filename"):
            msg = f"run_id_from must be 'tag' or 'filename', got {self.run_id_from!r}"
            raise ParameterError(msg)
        if self.batch_rows is not None and self.batch_rows <= 0:
            msg = f"batch_rows must be positive, got {self.batch_rows}"
            raise ParameterError(msg)
        if self.zscores is not None:
            from fasteval.io.zscores import as_zscores  # noqa: PLC0415

            object.__setattr__(self, "zscores", as_zscores(self.zscores))
        if self.rel_format not in ("qrels", "qrels_jg"):
            from fasteval.io.prefs import PREFS_FORMATS  # noqa: PLC0415 (it loads polars)

            if self.rel_format not in PREFS_FORMATS:
                known = ", ".join(("qrels", "qrels_jg", *PREFS_FORMATS))
                msg = f"unknown relevance format {self.rel_format!r}; choose one of {known}"
                raise ParameterError(msg)

    def as_kwargs(self, *names: str) -> dict[str, Any]:
        """The named fields (all when none is named) as keyword arguments."""
        names = names or tuple(f.name for f in fields(self))
        return {n: getattr(self, n) for n in names}


DEFAULTS = EvalOptions()
"""trec_eval's defaults (and fasteval's): the ``opts`` of a caller that sets none."""


def options_of(opts: EvalOptions | None, changed: dict[str, Any]) -> EvalOptions:
    """``opts`` (``None``: :data:`DEFAULTS`) with the fields in ``changed`` replaced, checked."""
    base = DEFAULTS if opts is None else opts
    return replace(base, **changed) if changed else base
