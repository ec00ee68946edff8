"""Run ``nogil`` kernels over chunks of work on one thread pool for the process.

The kernels are ``@njit(nogil=True)`` functions over an index range ``[lo, hi)`` that
write only their own output slots (numba's ``parallel=True`` roughly doubled compile
time); :func:`run` splits the range into chunks balanced by work. The pool is made on
first use and reused; the calling thread takes chunks too, so nested or concurrent
calls cannot wait on each other.
"""

from __future__ import annotations

import gc
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from fasteval.errors import ParameterError
from fasteval.kernels import jit

MIN_SPLIT_WORK = 20_000
"""Total work (rows) below which a call runs on the calling thread (the pool costs more)."""

ONE_CHUNK_WORK = 100_000
"""Total work (rows) up to which :func:`run` makes one chunk per thread, not four: a
chunk's fixed cost outweighs the balance more chunks give (benchmarks/RESULTS.md)."""

THREADS_ENV = "FASTEVAL_THREADS"
"""Environment variable fixing the pool's size (default: the number of cores)."""

CORES = max(1, os.cpu_count() or 1)
"""The machine's cores, read once (``os.cpu_count`` reads a file)."""

T = TypeVar("T")
R = TypeVar("R")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's thread pool, made on first use: one thread a core, or ``$FASTEVAL_THREADS``."""
    global _pool  # noqa: PLW0603 (one pool for the process)
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                env = os.environ.get(THREADS_ENV)
                try:
                    n = CORES if env is None else int(env)
                except ValueError:
                    n = 0
                if n <= 0:
                    msg = f"{THREADS_ENV} must be a positive integer, got {env!r}"
                    raise ParameterError(msg)
                _pool = ThreadPoolExecutor(n, thread_name_prefix="fasteval")
    return _pool


_kernel_threads = threading.local()


@contextmanager
def kernel_threads(n: int | None) -> Iterator[None]:
    """Threads for the kernel calls this thread makes in the block (``None``: unchanged),
    clipped to ``1..$NUMBA_NUM_THREADS`` (the cores by default), restored afterwards; no
    numba loaded. (A caller running several blocks at once, one a core, gives each 1.)"""
    if n is None:
        yield
        return
    old = getattr(_kernel_threads, "n", None)
    _kernel_threads.n = max(1, min(int(n), _most_threads()))
    try:
        yield
    finally:
        _kernel_threads.n = old


def threads() -> int:
    """Threads one call uses at most: :func:`kernel_threads`' setting in its block, else
    numba's, or before numba is imported (the kernels' library, :mod:`fasteval.kernels.jit`)
    its default, ``$NUMBA_NUM_THREADS``."""
    n: int | None = getattr(_kernel_threads, "n", None)
    if n is not None:
        return n
    numba = sys.modules.get("numba")
    if numba is not None:
        return max(1, int(numba.get_num_threads()))
    return _most_threads()


def _most_threads() -> int:
    env = os.environ.get("NUMBA_NUM_THREADS", "")
    return max(1, int(env) if env.isdigit() else CORES)


def chunks(work: np.ndarray, n_chunks: int) -> list[tuple[int, int]]:
    """Split items ``0..len(work)`` into contiguous ranges of about equal total work."""
    n = int(work.shape[0])
    if n == 0:
        return []
    cum = np.cumsum(work, dtype=np.float64)
    total = float(cum[-1])
    if n_chunks <= 1 or total <= MIN_SPLIT_WORK:
        return [(0, n)]
    targets = np.arange(1, n_chunks, dtype=np.float64) * (total / n_chunks)
    cuts = np.searchsorted(cum, targets, side="right").tolist()
    bounds = sorted({0, n, *cuts})
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def run(kernel: Callable[..., Any], work: np.ndarray, *args: Any) -> None:
    """Call ``kernel(lo, hi, *args)`` over all items, chunks in parallel, balanced by each
    item's cost ``work``: four chunks a thread, one up to :data:`ONE_CHUNK_WORK`."""
    t = threads()
    per_thread = 1 if float(work.sum()) <= ONE_CHUNK_WORK else 4
    parts = chunks(work, per_thread * t if t > 1 else 1)
    if parts:  # the chunks' arguments differ only in lo, hi: their types are read once
        kernel = jit.resolve(kernel, (*parts[0], *args))
        map_threads(lambda p: kernel(*p, *args), parts, t)


def map_threads(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on the pool, in order, ``workers`` at a time (the calling
    thread too); ``fn``'s first exception is raised once every started item is done."""
    todo = list(items)
    n = len(todo)
    workers = min(n, threads() if workers is None else max(1, workers))
    if workers <= 1:
        return [fn(x) for x in todo]
    out: list[Any] = [None] * n
    errors: list[BaseException] = []
    counter = itertools.count()
    lock = threading.Lock()

    def drain() -> None:
        while True:
            with lock:
                if errors:
                    return
                i = next(counter)
            if i >= n:
                return
            try:
                out[i] = fn(todo[i])
            except BaseException as e:  # re-raised by the caller
                with lock:
                    errors.append(e)
                return

    helpers: list[Future[None]] = [pool().submit(drain) for _ in range(workers - 1)]
    drain()
    for f in helpers:
        f.result()
    if errors:
        raise errors[0]
    return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (the many objects numba's
    first call loads would trigger full collections)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
