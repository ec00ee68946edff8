"""Byte-level kernels: tokenising TREC text and dictionary-encoding byte strings.

Only numba code lives here. Strings never cross into numba as Python objects:
a column of strings is a ``uint8`` buffer plus ``int64`` start/end offsets
(the layout of an Arrow ``large_string`` array, or of fields inside a file).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# isspace() in C: space, \t, \n, \v, \f, \r
_NL = 10
_HASH = 35


@njit(cache=True, nogil=True, inline="always")
def _is_space(c: np.uint8) -> bool:
    return c == 32 or (c >= 9 and c <= 13)


_POW10 = np.array([10.0**i for i in range(23)])


@njit(cache=True, nogil=True, inline="always")
def _line_start(buf, pos, stop):
    """Skip blanks; return (position of first non-blank or the newline/stop, kind).

    kind: 0 = content, 1 = blank line, 2 = comment line.
    """
    while pos < stop and buf[pos] != _NL and _is_space(buf[pos]):
        pos += 1
    if pos >= stop or buf[pos] == _NL:
        return pos, 1
    if buf[pos] == _HASH:
        return pos, 2
    return pos, 0


@njit(cache=True, nogil=True, parallel=True)
def tokenize(
    buf, file_starts, file_ends, str_fields, int_field, float_field, same_field
):  # pragma: no cover
    """Split whitespace-separated text files (one buffer) into fields, in parallel by file.

    Blank lines and lines whose first non-blank character is ``#`` are
    skipped (trec_eval 10; a ``#`` inside a field is data). Files are the
    byte ranges ``[file_starts[f], file_ends[f])`` of ``buf``.

    Returns, per kept line: ``file`` (int32), 1-based ``line_no`` (int64), the
    byte offset where the line starts,
    ``n_fields`` (all fields on the line, int32), ``starts``/``ends`` of the
    fields listed in ``str_fields`` (-1 if absent); field ``int_field`` parsed
    as a decimal integer (``ibad`` where it is not one); field ``float_field``
    parsed as a float when the exact fast path applies (``fslow`` marks rows
    that need the general parser); and per file the first row whose field
    ``same_field`` differs from the file's first row (-1 if none).
    """
    n_files = file_starts.shape[0]
    n_sf = str_fields.shape[0]
    counts = np.zeros(n_files + 1, np.int64)
    for f in prange(n_files):
        c = 0
        pos = file_starts[f]
        stop = file_ends[f]
        while pos < stop:
            pos, kind = _line_start(buf, pos, stop)
            if kind == 0:
                c += 1
            while pos < stop and buf[pos] != _NL:
                pos += 1
            pos += 1
        counts[f + 1] = c
    for f in range(n_files):
        counts[f + 1] += counts[f]
    n = counts[n_files]
    file_of = np.empty(n, np.int32)
    line_no = np.empty(n, np.int64)
    line_start = np.empty(n, np.int64)
    n_fields = np.empty(n, np.int32)
    starts = np.empty((n, n_sf), np.int64)
    ends = np.empty((n, n_sf), np.int64)
    ival = np.zeros(n, np.int64)
    ibad = np.zeros(n, np.bool_)
    fval = np.zeros(n, np.float64)
    fslow = np.zeros(n, np.bool_)
    same_bad = np.full(n_files, -1, np.int64)
    for f in prange(n_files):
        row = counts[f]
        pos = file_starts[f]
        stop = file_ends[f]
        line = 0
        ref_s = -1
        ref_e = -1
        while pos < stop:
            line += 1
            pos, kind = _line_start(buf, pos, stop)
            if kind != 0:
                while pos < stop and buf[pos] != _NL:
                    pos += 1
                pos += 1
                continue
            for j in range(n_sf):
                starts[row, j] = -1
                ends[row, j] = -1
            line_start[row] = pos
            nf = 0
            ibad[row] = True
            fslow[row] = True
            while pos < stop and buf[pos] != _NL:
                if _is_space(buf[pos]):
                    pos += 1
                    continue
                s = pos
                while pos < stop and not _is_space(buf[pos]):
                    pos += 1
                for j in range(n_sf):
                    if str_fields[j] == nf:
                        starts[row, j] = s
                        ends[row, j] = pos
                if nf == int_field:
                    v, bad = _parse_int(buf, s, pos)
                    ival[row] = v
                    ibad[row] = bad
                if nf == float_field:
                    x, slow = _parse_float_fast(buf, s, pos)
                    fval[row] = x
                    fslow[row] = slow
                if nf == same_field and same_bad[f] < 0:
                    if ref_s < 0:
                        ref_s = s
                        ref_e = pos
                    elif not _equal2(buf, ref_s, ref_e, buf, s, pos):
                        same_bad[f] = row
                nf += 1
            file_of[row] = f
            line_no[row] = line
            n_fields[row] = nf
            row += 1
            pos += 1
    return file_of, line_no, line_start, n_fields, starts, ends, ival, ibad, fval, fslow, same_bad


@njit(cache=True, nogil=True, inline="always")
def _parse_int(buf, s, e):
    neg = False
    if s < e and (buf[s] == 45 or buf[s] == 43):
        neg = buf[s] == 45
        s += 1
    if s >= e or e - s > 18:
        return 0, True
    v = 0
    for k in range(s, e):
        c = buf[k]
        if c < 48 or c > 57:
            return 0, True
        v = v * 10 + (c - 48)
    return (-v if neg else v), False


@njit(cache=True, nogil=True, inline="always")
def _parse_float_fast(buf, s, e):
    """Decimal -> double, exactly, when mantissa < 2**53 and |exp10| <= 22 (Clinger).

    Both the mantissa and the power of ten are exact doubles, so one IEEE
    multiply or divide rounds correctly. Returns (value, needs_slow_path).
    """
    neg = False
    if s < e and (buf[s] == 45 or buf[s] == 43):
        neg = buf[s] == 45
        s += 1
    m = np.uint64(0)
    nd = 0
    frac = 0
    seen_digit = False
    seen_dot = False
    k = s
    while k < e:
        c = buf[k]
        if c >= 48 and c <= 57:
            seen_digit = True
            if nd > 0 or c != 48:
                nd += 1
                if nd > 19:
                    return 0.0, True
                m = m * np.uint64(10) + np.uint64(c - 48)
            if seen_dot:
                frac += 1
        elif c == 46 and not seen_dot:
            seen_dot = True
        else:
            break
        k += 1
    if not seen_digit:
        return 0.0, True
    exp = 0
    if k < e:
        c = buf[k]
        if c != 101 and c != 69:
            return 0.0, True
        k += 1
        eneg = False
        if k < e and (buf[k] == 45 or buf[k] == 43):
            eneg = buf[k] == 45
            k += 1
        if k >= e or e - k > 4:
            return 0.0, True
        while k < e:
            c = buf[k]
            if c < 48 or c > 57:
                return 0.0, True
            exp = exp * 10 + (c - 48)
            k += 1
        if eneg:
            exp = -exp
    exp -= frac
    if m == 0:
        return (-0.0 if neg else 0.0), False
    if m > np.uint64(9007199254740992) or exp < -22 or exp > 22:
        return 0.0, True
    x = float(m)
    x = x * _POW10[exp] if exp >= 0 else x / _POW10[-exp]
    return (-x if neg else x), False


@njit(cache=True, nogil=True, inline="always")
def _hash(buf, s, e):
    h = np.uint64(14695981039346656037)
    for i in range(s, e):
        h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
    return h


@njit(cache=True, nogil=True)
def dict_encode(buf, starts, ends):  # pragma: no cover - numba
    """Exact dictionary encoding of byte strings (open addressing).

    Returns ``(codes, first)``: ``codes[i]`` is the id of string ``i`` in
    order of first appearance, ``first[u]`` the row where id ``u`` first
    occurs. Equality is byte-for-byte; the hash only picks the slot.
    """
    n = starts.shape[0]
    cap = 1024
    while cap < 4 * 1024 and cap < 2 * n:
        cap *= 2
    table = np.full(cap, -1, np.int64)
    u_hash = np.empty(cap // 2 + 1, np.uint64)
    u_first = np.empty(cap // 2 + 1, np.int64)
    codes = np.empty(n, np.int32)
    n_u = 0
    mask = np.uint64(cap - 1)
    for i in range(n):
        s = starts[i]
        e = ends[i]
        if i > 0 and _equal2(buf, starts[i - 1], ends[i - 1], buf, s, e):
            codes[i] = codes[i - 1]  # ids usually come in runs (a query's lines)
            continue
        h = _hash(buf, s, e)
        slot = np.int64(h & mask)
        while True:
            u = table[slot]
            if u == -1:
                table[slot] = n_u
                u_hash[n_u] = h
                u_first[n_u] = i
                codes[i] = n_u
                n_u += 1
                break
            if u_hash[u] == h:
                r = u_first[u]
                if _equal2(buf, starts[r], ends[r], buf, s, e):
                    codes[i] = u
                    break
            slot = (slot + 1) & np.int64(mask)
        if 2 * n_u > cap:
            cap *= 2
            mask = np.uint64(cap - 1)
            table = np.full(cap, -1, np.int64)
            for v in range(n_u):
                sl = np.int64(u_hash[v] & mask)
                while table[sl] != -1:
                    sl = (sl + 1) & np.int64(mask)
                table[sl] = v
            nh = np.empty(cap // 2 + 1, np.uint64)
            nf = np.empty(cap // 2 + 1, np.int64)
            nh[:n_u] = u_hash[:n_u]
            nf[:n_u] = u_first[:n_u]
            u_hash = nh
            u_first = nf
    return codes, u_first[:n_u].copy()


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
            out[o + k] = buf[s + k]
    return out, offsets


@njit(cache=True, nogil=True, inline="always")
def _equal2(b1, s1, e1, b2, s2, e2):
    if e1 - s1 != e2 - s2:
        return False
    for k in range(e1 - s1):
        if b1[s1 + k] != b2[s2 + k]:
            return False
    return True
