"""The thread-pool driver's work split."""

from __future__ import annotations

import numpy as np

from fasteval import parallel


def test_chunks_cover_every_item_once_and_balance_work():
    work = np.array([5, 1, 1, 1, 30_000, 2, 2, 40_000, 1], dtype=np.int64)
    parts = parallel.chunks(work, 4)
    covered = [i for lo, hi in parts for i in range(lo, hi)]
    assert covered == list(range(len(work)))
    assert all(hi > lo for lo, hi in parts)
    # the two heavy items are not in the same chunk
    assert not any(lo <= 4 < hi and lo <= 7 < hi for lo, hi in parts)
