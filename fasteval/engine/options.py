"""The evaluation options: one frozen value, validated once."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from fasteval.errors import ParameterError
from fasteval.measures.catalog import check_rel_format

RUN_ID_SOURCES = ("tag", "filename")


@dataclass(frozen=True)
class EvalOptions:
    """trec_eval's options and fasteval's reading options, checked when made.

    The fields are :func:`fasteval.evaluate`'s keyword arguments of the same
    names (see there); ``zscores`` is already read (a
    :class:`fasteval.io.zscores.ZScores` or ``None``).
    """

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
        if self.run_id_from not in RUN_ID_SOURCES:
            msg = f"run_id_from must be 'tag' or 'filename', got {self.run_id_from!r}"
            raise ParameterError(msg)
        if self.batch_rows is not None and self.batch_rows <= 0:
            msg = f"batch_rows must be positive, got {self.batch_rows}"
            raise ParameterError(msg)
        check_rel_format(self.rel_format)

    def as_kwargs(self, *names: str) -> dict[str, Any]:
        """The named fields (all when none is named) as keyword arguments."""
        names = names or tuple(f.name for f in fields(self))
        return {n: getattr(self, n) for n in names}
