"""Dict qrels prepared once per process: the last few, known again by their content.

``fasteval.evaluate(qrels_dict, run_dict)`` in a loop would index the same judgments on
every call, costing more than the run. The last few dict qrels are kept with a copy; a
later call with an equal dict (compared in C) reuses what was prepared. An edited dict
no longer equals its copy and is prepared again. Only plain dicts are kept (files may
change on disk; frames are converted before they could be compared).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

P = TypeVar("P")

SIZE = 2
"""How many dict qrels are kept (each holds its prepared tables and a copy of the dict)."""


def is_qrels_dict(qrels: Any) -> bool:
    """A non-empty ``{query: {doc: grade}}`` dict of dicts."""
    return (
        isinstance(qrels, dict) and bool(qrels) and all(isinstance(d, dict) for d in qrels.values())
    )


def snapshot(qrels: Mapping[Any, Mapping[Any, Any]]) -> dict[Any, dict[Any, Any]]:
    """A copy of a qrels dict, two levels deep (what a later equality test reads)."""
    return {q: dict(d) for q, d in qrels.items()}


class RecentQrels:
    """The last :data:`SIZE` dict qrels and what was prepared from each (thread-safe)."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._items: list[tuple[dict[Any, dict[Any, Any]], Any]] = []
        self._lock = threading.Lock()

    def prepared(self, qrels: dict[Any, dict[Any, Any]], make: Callable[[], P]) -> P:
        """What ``make()`` prepares from ``qrels``, reused when an equal dict was prepared."""
        with self._lock:
            for i, (copy, prepared) in enumerate(self._items):
                if copy == qrels:
                    self._items.insert(0, self._items.pop(i))
                    return prepared  # type: ignore[no-any-return]
        made = make()  # raises for bad qrels: nothing is kept
        copy = snapshot(qrels)
        with self._lock:
            self._items.insert(0, (copy, made))
            del self._items[self.size :]
        return made

    def clear(self) -> None:
        """Forget every kept qrels."""
        with self._lock:
            self._items.clear()


RECENT = RecentQrels()
"""The process's dict qrels, shared by every :class:`fasteval.Evaluator`."""
