"""The classic collections' readers now live in :mod:`fasteval.io.classic` (re-exported here)."""

from fasteval.io.classic import READERS, load
from fasteval.io.classic import ClassicCollection as Collection

__all__ = ["READERS", "Collection", "load"]
