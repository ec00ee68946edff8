"""System-ranking correlations against scipy and hand-checked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fasteval.analysis.correlation import kendall_tau, pearson, spearman, tau_ap
from fasteval.errors import ParameterError

scores = st.lists(st.integers(0, 6), min_size=3, max_size=30)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_agree_with_scipy(data):
    a = data.draw(scores)
    b = data.draw(st.lists(st.integers(0, 6), min_size=len(a), max_size=len(a)))
    x, y = np.array(a, float), np.array(b, float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert math.isnan(pearson(x, y))
        return
    assert kendall_tau(x, y, "b") == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)


def test_tau_a_leaves_ties_out():
    # pairs: (0,1) concordant, (0,2) tied in b, (1,2) discordant
    assert kendall_tau([3, 2, 1], [3, 1, 3], "a") == 0.0
    assert kendall_tau([1, 2, 3], [1, 2, 3], "a") == 1.0


def test_tau_ap_hand_checked():
    ref = [4, 3, 2, 1]
    assert tau_ap(ref, ref) == 1.0
    assert tau_ap(ref, [1, 2, 3, 4]) == -1.0
    # b lists d1, d2, d4, d3 (swap at the bottom): C = 1, 2, 2 -> 2/3 * (1 + 1 + 2/3) - 1
    assert tau_ap(ref, [4, 3, 1, 2]) == pytest.approx(2 / 3 * (1 + 1 + 2 / 3) - 1)
    # the same swap at the top costs more
    assert tau_ap(ref, [3, 4, 2, 1]) < tau_ap(ref, [4, 3, 1, 2])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=2, max_size=20, unique=True))
def test_tau_ap_without_ties_is_tau_when_n_is_2_and_bounded(a):
    b = list(reversed(a))
    v = tau_ap(a, b)
    assert -1.0 - 1e-12 <= v <= 1.0 + 1e-12
    if len(a) == 2:
        assert v == pytest.approx(kendall_tau(a, b, "a"))


def test_bad_shapes_are_named():
    with pytest.raises(ParameterError, match="equal length"):
        kendall_tau([1, 2], [1, 2, 3])
    with pytest.raises(ParameterError, match="variant"):
        kendall_tau([1, 2], [1, 2], "c")


def test_identical_rankings_correlate_exactly_one():
    # scipy's kendalltau divides by two square roots and gives 0.9999999999999998
    # here; a study at rate 1.0 must report tau = 1 (see the module docstring)
    a = np.random.default_rng(1).random(13)
    assert kendall_tau(a, a, "b") == 1.0
    assert kendall_tau(a, a, "a") == 1.0
    assert spearman(a, a) == 1.0
