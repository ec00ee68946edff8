"""Run ``nogil`` kernels over chunks of work on a thread pool.

numba's ``parallel=True`` (parfor) roughly doubled compile time here (131 s
vs 55 s for a cold cache on a loaded 2-core machine). The kernels are
instead plain ``@njit(nogil=True)`` functions over an index range
``[lo, hi)`` that write only their own output slots, and this driver splits
the range into chunks balanced by work and runs them concurrently. The
thread count is numba's (``NUMBA_NUM_THREADS`` / ``numba.set_num_threads``).
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numba
import numpy as np

_MIN_CHUNK_WORK = 20_000


def threads() -> int:
    """Threads fasteval uses (numba's setting)."""
    return max(1, int(numba.get_num_threads()))


def chunks(work: np.ndarray, n_chunks: int) -> list[tuple[int, int]]:
    """Split items ``0..len(work)`` into contiguous ranges of about equal total work."""
    n = int(work.shape[0])
    if n == 0:
        return []
    cum = np.cumsum(work, dtype=np.float64)
    total = float(cum[-1])
    if n_chunks <= 1 or total <= _MIN_CHUNK_WORK:
        return [(0, n)]
    cuts = np.searchsorted(cum, np.linspace(0, total, n_chunks + 1)[1:-1], side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [n]]))
    return [(int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]


def run(kernel: Callable[..., Any], work: np.ndarray, *args: Any) -> None:
    """Call ``kernel(lo, hi, *args)`` over all items, chunks in parallel.

    ``work`` gives each item's cost (e.g. rows per group) for balancing.
    """
    t = threads()
    _call(kernel, chunks(work, 4 * t if t > 1 else 1), t, args)


def run_rows(kernel: Callable[..., Any], n: int, *args: Any) -> None:
    """Call ``kernel(lo, hi, *args)`` over rows ``0..n`` of equal cost, ranges in parallel."""
    t = threads()
    if t == 1 or n <= _MIN_CHUNK_WORK:
        _call(kernel, [(0, n)], t, args)
        return
    bounds = np.linspace(0, n, 4 * t + 1).astype(np.int64)
    parts = [(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds) if hi > lo]
    _call(kernel, parts, t, args)


def _call(
    kernel: Callable[..., Any], parts: list[tuple[int, int]], t: int, args: tuple[Any, ...]
) -> None:
    """``kernel(lo, hi, *args)`` for each range: on ``t`` threads, or in this one."""
    if len(parts) <= 1 or t == 1:
        for lo, hi in parts:
            kernel(lo, hi, *args)
        return
    with ThreadPoolExecutor(t) as ex:
        for f in [ex.submit(kernel, lo, hi, *args) for lo, hi in parts]:
            f.result()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block.

    The engine allocates few Python objects, but numba's first call in a
    process loads type registries: hundreds of thousands of objects, which
    trigger full collections over everything polars, numba and pyarrow
    hold (about 60 ms each on the benchmark machine). Reference counting
    still frees everything as usual; only cycle detection waits until the
    block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def kernel_threads(n: int | None) -> Iterator[None]:
    """numba threads for the kernels run in the block (thread-local; ``None``: unchanged).

    The count is clipped to ``1..NUMBA_NUM_THREADS``; the previous one is
    restored afterwards.
    """
    if n is None:
        yield
        return
    old = numba.get_num_threads()
    most = int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
    numba.set_num_threads(max(1, min(int(n), most)))
    try:
        yield
    finally:
        numba.set_num_threads(old)
