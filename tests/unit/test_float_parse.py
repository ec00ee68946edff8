"""The run reader's score parser: hard cases by hand, the forms it rejects, and TREC-8.

Every decimal score must parse bit for bit as Python's ``float()`` does; the
property tests in ``tests/property/test_float_parse.py`` draw the rest.
"""

from __future__ import annotations

import gzip
import struct
from decimal import Decimal, getcontext
from pathlib import Path

import numpy as np
import pytest

from fasteval.errors import InputFormatError
from fasteval.io import trec

getcontext().prec = 1200


def parse(tmp_path: Path, scores: list[str]) -> list[float]:
    p = tmp_path / "run.txt"
    p.write_text("".join(f"1 Q0 d{i} {i + 1} {s} r\n" for i, s in enumerate(scores)))
    return [float(x) for x in trec.parse_run_files([p]).score]


HARD = [
    # Clinger's exact path and its edges
    "0", "-0", "-0.0", "+0e5", "0e-99999", "1.5", ".5", "5.", "+.5e+3", "1E05", "1e0005",
    "9007199254740992", "9007199254740993", "1e22", "1e23", "0.1", "-3.25e-2",
    # what TREC-8 holds: 17+ significant digits, trailing zeros, exponents
    "136.90608242222712000000000000000000", "0.00000000000000000000000000000000000",
    "1.2e-05", "-7.5e-06", "14.00000000000000000000000000000000000000000",
    # 20+ digits whose tail decides (Eisel-Lemire's m and m + 1 disagree)
    "9007199254740993.0000000000000000000001", "9007199254740992.9999999999999999999999",
    "123456789012345678901234567890", "0.30000000000000001665334536937734810635447502136230468751",
    # the largest double, the overflow threshold, and just below it
    "1.7976931348623157e308", "1.7976931348623158e308", "179769313486231580793728971405301e276",
    # the smallest normal, subnormals, and the underflow threshold (ties to even: to 0)
    "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
    "4.9406564584124654e-324", "5e-324", "3e-324", "2.4703282292062327e-324",
    "2.4703282292062328e-324",
    "2.47032822920623272088284396434110686182529901307162382212792841250337753640e-324",
    "1e-324", "1e-400", "0.000000000000000000000000000000000000000000001e-300",
    # exponents that need no digits of the mantissa to settle
    "1e-99999", "0.0e99999",
]  # fmt: skip


def test_hard_cases_equal_float(tmp_path: Path) -> None:
    got = parse(tmp_path, HARD)
    for s, g in zip(HARD, got, strict=True):
        assert struct.pack("<d", g) == struct.pack("<d", float(s)), s


def test_a_thousand_digit_score(tmp_path: Path) -> None:
    # beyond 800 significant digits only whether a later digit is nonzero matters
    # the exact midpoint between 0 and the smallest subnormal (751 significant digits)
    half = format(Decimal(float.fromhex("0x0.0000000000001p-1022")) / 2, "E")
    assert len(half) > 750
    tail = ["0" * 200, "0" * 200 + "1"]
    scores = [half.replace("E-324", t + "E-324") for t in tail]
    got = parse(tmp_path, scores)
    assert got == [float(s) for s in scores] == [0.0, 5e-324]


@pytest.mark.parametrize(
    "bad",
    ["inf", "-Infinity", "nan", "NaN", "1e400", "-1e309", "1e", "1e+", "e5", ".", "-", "+-1",
     "--1", "1.5.2", "1.5e3.2", "0x1p3", "1_000", "1,5", "1d5", "1.5f", "١"],
)  # fmt: skip
def test_non_decimal_scores_are_rejected(tmp_path: Path, bad: str) -> None:
    # as before: trec_eval's atof would read a prefix of some of these; fasteval refuses them
    p = tmp_path / "run.txt"
    p.write_text(f"1 Q0 a 1 0.5 r\n1 Q0 b 2 {bad} r\n")
    with pytest.raises(InputFormatError) as e:
        trec.parse_run_files([p])
    assert f"run.txt:2: score is not a finite number: {bad!r}" in str(e.value)


@pytest.mark.realdata
@pytest.mark.slow
def test_every_trec8_score_equals_float(trec8_dir: Path) -> None:
    runs = sorted((trec8_dir / "runs").glob("input.*.gz"))
    assert len(runs) == 129
    got = np.asarray(trec.parse_run_files(runs).score)
    want = []
    for p in runs:
        with gzip.open(p, "rb") as fh:
            tokens = fh.read().split()
        assert len(tokens) % 6 == 0 and not any(t.startswith(b"#") for t in tokens[::6])
        want.extend(map(float, tokens[4::6]))  # every line is qid Q0 docno rank score tag
    assert got.shape[0] == len(want) == 6_284_293
    assert np.array_equal(got.view(np.uint64), np.asarray(want).view(np.uint64))
