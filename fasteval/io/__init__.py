"""Readers and writers: TREC text, Parquet, polars and Arrow tables."""

from __future__ import annotations

import sys
from typing import Any


def is_polars(x: Any, *kinds: str) -> bool:
    """Whether ``x`` is a polars ``DataFrame`` (or one of ``kinds``: ``"LazyFrame"``, ...).

    Asked without importing polars: a text evaluation never loads it, and an object
    can be a polars frame only once polars is loaded.
    """
    pl = sys.modules.get("polars")
    if pl is None:
        return False
    return isinstance(x, tuple(getattr(pl, k) for k in kinds or ("DataFrame",)))
