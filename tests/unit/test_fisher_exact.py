"""Fisher's randomisation test against exact enumeration of all 2^n sign flips (n <= 14).

The exact p-value is ``#{s in {-1, 1}^n : |sum s_i z_i| >= |sum z_i|} / 2^n``,
counted in integers (the differences are multiples of 1/k, as P@k values are).
Discrete measures tie often: many flips give exactly the observed statistic, and
a float comparison without tolerance drops some of them (the permuted sums are
rounded differently from the observed one). Our kernel counts a flip when
``|sum s z| >= |sum z| - 1e-9 sum |z|`` and so equals the exact count; the
no-tolerance comparison of differences of means (ranx's rule) falls short.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fasteval.analysis import statistics
from fasteval.kernels import bootstrap as kb


def all_flips(n: int) -> np.ndarray:
    return np.array(list(itertools.product([-1.0, 1.0], repeat=n)))


def exact_p(num: list[int]) -> float:
    """Exact two-sided p of the integer differences ``num`` (all sign flips)."""
    obs = abs(sum(num))
    hits = sum(
        abs(sum(s * v for s, v in zip(signs, num, strict=True))) >= obs
        for signs in itertools.product([-1, 1], repeat=len(num))
    )
    return hits / 2 ** len(num)


def kernel_p(z: np.ndarray, signs: np.ndarray) -> float:
    n = z.shape[0]
    X = np.vstack([z, np.zeros(n)])
    t, asl, p = np.empty(1), np.empty(1), np.empty(1)
    kb.paired_tests(
        0,
        1,
        X,
        np.array([0]),
        np.array([1]),
        np.zeros((0, n), np.int64),
        signs,
        statistics.RAND_TOL,
        t,
        asl,
        p,
    )
    return float(p[0])


def no_tolerance_p(x: np.ndarray, y: np.ndarray, signs: np.ndarray) -> float:
    """ranx's rule: |mean(a) - mean(b)| >= |mean(x) - mean(y)| in floats, swapped per query."""
    obs = abs(x.mean() - y.mean())
    hits = 0
    for s in signs:
        a = np.where(s > 0, x, y)
        b = np.where(s > 0, y, x)
        hits += abs(a.mean() - b.mean()) >= obs
    return hits / signs.shape[0]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.integers(2, 12),
    st.sampled_from([3, 5, 10, 20]),
    st.data(),
)
def test_kernel_on_all_flips_equals_exact_count(n, k, data):
    # two systems' P@k-like values: multiples of 1/k in [0, 1]
    x = np.array(data.draw(st.lists(st.integers(0, k), min_size=n, max_size=n))) / k
    y = np.array(data.draw(st.lists(st.integers(0, k), min_size=n, max_size=n))) / k
    num = np.rint((x - y) * k).astype(int).tolist()
    assert kernel_p(x - y, all_flips(n)) == exact_p(num)


def test_float_comparison_without_tolerance_drops_ties():
    """A P@5 example where ranx's float rule undercounts the tied flips."""
    x = np.array([0.4, 1.0, 0.6, 0.0, 0.8, 0.8, 1.0, 0.2, 0.0, 1.0, 0.0, 0.6])
    y = np.array([0.0, 0.2, 0.4, 0.4, 0.4, 0.0, 0.0, 0.0, 0.0, 0.8, 0.6, 0.6])
    signs = all_flips(x.shape[0])
    exact = exact_p(np.rint((x - y) * 5).astype(int).tolist())
    assert kernel_p(x - y, signs) == exact
    # exact 126/1024; the float rule loses 2 of the exactly tied flips: 124/1024
    assert exact == 126 / 1024
    assert no_tolerance_p(x, y, signs) == 124 / 1024


def test_monte_carlo_p_is_within_sampling_error_of_the_exact_p():
    x = np.array([0.6, 0.2, 0.4, 0.8, 0.2, 0.0, 1.0, 0.4, 0.6, 0.2, 0.4, 0.8, 0.6, 0.4])
    y = np.array([0.2, 0.4, 0.4, 0.2, 0.6, 0.2, 0.6, 0.0, 0.2, 0.6, 0.4, 0.4, 0.2, 0.6])
    exact = exact_p(np.rint((x - y) * 5).astype(int).tolist())
    B = 99_999
    p = statistics.p_value(x - y, "randomization", B=B, seed=11)
    se = math.sqrt(exact * (1 - exact) / B)
    assert abs(p - exact) < 5 * se + 1 / B, (p, exact)
