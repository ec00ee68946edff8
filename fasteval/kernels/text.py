"""Byte-level kernels: tokenising TREC text. A column of strings is a ``uint8`` buffer
plus ``int64`` start/end offsets (an Arrow ``large_string`` array's layout, or fields
inside a file)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fasteval.kernels.hashing import equal_in, load_word
from fasteval.kernels.jit import njit

# isspace() in C: space, \t, \n, \v, \f, \r
_NL = 10
_HASH = 35


class Str(NamedTuple):
    """Strings as slices ``buf[starts[i]:ends[i]]`` (uint8 buffer, int64 offsets)."""

    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


class ViewStr(NamedTuple):
    """The strings of an Arrow ``string_view`` array (polars' strings), read in place.

    ``views`` holds two little-endian ``uint64`` words a string: the first has the
    length in its low 32 bits; a string of at most 12 bytes lies in the view's
    bytes 4-15, a longer one at ``bases[b] + o`` of ``data`` (the data buffers one
    after another), where the second word is ``o << 32 | b``.
    """

    views: np.ndarray  # uint64, shape (n, 2)
    data: np.ndarray  # uint8
    bases: np.ndarray  # int64


class Ranges(NamedTuple):
    """Line-aligned ranges ``buf[starts[r]:ends[r]]``, of file ``file[r]`` after its line
    ``lines_before[r]``."""

    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    file: np.ndarray
    lines_before: np.ndarray


class FieldSpec(NamedTuple):
    """What :func:`split_lines` takes from a line (fields from 0; -1: none): field ``i``'s bytes
    in row ``slot_of[i]`` of ``starts``/``ends``; the ``integer``, ``number`` and ``same``
    (must not change) fields, and the field whose runs of equal values are marked."""

    slot_of: np.ndarray  # int64
    integer: int
    number: int
    same: int
    runs: int


class Lines(NamedTuple):
    """Outputs of :func:`split_lines`: per row, then ``same_bad`` per range."""

    file_of: np.ndarray  # int32
    line_no: np.ndarray  # int64
    line_start: np.ndarray  # int64
    n_fields: np.ndarray  # int32
    starts: np.ndarray  # int64 (n_slots, n_rows)
    ends: np.ndarray  # int64 (n_slots, n_rows)
    ival: np.ndarray  # int64
    ibad: np.ndarray  # bool
    fval: np.ndarray  # float64
    fbad: np.ndarray  # bool
    new_run: np.ndarray  # bool: the ``runs`` field differs from the row before's in its range
    same_bad: np.ndarray  # int64 per range


@njit(cache=True, nogil=True)
def _is_space(c: np.uint8) -> bool:
    # one comparison for the usual byte (a letter or digit is > 32)
    return c <= 32 and (c == 32 or (c >= 9 and c <= 13))


_POW10 = np.array([10.0**i for i in range(23)])

# SWAR constants: eight bytes tested at once in a 64-bit word
_NL8 = np.uint64(0x0A0A0A0A0A0A0A0A)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_ONE8 = np.uint64(0x0101010101010101)
_LO16 = np.uint64(0x00FF00FF00FF00FF)
_ONE16 = np.uint64(0x0001000100010001)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_U48 = np.uint64(48)
_DOT48 = np.uint64(46 - 48 + (1 << 64))  # "." - "0", wrapped
_HIGH8 = np.uint64(0x8080808080808080)
_X21 = np.uint64(0x2121212121212121)  # below 33: a blank, a newline or a control byte
_BYTE_NO = np.uint64(0x0001020304050607)  # (1 << 8k) times this: k in the top byte
_U56 = np.uint64(56)


@njit(cache=True, nogil=True)
def newlines(buf, words, s, e):
    """Newlines in ``buf[s:e]``, and whether a byte there is not ASCII; ``words`` is ``buf`` as
    ``uint64`` (or empty). Eight bytes a step (SWAR): ``((y & 0x7f..) + 0x7f..) | y``, ``y =
    word ^ 0x0a..``, has a byte's high bit clear exactly at a newline."""
    c = 0
    hi = np.uint64(0)
    a = (s + 7) // 8
    b = e // 8
    if words.shape[0] < b or a >= b:  # no whole word to read: byte by byte
        a = b = (e + 7) // 8
    for k in range(s, min(a * 8, e)):
        c += buf[k] == _NL
        hi |= np.uint64(buf[k])
    j = a
    while j < b:
        stop = min(j + 255, b)
        acc = np.uint64(0)
        for i in range(j, stop):
            w = words[i]
            hi |= w
            y = w ^ _NL8
            t = ((y & _LOW7) + _LOW7) | y
            acc += ((~t) >> _U7) & _ONE8
        x = (acc & _LO16) + ((acc >> _U8) & _LO16)
        c += np.int64((x * _ONE16) >> _U48)
        j = stop
    for k in range(max(b * 8, s), e):
        c += buf[k] == _NL
        hi |= np.uint64(buf[k])
    return c, (hi & _HIGH8) != 0


@njit(cache=True, nogil=True)
def count_newlines(lo, hi, buf, words, starts, ends, lines, cap, high):  # pragma: no cover - numba
    """Per range ``f``: ``lines[f]``, ``cap[f]`` (less the blank lines at its end: an upper bound
    of its rows) and ``high[f]`` (a byte is not ASCII)."""
    for f in range(lo, hi):
        s = starts[f]
        n, h = newlines(buf, words, s, ends[f])
        lines[f] = n
        high[f] = h
        k = ends[f] - 1  # the last newline
        while n > 0:  # drop trailing lines of blanks only
            j = k - 1
            while j >= s and buf[j] != _NL and _is_space(buf[j]):
                j -= 1
            if j >= s and buf[j] != _NL:
                break
            n -= 1
            k = j
        cap[f] = n


@njit(cache=True, nogil=True)
def split_lines(lo, hi, ranges, row_base, spec, out, counts):  # pragma: no cover - numba
    """Split the lines of ranges ``lo..hi`` (each ending in a newline) into fields, into rows
    from ``row_base[f]`` (``counts[f]`` of them).

    Blank lines and comments (first non-blank ``#``: trec_eval 10) are skipped. Per
    row: file, line number, byte offset, field count, the kept fields' bounds (-1:
    absent), the integer and decimal fields parsed as they are scanned (correctly
    rounded, or NaN for Python's ``float`` to round; ``ibad``/``fbad``: not one).
    ``same_bad[f]``: the first row whose ``same`` field differs from the range's first
    (rows with both parsed fields bad left out). ``new_run``: the row's ``runs`` field
    differs from the row before's (a range's first row, or one without it: true).
    """
    buf, file_starts, file_ends, file_no, lines_before = ranges
    slot_of, int_field, float_field, same_field, runs_field = spec
    file_of, line_no, line_start, n_fields, starts, ends = out[:6]
    ival, ibad, fval, fbad, new_run, same_bad = out[6:]
    n_slot = slot_of.shape[0]
    bp = buf.ctypes.data
    n_buf = buf.shape[0]
    for f in range(lo, hi):
        row = row_base[f]
        pos = file_starts[f]
        line = lines_before[f]
        ref_s = -1  # the range's first value of the ``same`` field
        ref_e = -1
        prev_s = -1  # the ``runs`` field of the row before
        prev_e = -1
        bad = same_bad[f]
        while pos < file_ends[f]:
            line += 1
            c = buf[np.uint64(pos)]
            while c != _NL and _is_space(c):
                pos += 1
                c = buf[np.uint64(pos)]
            if c == _NL or c == _HASH:  # blank line or comment
                pos = _field_end(buf, pos, True) + 1
                continue
            line_start[row] = pos
            nf = 0
            iv, ib, fv, fb = 0, True, 0.0, True
            fresh = True
            while c != _NL:
                if _is_space(c):
                    pos += 1
                    c = buf[np.uint64(pos)]
                    continue
                s = pos
                if nf == int_field:
                    pos, iv, ib = _scan_int(buf, pos)
                elif nf == float_field:
                    pos, fv, fb = _scan_float(buf, pos)
                    if fb:  # not the usual score: parsed in full
                        fv, fb = _parse_float(buf, s, pos)
                else:
                    pos = _word_end(buf, bp, n_buf, pos + 1)
                if nf < n_slot and slot_of[nf] >= 0:
                    starts[slot_of[nf], row] = s
                    ends[slot_of[nf], row] = pos
                if nf == runs_field:
                    fresh = prev_s < 0 or not equal_in(bp, n_buf, prev_s, prev_e, s, pos)
                    prev_s, prev_e = s, pos
                if nf == same_field and bad < 0 and not (ib and fb):
                    # a line whose int and float fields are both words (a header)
                    # is neither the reference nor compared: it has its own message
                    if ref_s < 0:
                        ref_s, ref_e = s, pos
                    elif not equal_in(bp, n_buf, ref_s, ref_e, s, pos):
                        bad = row
                nf += 1
                c = buf[np.uint64(pos)]
            for i in range(nf, n_slot):  # the kept fields this line lacks
                if slot_of[i] >= 0:
                    starts[slot_of[i], row] = -1
                    ends[slot_of[i], row] = -1
            file_of[row] = file_no[f]
            line_no[row] = line
            n_fields[row] = nf
            ival[row] = iv
            ibad[row] = ib
            fval[row] = fv
            fbad[row] = fb
            if nf <= runs_field:  # a line without the field: the next one starts a run
                prev_s = -1
            new_run[row] = fresh
            row += 1
            pos += 1
        same_bad[f] = bad
        counts[f] = row - row_base[f]


@njit(cache=True, nogil=True, inline="always")
def _field_end(buf, pos, line):
    """The next blank from ``pos`` (the newline at the latest); with ``line``, the newline."""
    c = buf[np.uint64(pos)]
    while c != _NL and (line or not _is_space(c)):
        pos += 1
        c = buf[np.uint64(pos)]
    return pos


@njit(cache=True, nogil=True, inline="always")
def _word_end(buf, bp, n, pos):
    """:func:`_field_end` eight bytes a step (``bp``: ``buf``'s address, ``n`` its length): a
    byte below 33 has its high bit set in ``(w - 0x21..) & ~w & 0x80..``, and the lowest one
    set is exact (a borrow only reaches the bytes above)."""
    while pos + 8 <= n:
        w = load_word(bp, pos)
        m = (w - _X21) & ~w & _HIGH8
        if m == np.uint64(0):
            pos += 8
            continue
        pos += np.int64((((m & (~m + _U1)) >> _U7) * _BYTE_NO) >> _U56)
        if _is_space(buf[np.uint64(pos)]):
            return pos
        pos += 1  # a control byte inside the field
    return _field_end(buf, pos, False)


@njit(cache=True, nogil=True)
def _scan_int(buf, pos):  # pragma: no cover - numba
    """The field at ``pos`` as an integer ``[+-]digits`` (at most 18): ``(end, value, bad)``."""
    c = buf[np.uint64(pos)]
    sign = 1 if c == 43 or c == 45 else 0
    k = pos + sign
    v = 0
    d = np.int64(buf[np.uint64(k)]) - 48
    while d >= 0 and d <= 9:
        v = v * 10 + d
        k += 1
        d = np.int64(buf[np.uint64(k)]) - 48
    if not _is_space(buf[np.uint64(k)]):  # not an integer: the field's end
        return _field_end(buf, k, False), 0, True
    n = k - pos - sign
    if n == 0 or n > 18:
        return k, 0, True
    return k, (-v if c == 45 else v), False


@njit(cache=True, nogil=True)
def _scan_float(buf, pos):  # pragma: no cover - numba
    """The field at ``pos`` as a decimal: ``(end, value, bad)``; the usual score (<= 19 digits,
    no exponent) by Clinger's fast path while scanned, any other by :func:`_parse_float`."""
    c = buf[np.uint64(pos)]
    k = pos + (1 if c == 43 or c == 45 else 0)
    m = np.uint64(0)
    nd = 0
    shift = 0
    dot = False
    while True:
        d = np.uint64(buf[np.uint64(k)]) - _U48
        if d < _U10:
            m = m * _U10 + d
            nd += 1
            shift -= 1 if dot else 0
        elif d == _DOT48 and not dot:
            dot = True
        else:
            break
        k += 1
    if 0 < nd <= 19 and m <= _TWO53 and shift >= -22 and _is_space(buf[np.uint64(k)]):
        v = float(m) / _POW10[-shift]
        return k, (-v if c == 45 else v), False
    return _field_end(buf, k, False), 0.0, True


# Decimal text -> float64, bit for bit Python's float(): Clinger's fast path (mantissa
# <= 2**53, |exp10| <= 22: one exact multiply or divide), else Eisel-Lemire (Lemire,
# "Number parsing at a gigabyte per second", Software: Practice and Experience 51(8),
# 2021; Go's strconv port: 19 digits times a 128-bit truncated power of ten, which
# proves the rounding or declines). Declined cases (near-ties, subnormals, 20+ digits
# whose tail decides) are left NaN for Python's float() (fasteval.io.trec).

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_U1 = np.uint64(1)
_U10 = np.uint64(10)
_LOW9 = np.uint64(0x1FF)
_TWO53 = np.uint64(1 << 53)


def _pow10_128() -> np.ndarray:
    """Row ``q + 348``: the low and high words of 10**q as a truncated 128-bit mantissa (Go's
    ``strconv.detailedPowersOfTen``), q = -348..347."""
    out = np.empty((696, 2), np.uint64)
    for i in range(696):
        q = i - 348
        if q >= 0:
            v = 10**q
            b = v.bit_length()
            t = v << (128 - b) if b <= 128 else v >> (b - 128)
        else:
            d = 10**-q
            t = (1 << (d.bit_length() + 127)) // d
        out[i, 0] = t & 0xFFFFFFFFFFFFFFFF
        out[i, 1] = t >> 64
    return out


_POW10_128 = _pow10_128()


@njit(cache=True, nogil=True)
def _mul64(a, b):
    """The 128-bit product of two uint64 as (high word, low word)."""
    a0 = a & _M32
    a1 = a >> _S32
    b0 = b & _M32
    b1 = b >> _S32
    p00 = a0 * b0
    p10 = a1 * b0
    mid = (p00 >> _S32) + (p10 & _M32) + a0 * b1  # < 2**64
    return a1 * b1 + (p10 >> _S32) + (mid >> _S32), a * b


@njit(cache=True, nogil=True)
def _eisel_lemire(m, q):
    """``m * 10**q`` (``0 < m < 2**64``) correctly rounded, or ``ok = False`` when 128 bits
    cannot decide (or the result is subnormal or infinite)."""
    if q < -348 or q > 347:
        return 0.0, False
    clz = 0
    x = m
    for step in (32, 16, 8, 4, 2, 1):
        if x < (_U1 << np.uint64(64 - step)):
            x <<= np.uint64(step)
            clz += step
    man = x
    e2 = ((217706 * q) >> 16) + 64 + 1023 - clz
    row = q + 348
    hi, lo = _mul64(man, _POW10_128[row, 1])
    if (hi & _LOW9) == _LOW9 and lo + man < man:
        yhi, ylo = _mul64(man, _POW10_128[row, 0])
        mlo = lo + yhi
        mhi = hi + _U1 if mlo < lo else hi
        if (mhi & _LOW9) == _LOW9 and mlo + _U1 == np.uint64(0) and ylo + man < man:
            return 0.0, False
        hi = mhi
        lo = mlo
    msb = hi >> np.uint64(63)
    mant = hi >> (msb + np.uint64(9))
    e2 -= 1 - np.int64(msb)
    if lo == np.uint64(0) and (hi & _LOW9) == np.uint64(0) and (mant & np.uint64(3)) == _U1:
        return 0.0, False  # exactly halfway as far as 128 bits can tell
    mant += mant & _U1
    mant >>= _U1
    if (mant >> np.uint64(53)) > np.uint64(0):
        mant >>= _U1
        e2 += 1
    if e2 <= 0 or e2 >= 0x7FF:
        return 0.0, False
    return math.ldexp(float(mant), e2 - 1075), True


@njit(cache=True, nogil=True, inline="always")
def _parse_float(buf, s, e):
    """``buf[s:e]`` (``[+-]digits[.digits][e[+-]digits]``) as a double, correctly rounded;
    ``(nan, True)`` if it is not a decimal, ``(nan, False)`` if the two tiers decline."""
    neg = False
    k = s
    if k < e and (buf[np.uint64(k)] == 45 or buf[np.uint64(k)] == 43):
        neg = buf[np.uint64(k)] == 45
        k += 1
    k, m, shift, trunc, any_digit = _scan_digits(buf, k, e)
    if not any_digit:
        return np.nan, True
    if k < e:
        c = buf[np.uint64(k)]
        if c != 101 and c != 69:
            return np.nan, True
        x, bad = _scan_exponent(buf, k + 1, e)
        if bad:
            return np.nan, True
        shift += x
    if m == np.uint64(0):
        return (-0.0 if neg else 0.0), False
    v, ok = _round_fast(m, shift, trunc)
    if not ok:
        return np.nan, False
    return (-v if neg else v), False


@njit(cache=True, nogil=True, inline="always")
def _scan_digits(buf, k, e):
    """The digits and ``.`` from ``buf[k]``: ``(end, m, shift, trunc, any_digit)``, the value
    ``m * 10**shift`` (19 digits; ``trunc``: a nonzero one dropped) less the exponent."""
    m = np.uint64(0)
    nd = 0  # significant digits kept in m (at most 19)
    shift = 0
    trunc = False
    any_digit = False
    dot = False
    while k < e:
        c = buf[np.uint64(k)]
        if c >= 48 and c <= 57:
            any_digit = True
            if nd == 0 and c == 48:
                if dot:
                    shift -= 1
            elif nd < 19:
                m = m * _U10 + np.uint64(c - 48)
                nd += 1
                if dot:
                    shift -= 1
            else:
                if c != 48:
                    trunc = True
                if not dot:
                    shift += 1
        elif c == 46 and not dot:
            dot = True
        else:
            break
        k += 1
    return k, m, shift, trunc, any_digit


@njit(cache=True, nogil=True, inline="always")
def _scan_exponent(buf, k, e):
    """The exponent ``[+-]digits`` in ``buf[k:e]`` (capped near 100000); ``bad`` if not one."""
    eneg = False
    if k < e and (buf[np.uint64(k)] == 45 or buf[np.uint64(k)] == 43):
        eneg = buf[np.uint64(k)] == 45
        k += 1
    if k >= e:
        return 0, True
    x = 0
    while k < e:
        c = buf[np.uint64(k)]
        if c < 48 or c > 57:
            return 0, True
        if x < 100000:
            x = x * 10 + (c - 48)
        k += 1
    return (-x if eneg else x), False


@njit(cache=True, nogil=True, inline="always")
def _round_fast(m, q, trunc):
    """``m * 10**q`` (``m > 0``; ``trunc``: strictly between ``m`` and ``m + 1``) by the first two
    tiers, or ``ok = False`` where both decline."""
    if not trunc:
        while m > _TWO53 and m % _U10 == np.uint64(0):
            m //= _U10
            q += 1
        if m <= _TWO53 and q >= -22 and q <= 22:
            v = float(m)
            v = v * _POW10[q] if q >= 0 else v / _POW10[-q]
            return v, True
        return _eisel_lemire(m, q)
    # the first 19 digits (m) and one more unit (m + 1) bracket the value
    v, ok = _eisel_lemire(m, q)
    if ok:
        v2, ok2 = _eisel_lemire(m + _U1, q)
        ok = ok2 and v2 == v
    return v, ok
