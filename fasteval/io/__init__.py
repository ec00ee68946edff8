"""Readers and writers: TREC text, Parquet, polars and Arrow tables."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from fasteval.errors import SchemaError

T = TypeVar("T")


def is_polars(x: Any, *kinds: str) -> bool:
    """Whether ``x`` is a polars ``DataFrame`` (or one of ``kinds``: ``"LazyFrame"``, ...).

    Asked without importing polars: a text evaluation never loads it, and an object
    can be a polars frame only once polars is loaded.
    """
    pl = sys.modules.get("polars")
    if pl is None:
        return False
    return isinstance(x, tuple(getattr(pl, k) for k in kinds or ("DataFrame",)))


def coerce(
    x: Any, kind: type[T], what: str, frame: Callable[[Any], T], path: Callable[[Any], T]
) -> T:
    """``x`` if a ``kind``, else ``frame(x)`` for a polars frame or ``path(x)`` for a path."""
    if isinstance(x, kind):
        return x
    if is_polars(x):
        return frame(x)
    if isinstance(x, (str, os.PathLike)):
        return path(x)
    msg = f"{what} must be a path, a polars DataFrame or {kind.__name__}, got {type(x).__name__}"
    raise SchemaError(msg)


def need_columns(have: Collection[str], need: Sequence[str], name: str, what: str) -> None:
    """A :class:`SchemaError` naming the columns of ``need`` a ``what`` table lacks."""
    missing = [c for c in need if c not in have]
    if missing:
        msg = f"{name}: {what} table lacks column(s) {', '.join(missing)} (needs {', '.join(need)})"
        raise SchemaError(msg)
