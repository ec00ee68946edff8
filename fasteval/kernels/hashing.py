"""Byte-string hashing and the per-query hash tables of judged documents.

A run's ids are hashed (:func:`hash_bytes`), looked up in their query's open-addressing
table of judged ids (a power of two of at least ``2m + 2`` slots) and compared byte for
byte, so a collision never judges the wrong document. A ``uint64`` slot holds the hash's
upper half (a fingerprint) and its entry's number; entries (id, grade, judgment) are in
slot order. :func:`judge_ranking` looks a ranking up in row order (a query's table is
small enough to stay in cache while its rankings are judged) and finds an id's repeats
in a small set of the ranking's own ids.
"""

from __future__ import annotations

import numpy as np

from fasteval.kernels.families import NONPOOL, UNJUDGED
from fasteval.kernels.jit import intrinsic, njit

# Byte loops index with ``np.uint64(k)``: a signed index is wrapped when negative (a
# compare at every access), which keeps LLVM from merging byte loads into one word.


_K0 = np.uint64(0x9E3779B97F4A7C15)
_K1 = np.uint64(0xBF58476D1CE4E5B9)
_K2 = np.uint64(0x94D049BB133111EB)
_BYTES_0 = np.uint64(0x00FF00FF00FF00FF)
_PAIRS_0 = np.uint64(0x0000FFFF0000FFFF)


@intrinsic
def byte_at(typingctx, addr, k):  # type: ignore[no-untyped-def]
    """The byte at ``addr + k``: ``addr`` is the data address (``buf.ctypes.data``) of a byte
    array the calling kernel received as an argument, so it outlives the call. The byte
    helpers take addresses, not arrays, because numba takes and releases an array
    argument's reference count (an atomic operation) at every call, for every row."""
    from llvmlite import ir  # noqa: PLC0415 (numba's, when a kernel is compiled)
    from numba.core import types  # noqa: PLC0415

    if not (isinstance(addr, types.Integer) and isinstance(k, types.Integer)):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        a = context.cast(builder, args[0], sig.args[0], types.uintp)
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = builder.inttoptr(a, ir.IntType(8).as_pointer())
        return builder.load(builder.gep(ptr, [i]))

    return types.uint8(addr, k), codegen


@njit(cache=True, nogil=True, inline="always")
def load_word(p, k, n=8):  # pragma: no cover - numba
    """Bytes ``k..k+n`` at address ``p`` (``n <= 8``, a constant: one load) as a
    little-endian ``uint64``."""
    w = np.uint64(0)
    for j in range(n):
        w |= np.uint64(byte_at(p, np.uint64(k) + np.uint64(j))) << np.uint64(8 * j)
    return w


@njit(cache=True, nogil=True, inline="always")
def hash_bytes(p, s, e):  # pragma: no cover - numba
    """A 64-bit hash of the bytes ``s..e`` at address ``p``: the length, then each eight-byte
    word (the last one overlapping; 4-7 bytes: the first and last four) folded in with one
    multiply, and a final splitmix64 mix that spreads every bit over the low bits the tables
    use."""
    n = e - s
    h = _K0 ^ np.uint64(n)
    if n >= 8:
        k = s
        while k + 8 < e:
            h = (h ^ load_word(p, k)) * _K1
            h ^= h >> np.uint64(31)
            k += 8
        w = load_word(p, e - 8)
    elif n >= 4:  # two overlapping four-byte reads
        w = load_word(p, s, 4) | (load_word(p, e - 4, 4) << np.uint64(32))
    else:
        w = np.uint64(0)
        for j in range(n):
            w |= np.uint64(byte_at(p, np.uint64(s + j))) << np.uint64(8 * j)
    h = (h ^ w) * _K1
    h ^= h >> np.uint64(30)
    h *= _K2
    h ^= h >> np.uint64(31)
    return h


@njit(cache=True, nogil=True)
def equal_bytes(p1, s1, e1, p2, s2, e2):  # pragma: no cover - numba
    """Whether the bytes ``s1..e1`` at address ``p1`` equal those ``s2..e2`` at ``p2``, eight
    bytes at a time, the last word overlapping (4-7 bytes: the first and last four)."""
    n = e1 - s1
    if n != e2 - s2:
        return False
    if n >= 8:
        k = 0
        while k + 8 < n:
            if load_word(p1, s1 + k) != load_word(p2, s2 + k):
                return False
            k += 8
        return load_word(p1, e1 - 8) == load_word(p2, e2 - 8)
    if n >= 4:
        d = load_word(p1, s1, 4) ^ load_word(p2, s2, 4)
        return (d | (load_word(p1, e1 - 4, 4) ^ load_word(p2, e2 - 4, 4))) == np.uint64(0)
    for k in range(n):
        if byte_at(p1, np.uint64(s1 + k)) != byte_at(p2, np.uint64(s2 + k)):
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def equal_in(p, size, s1, e1, s2, e2):  # pragma: no cover - numba
    """:func:`equal_bytes` for two slices of one buffer of ``size`` bytes at ``p``: up to eight
    bytes compared as one masked word when both words lie in the buffer."""
    n = e1 - s1
    if n != e2 - s2:
        return False
    if n > 8 or s1 + 8 > size or s2 + 8 > size:
        return equal_bytes(p, s1, e1, p, s2, e2)
    d = load_word(p, s1) ^ load_word(p, s2)
    return n == 0 or (d << np.uint64(64 - 8 * n)) == np.uint64(0)


@njit(cache=True, nogil=True, inline="always")
def _big_endian(w):  # pragma: no cover - numba
    """A little-endian word's bytes reversed (one ``bswap``): words then order as their bytes."""
    w = ((w & _BYTES_0) << np.uint64(8)) | ((w >> np.uint64(8)) & _BYTES_0)
    w = ((w & _PAIRS_0) << np.uint64(16)) | ((w >> np.uint64(16)) & _PAIRS_0)
    return (w << np.uint64(32)) | (w >> np.uint64(32))


@njit(cache=True, nogil=True)
def compare_bytes(p, s1, e1, s2, e2):  # pragma: no cover - numba
    """-1, 0 or 1 as the bytes ``s1..e1`` at address ``p`` sort before, equal or sort after
    those at ``s2..e2``; eight bytes at a time, byte-reversed words (the last one overlapping)."""
    n1 = e1 - s1
    n2 = e2 - s2
    m = n1 if n1 < n2 else n2
    if m >= 8:
        k = 0
        while True:
            if k + 8 > m:  # the last 1-7 bytes: the last word, overlapping
                k = m - 8
            a = load_word(p, s1 + k)
            b = load_word(p, s2 + k)
            if a != b:
                return -1 if _big_endian(a) < _big_endian(b) else 1
            if k + 8 >= m:
                break
            k += 8
    else:
        for k in range(m):
            a8 = byte_at(p, np.uint64(s1 + k))
            b8 = byte_at(p, np.uint64(s2 + k))
            if a8 != b8:
                return -1 if a8 < b8 else 1
    if n1 == n2:
        return 0
    return -1 if n1 < n2 else 1


def qrels_table_offsets(qr_off: np.ndarray) -> np.ndarray:
    """Slot offsets of the per-query hash tables (a power of two >= 2m + 2 each)."""
    m = np.diff(qr_off)
    cap = np.maximum(16, 2 ** np.ceil(np.log2(2 * m + 2)).astype(np.int64))
    return np.concatenate([[0], np.cumsum(cap)]).astype(np.int64)


@njit(cache=True, nogil=True)
def build_qrels_tables(
    lo, hi, qdocs, qr_off, qr_rows, qr_rel, table, dup
):  # pragma: no cover - numba
    """Fill the hash tables (:class:`~fasteval.kernels.ranking.QrelsTable`) of queries
    ``lo..hi``: slots, and ``rel``/``jud`` in slot order (the caller gathers ``ids``).
    ``dup[q]`` gets the qrels row of a judgment repeating a document (the caller raises)."""
    qbuf, qs, qe = qdocs
    qp = qbuf.ctypes.data
    t_off, slots, _, t_rel, t_jud = table
    for q in range(lo, hi):
        base = t_off[q]
        cap = t_off[q + 1] - base
        mask = cap - 1
        local = np.full(cap, -1, np.int64)
        hs = np.empty(cap, np.uint64)
        for j in range(qr_off[q], qr_off[q + 1]):
            h = hash_bytes(qp, qs[j], qe[j])
            slot = np.int64(h & np.uint64(mask))
            while True:
                u = local[slot]
                if u == -1:
                    local[slot] = j
                    hs[slot] = h
                    break
                if hs[slot] == h and equal_bytes(qp, qs[u], qe[u], qp, qs[j], qe[j]):
                    if dup[q] < 0:
                        dup[q] = qr_rows[j]
                    break
                slot = (slot + 1) & mask
        k = qr_off[q]
        for slot in range(cap):
            j = local[slot]
            if j >= 0:
                t_jud[k] = j
                g = qr_rel[j]
                t_rel[k] = g if g >= 0 else UNJUDGED
                fp = (hs[slot] >> np.uint64(32)) << np.uint64(32)
                slots[base + slot] = fp | np.uint64(k + 1)
                k += 1


@njit(cache=True, nogil=True, inline="always")
def hash_ranking(buf, d_s, d_e, rows, hs):  # pragma: no cover - numba
    """Hash the ids of ``rows`` into ``hs`` (repeats are found by :func:`judge_ranking`)."""
    p = buf.ctypes.data
    for i in range(rows.shape[0]):
        r = rows[i]
        hs[i] = hash_bytes(p, d_s[r], d_e[r])


@njit(cache=True, nogil=True, inline="always")
def seen_slots(n):  # pragma: no cover - numba
    """Slots of :func:`judge_ranking`'s set of a ranking's ``n`` ids: a power of two >= 4n
    (a sparse set: most ids find an empty slot at once)."""
    cap = 16
    while cap < 4 * n:
        cap *= 2
    return cap


@njit(cache=True, nogil=True)
def judge_ranking(
    buf, d_s, d_e, rows, hs, q, table, grade, jud, dup, seen
):  # pragma: no cover - numba
    """Look up the documents ``rows`` (hashes ``hs``) in query ``q``'s table, in row order.

    ``grade[i]``: the grade (``UNJUDGED`` for a negative one, ``NONPOOL`` if not judged);
    ``jud[i]``: the judgment (-1 if none); ``dup[i]``: row ``i`` repeats an earlier id,
    found in a set of the ranking's ids (``seen``: scratch of :func:`seen_slots` ``(n)``
    slots at least), and copies its first row's grade and judgment.
    """
    t_off, slots, ids, t_rel, t_jud = table
    tbuf, ts, te = ids
    tp = tbuf.ctypes.data
    bp = buf.ctypes.data
    base = t_off[q]
    qmask = t_off[q + 1] - base - 1
    low = np.uint64(0xFFFFFFFF)
    n = hs.shape[0]
    smask = seen_slots(n) - 1
    seen[: smask + 1] = 0
    for i in range(n):
        h = hs[i]
        r = rows[i]
        a = d_s[r]
        e_ = d_e[r]
        repeat = -1
        t = np.int64(h & np.uint64(smask))
        while True:
            j = seen[t] - 1
            if j < 0:
                seen[t] = i + 1
                break
            if hs[j] == h and equal_bytes(bp, d_s[rows[j]], d_e[rows[j]], bp, a, e_):
                repeat = j
                break
            t = (t + 1) & smask
        dup[i] = repeat >= 0
        if repeat >= 0:
            grade[i] = grade[repeat]
            jud[i] = jud[repeat]
            continue
        fp = h >> np.uint64(32)
        gv = NONPOOL
        jq = np.int64(-1)
        slot = np.int64(h & np.uint64(qmask))
        while True:
            e = slots[base + slot]
            if e == 0:
                break
            if (e >> np.uint64(32)) == fp:
                k = np.int64(e & low) - 1
                if equal_bytes(tp, ts[k], te[k], bp, a, e_):
                    gv = t_rel[k]
                    jq = t_jud[k]
                    break
            slot = (slot + 1) & qmask
        grade[i] = gv
        jud[i] = jq
