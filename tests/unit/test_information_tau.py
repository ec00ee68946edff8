"""Information tau (plain and conditional), pair counts and the correlation dispatch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.analysis.correlation import (
    METHODS,
    information_tau,
    kendall_tau,
    pair_counts,
    rank_correlation,
)
from fasteval.errors import ParameterError
from tests.reference import information as ref


@st.composite
def orderings(draw, k=2, distinct=False):
    n = draw(st.integers(2, 14))
    vals = st.integers(0, 40) if distinct else st.integers(0, 4)
    out = []
    for _ in range(k):
        if distinct:
            out.append(draw(st.lists(vals, min_size=n, max_size=n, unique=True)))
        else:
            out.append(draw(st.lists(vals, min_size=n, max_size=n)))
    return out


def h2(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


@settings(max_examples=150, deadline=None)
@given(orderings(k=2))
def test_pair_counts_brute_force(ab):
    a, b = ab
    n = len(a)
    want = [0, 0, 0, 0, 0]
    for i in range(n):
        for j in range(i + 1, n):
            sa, sb = ref.sign(a[i] - a[j]), ref.sign(b[i] - b[j])
            if sa == 0 and sb == 0:
                want[4] += 1
            elif sa == 0:
                want[2] += 1
            elif sb == 0:
                want[3] += 1
            elif sa == sb:
                want[0] += 1
            else:
                want[1] += 1
    assert list(pair_counts(a, b)) == want


@settings(max_examples=150, deadline=None)
@given(orderings(k=2))
def test_information_tau_matches_reference(ab):
    a, b = ab
    assert information_tau(a, b) == pytest.approx(ref.information_tau(a, b), abs=1e-12)
    assert information_tau(a, b) == pytest.approx(information_tau(b, a), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: orderings(k=k + 2)))
def test_conditional_information_tau_matches_reference(cols):
    a, b, *g = cols
    got = information_tau(a, b, given=g)
    assert got == pytest.approx(ref.information_tau(a, b, g), abs=1e-12)
    assert got >= 0.0


@settings(max_examples=100, deadline=None)
@given(orderings(k=2, distinct=True))
def test_without_ties_information_tau_is_a_function_of_tau(ab):
    a, b = ab
    tau = kendall_tau(a, b, "a")
    assert information_tau(a, b) == pytest.approx(1 - h2((1 + tau) / 2), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(orderings(k=2))
def test_conditioning_on_itself_leaves_nothing(ab):
    a, b = ab
    assert information_tau(a, b, given=[b]) == pytest.approx(0.0, abs=1e-12)
    assert information_tau(a, a, given=[a]) == pytest.approx(0.0, abs=1e-12)


def test_identical_orderings_without_ties_give_one_bit():
    x = np.arange(50.0)
    assert information_tau(x, x) == pytest.approx(1.0)
    assert information_tau(x, -x) == pytest.approx(1.0)  # reversed: fully informative too
    assert rank_correlation(x, -x, "tau_a") == -1.0


def test_per_query_columns():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 5, (12, 4)).astype(float)
    b = rng.integers(0, 5, (12, 4)).astype(float)
    got = information_tau(a, b, per_query=True)
    assert got.shape == (4,)
    for q in range(4):
        assert got[q] == pytest.approx(ref.information_tau(a[:, q], b[:, q]), abs=1e-12)
    with pytest.raises(ParameterError, match="2-D"):
        information_tau(a[:, 0], b[:, 0], per_query=True)


def test_long_orderings_are_fast_enough_to_run():
    rng = np.random.default_rng(11)
    x = rng.normal(size=200_000)
    y = x + rng.normal(size=200_000)
    c, d, ta, tb, tab = pair_counts(x, y)
    assert c + d + ta + tb + tab == 200_000 * 199_999 // 2
    assert 0.0 < information_tau(x, y) < 1.0


def test_dispatch():
    a = [1.0, 2.0, 3.0, 4.0]
    b = [1.0, 3.0, 2.0, 4.0]
    for m in METHODS:
        assert -1.0 <= rank_correlation(a, b, m) <= 1.0
    with pytest.raises(ParameterError, match="unknown correlation method 'kendall'"):
        rank_correlation(a, b, "kendall")
