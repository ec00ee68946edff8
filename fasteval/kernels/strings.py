"""String-column kernels: runs of equal ids, Arrow string views, gathers.

The engine keeps strings as slices of one byte buffer (:class:`fasteval.columns.StrColumn`);
these kernels read such columns: number runs of equal consecutive ids (by their bytes,
or by their Arrow views), and copy chosen strings (of such a buffer, or of an Arrow
``string_view`` array) into one contiguous buffer.
"""

from __future__ import annotations

import numpy as np

from fasteval.kernels.hashing import equal_bytes, equal_in
from fasteval.kernels.jit import njit


@njit(cache=True, nogil=True)
def equal_runs(buf, starts, ends):  # pragma: no cover - numba
    """The first row of each run of equal consecutive strings: row ``i`` is in run ``k`` for
    ``heads[k] <= i < heads[k + 1]`` (query and run ids come in long runs)."""
    n = starts.shape[0]
    heads = np.empty(n, np.int64)
    bp = buf.ctypes.data
    size = buf.shape[0]
    k = -1
    ps = 0
    pe = -1
    for i in range(n):
        s = starts[i]
        e = ends[i]
        # the same slice (a dictionary's entry) is equal as it is
        same = k >= 0 and ((s == ps and e == pe) or equal_in(bp, size, ps, pe, s, e))
        if not same:
            k += 1
            heads[k] = i
        ps = s
        pe = e
    return heads[: k + 1].copy()


@njit(cache=True, nogil=True, inline="always")
def view_data_start(second, bases):  # pragma: no cover - numba
    """Where a long string starts in the data buffers taken one after another, from
    its view's second word (``offset << 32 | buffer``; ``bases`` as :func:`_view`'s)."""
    return bases[np.int64(second & np.uint64(0xFFFFFFFF))] + np.int64(second >> np.uint64(32))


@njit(cache=True, nogil=True)
def equal_view_runs(views, data, bases):  # pragma: no cover - numba
    """:func:`equal_runs` over Arrow string views (``views``: two ``uint64`` per string;
    ``data`` and ``bases``: the data buffers one after another, see :func:`_view`).

    Equal views mean equal strings; views equal in length and prefix (the first word)
    but not in where the bytes are (a long string stored twice) are compared by their
    bytes, so a column of long ids stored row by row is still one run per value.
    """
    dp = data.ctypes.data
    n = views.shape[0]
    heads = np.empty(n, np.int64)
    low = np.uint64(0xFFFFFFFF)
    k = -1
    a = np.uint64(0)  # the current run's first view
    b = np.uint64(0)
    for i in range(n):
        x = views[i, 0]
        y = views[i, 1]
        if k >= 0 and x == a:
            if y == b:
                continue
            length = np.int64(x & low)
            if length > 12:  # the same length and prefix: compare the bytes
                s1 = view_data_start(b, bases)
                s2 = view_data_start(y, bases)
                if equal_bytes(dp, s1, s1 + length, dp, s2, s2 + length):
                    continue
        k += 1
        heads[k] = i
        a = x
        b = y
    return heads[: k + 1].copy()


@njit(cache=True, nogil=True)
def gather(buf, starts, ends, rows):  # pragma: no cover - numba
    """Copy the strings ``rows`` into one contiguous buffer with offsets."""
    m = rows.shape[0]
    offsets = np.empty(m + 1, np.int64)
    offsets[0] = 0
    for j in range(m):
        r = rows[j]
        offsets[j + 1] = offsets[j] + (ends[r] - starts[r])
    out = np.empty(offsets[m], np.uint8)
    for j in range(m):
        r = rows[j]
        s = starts[r]
        o = offsets[j]
        for k in range(ends[r] - s):
            out[np.uint64(o + k)] = buf[np.uint64(s + k)]
    return out, offsets


@njit(cache=True, nogil=True, inline="always")
def _u32(b, k):  # pragma: no cover - numba
    """Bytes ``b[k:k+4]`` as a little-endian ``int64``."""
    w = np.int64(0)
    for j in range(4):
        w |= np.int64(b[np.uint64(k) + np.uint64(j)]) << (8 * j)
    return w


@njit(cache=True, nogil=True, inline="always")
def _view(views, i, bases):  # pragma: no cover - numba
    """Where string ``i`` of an Arrow ``string_view`` array lies: ``(in_data, start, length)``.

    ``views``: 16 bytes each, the length, then the bytes of a string of at most 12 (it
    starts inside its view: ``in_data`` false) or a prefix, buffer index and offset
    (``start`` in the data buffers one after another, buffer ``b`` at ``bases[b]``).
    """
    v = 16 * i
    length = _u32(views, v)
    if length <= 12:
        return False, v + 4, length
    return True, bases[_u32(views, v + 8)] + _u32(views, v + 12), length


@njit(cache=True, nogil=True)
def view_gather(views, data, bases, rows):  # pragma: no cover - numba
    """The strings ``rows`` of a ``string_view`` array copied into one buffer, with
    offsets (as :func:`gather`; ``data``: the data buffers one after another, see
    :func:`_view`)."""
    m = rows.shape[0]
    offsets = np.empty(m + 1, np.int64)
    offsets[0] = 0
    for j in range(m):
        offsets[j + 1] = offsets[j] + _u32(views, 16 * rows[j])
    out = np.empty(offsets[m], np.uint8)
    for j in range(m):
        in_data, s, length = _view(views, rows[j], bases)
        src = data if in_data else views
        o = offsets[j]
        for k in range(length):
            out[np.uint64(o + k)] = src[np.uint64(s + k)]
    return out, offsets


@njit(cache=True, nogil=True)
def view_offsets(views, bases):  # pragma: no cover - numba
    """Where the strings of an Arrow ``string_view`` array lie in one combined buffer:
    its views' bytes ``views``, then its data buffers (``bases`` as :func:`_view`'s).

    Returns every string's ``starts`` and ``ends``.
    """
    n = views.shape[0] // 16
    data_base = views.shape[0]
    starts = np.empty(n, np.int64)
    ends = np.empty(n, np.int64)
    for i in range(n):
        in_data, s, length = _view(views, i, bases)
        if in_data:
            s += data_base
        starts[i] = s
        ends[i] = s + length
    return starts, ends
