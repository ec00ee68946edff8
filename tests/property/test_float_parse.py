"""Property tests: every score the run reader parses is bit for bit Python's ``float()``.

The tokenizer parses decimal scores itself (Clinger's fast path, Eisel-Lemire,
and an exact integer fallback for the cases those cannot decide); ``float()``
(David Gay's correctly rounded ``strtod``) is the oracle. Strings are drawn
to hit each tier: short mantissas, 17-40 digit mantissas, trailing and leading
zeros, huge and tiny exponents, subnormals, and decimals within a hair of the
midpoint between two neighbouring doubles (where rounding is decided by
digits far beyond the 19th).
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal, getcontext
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fasteval.io import trec

getcontext().prec = 1200  # exact midpoints of doubles have at most 767 significant digits

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def parse_scores(tmp_path: Path, scores: list[str]) -> list[float]:
    """The scores as the run reader parses them (one run file, one line per score)."""
    p = tmp_path / "run.txt"
    p.write_text("".join(f"1 Q0 d{i} {i + 1} {s} r\n" for i, s in enumerate(scores)))
    return [float(x) for x in trec.parse_run_files([p]).score]


def check(tmp_path: Path, scores: list[str]) -> None:
    got = parse_scores(tmp_path, scores)
    for s, g in zip(scores, got, strict=True):
        assert bits(g) == bits(float(s)), f"{s!r}: parsed {g!r}, float() gives {float(s)!r}"


def finite(s: str) -> bool:
    return math.isfinite(float(s))


digits = st.text("0123456789", min_size=1, max_size=40)


@st.composite
def decimals(draw: st.DrawFn) -> str:
    """Any decimal form: sign, leading/trailing zeros, a dot anywhere, an exponent."""
    d = draw(digits)
    dot = draw(st.integers(-1, len(d)))  # -1: no dot
    s = d if dot < 0 else d[:dot] + "." + d[dot:]
    s = "0" * draw(st.integers(0, 4)) + s + "0" * draw(st.integers(0, 25))
    if draw(st.booleans()):
        e = draw(st.integers(-420, 420))
        s += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+"] if e >= 0 else [""]))
        s += str(e)
    return draw(st.sampled_from(["", "-", "+"])) + s


@st.composite
def near_halfway(draw: st.DrawFn) -> str:
    """The exact midpoint between a double and its successor, nudged or cut short."""
    x = draw(st.floats(min_value=0.0, allow_nan=False, allow_infinity=False))
    y = math.nextafter(x, math.inf)
    assume(math.isfinite(y))
    mid = (Decimal(x) + Decimal(y)) / 2
    how = draw(st.sampled_from(["exact", "cut", "above", "below"]))
    if how == "cut":
        return format(mid, f".{draw(st.integers(15, 800))}E")
    if how in ("above", "below"):
        tiny = Decimal(10) ** (mid.adjusted() - draw(st.integers(17, 80)))
        mid = mid + tiny if how == "above" else mid - tiny
    return format(mid, "E")


@st.composite
def long_mantissas(draw: st.DrawFn) -> str:
    """17-40 significant digits around a random double (what TREC-8 runs hold)."""
    x = draw(st.floats(min_value=0.0, allow_nan=False, allow_infinity=False, exclude_min=True))
    n = draw(st.integers(16, 39))
    s = format(Decimal(x), f".{n}E")
    if draw(st.booleans()):  # positional with trailing zeros, as in input.ok8alx
        s = format(Decimal(s), "f") + "0" * draw(st.integers(0, 20))
        assume(len(s) < 1200)
    return s


subnormals = st.floats(
    min_value=0.0, max_value=2.2250738585072014e-308, allow_nan=False, allow_subnormal=True
).map(lambda x: format(Decimal(x), f".{len(repr(x))}E"))


@SETTINGS
@given(st.lists(decimals(), min_size=1, max_size=40))
def test_random_decimals(tmp_path: Path, scores: list[str]) -> None:
    assume(all(finite(s) for s in scores))  # out-of-range scores are rejected (tested below)
    check(tmp_path, scores)


@SETTINGS
@given(st.lists(near_halfway(), min_size=1, max_size=20))
def test_near_halfway(tmp_path: Path, scores: list[str]) -> None:
    assume(all(finite(s) for s in scores))
    check(tmp_path, scores)


@SETTINGS
@given(st.lists(long_mantissas(), min_size=1, max_size=20))
def test_long_mantissas(tmp_path: Path, scores: list[str]) -> None:
    assume(all(finite(s) for s in scores))
    check(tmp_path, scores)


@SETTINGS
@given(st.lists(subnormals, min_size=1, max_size=20))
def test_subnormals(tmp_path: Path, scores: list[str]) -> None:
    check(tmp_path, scores)


@SETTINGS
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_shortest_repr_round_trips(tmp_path: Path, xs: list[float]) -> None:
    scores = [repr(x) for x in xs]
    got = parse_scores(tmp_path, scores)
    assert [bits(g) for g in got] == [bits(x) for x in xs]
