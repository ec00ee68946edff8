"""Byte-level kernels: tokenising TREC text and dictionary-encoding byte strings.

Only numba code lives here. Strings never cross into numba as Python objects:
a column of strings is a ``uint8`` buffer plus ``int64`` start/end offsets
(the layout of an Arrow ``large_string`` array, or of fields inside a file).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# isspace() in C: space, \t, \n, \v, \f, \r
_NL = 10
_HASH = 35


@njit(cache=True, nogil=True)
def _is_space(c: np.uint8) -> bool:
    return c == 32 or (c >= 9 and c <= 13)


_POW10 = np.array([10.0**i for i in range(23)])


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def count_lines(lo, hi, buf, file_starts, file_ends, counts):  # pragma: no cover - numba
    """``counts[f]`` = content lines (not blank, not ``#`` comments) of files ``lo..hi``."""
    for f in range(lo, hi):
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
        counts[f] = c


@njit(cache=True, nogil=True)
def split_lines(
    lo,
    hi,
    buf,
    file_starts,
    file_ends,
    row_base,
    str_fields,
    int_field,
    float_field,
    same_field,
    file_of,
    line_no,
    line_start,
    n_fields,
    starts,
    ends,
    ival,
    ibad,
    fval,
    fslow,
    same_bad,
):  # pragma: no cover - numba
    """Split the content lines of files ``lo..hi`` into fields (rows from ``row_base[f]``).

    Blank lines and lines whose first non-blank character is ``#`` are
    skipped (trec_eval 10; a ``#`` inside a field is data). Per row: the
    file, the 1-based line number, the line's byte offset, the number of
    fields, ``starts[j]``/``ends[j]`` of field ``str_fields[j]`` (-1 if
    absent; one contiguous row per field), field ``int_field`` parsed as a
    decimal integer (``ibad`` where it is not one) and field ``float_field``
    parsed when the exact fast path applies (``fslow`` marks rows needing the
    general parser). Per file,
    ``same_bad`` gets the first row whose field ``same_field`` differs from
    the file's first row.
    """
    n_sf = str_fields.shape[0]
    for f in range(lo, hi):
        row = row_base[f]
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
                starts[j, row] = -1
                ends[j, row] = -1
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
                        starts[j, row] = s
                        ends[j, row] = pos
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _hash(buf, s, e):
    h = np.uint64(14695981039346656037)
    for i in range(s, e):
        h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
    return h


@njit(cache=True, nogil=True)
def change_points(buf, starts, ends, out):  # pragma: no cover - numba
    """``out[i]`` = string ``i`` differs from string ``i - 1`` (``out[0]`` is True).

    Ids such as query and run ids come in long runs of equal values, so
    encoding only the first row of each run is cheap.
    """
    n = starts.shape[0]
    for i in range(n):
        out[i] = i == 0 or not _equal2(buf, starts[i - 1], ends[i - 1], buf, starts[i], ends[i])


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


@njit(cache=True, nogil=True)
def _equal2(b1, s1, e1, b2, s2, e2):
    if e1 - s1 != e2 - s2:
        return False
    for k in range(e1 - s1):
        if b1[s1 + k] != b2[s2 + k]:
            return False
    return True
