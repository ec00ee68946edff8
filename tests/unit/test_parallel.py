"""The thread-pool driver's work split."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval import parallel


def test_chunks_cover_every_item_once_and_balance_work():
    work = np.array([5, 1, 1, 1, 30_000, 2, 2, 40_000, 1], dtype=np.int64)
    parts = parallel.chunks(work, 4)
    covered = [i for lo, hi in parts for i in range(lo, hi)]
    assert covered == list(range(len(work)))
    assert all(hi > lo for lo, hi in parts)
    # the two heavy items are not in the same chunk
    assert not any(lo <= 4 < hi and lo <= 7 < hi for lo, hi in parts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50_000), min_size=1, max_size=80), st.integers(1, 16))
def test_chunks_are_contiguous_and_no_chunk_exceeds_a_share_plus_one_item(
    items: list[int], n_chunks: int
) -> None:
    work = np.array(items, np.float64)
    parts = parallel.chunks(work, n_chunks)
    assert [i for lo, hi in parts for i in range(lo, hi)] == list(range(len(items)))
    assert all(hi > lo for lo, hi in parts)
    assert all(isinstance(lo, int) and isinstance(hi, int) for lo, hi in parts)
    assert len(parts) <= max(1, n_chunks)
    total = work.sum()
    if total > parallel.MIN_SPLIT_WORK and n_chunks > 1:
        share = total / n_chunks
        assert all(work[lo:hi].sum() <= share + work[lo:hi].max() for lo, hi in parts)
    else:
        assert parts == [(0, len(items))]


def test_run_cuts_small_work_in_one_chunk_a_thread_and_more_work_in_four() -> None:
    """Every item once, in chunks: one a thread up to ``ONE_CHUNK_WORK`` rows of work,
    four a thread above it (balance is worth the chunks' fixed cost there)."""
    from threading import Lock

    from fasteval.kernels import jit

    lock = Lock()
    t = parallel.threads()
    for total, per_thread in ((parallel.ONE_CHUNK_WORK, 1), (4 * parallel.ONE_CHUNK_WORK, 4)):
        work = np.full(64, total / 64)
        seen = np.zeros(64, np.int64)
        ranges: list[tuple[int, int]] = []

        def kernel(lo: int, hi: int, out: np.ndarray, got: list = ranges) -> None:  # type: ignore[type-arg]
            with lock:
                got.append((lo, hi))
            out[lo:hi] += 1

        assert jit.resolve(kernel, ()) is kernel  # (a plain function runs as it is)
        parallel.run(kernel, work, seen)
        assert (seen == 1).all()
        assert len(ranges) == (per_thread * t if t > 1 else 1)


def test_a_one_thread_block_runs_its_calls_on_its_own_thread_alone() -> None:
    """In ``parallel.kernel_threads(1)`` every call of that thread runs on it, in one chunk;
    another thread meanwhile, and the same thread after the block, use the pool."""
    import threading

    work = np.full(64, 4.0 * parallel.ONE_CHUNK_WORK / 64)
    t = parallel.threads()

    def callers(out: list[str]) -> None:
        def kernel(lo: int, hi: int) -> None:
            out.append(threading.current_thread().name)

        parallel.run(kernel, work)

    def other_thread() -> int:  # (numba's thread count is set per thread)
        got: list[int] = []
        worker = threading.Thread(target=lambda: got.append(parallel.threads()))
        worker.start()
        worker.join()
        return got[0]

    inside: list[str] = []
    before = other_thread()
    with parallel.kernel_threads(1):
        assert parallel.threads() == 1
        assert other_thread() == before  # the block is this thread's alone
        callers(inside)
    assert inside == [threading.current_thread().name]  # one chunk, this thread
    after: list[str] = []
    callers(after)
    assert parallel.threads() == t and len(after) == (4 * t if t > 1 else 1)
