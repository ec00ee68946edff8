"""Correlation between two orderings of the same objects (e.g. systems ranked by two measures).

Every function takes two equal-length 1-D sequences of scores, ``a`` and
``b`` (higher = ranked higher), and returns a float. Pairs are unordered
pairs of distinct objects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fasteval.errors import ParameterError

ArrayLike = Sequence[float] | np.ndarray


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        msg = f"need two 1-D sequences of equal length, got shapes {x.shape} and {y.shape}"
        raise ParameterError(msg)
    if x.shape[0] < 2:
        msg = f"need at least 2 objects to correlate, got {x.shape[0]}"
        raise ParameterError(msg)
    if np.isnan(x).any() or np.isnan(y).any():
        msg = "scores contain NaN; drop or fill those objects first"
        raise ParameterError(msg)
    return x, y


def _signs(x: np.ndarray) -> np.ndarray:
    """Upper-triangle sign(x_i - x_j) for i < j, flattened."""
    i, j = np.triu_indices(x.shape[0], k=1)
    return np.sign(x[i] - x[j])


def kendall_tau(a: ArrayLike, b: ArrayLike, variant: str = "b") -> float:
    r"""Kendall's rank correlation between two orderings.

    With :math:`c` concordant and :math:`d` discordant pairs, :math:`t_a`
    pairs tied only in ``a``, :math:`t_b` tied only in ``b`` (pairs tied in
    both count in neither):

    - ``variant="a"`` (as Golbus & Aslam use it): :math:`(c - d) / (c + d)`,
      ties left out;
    - ``variant="b"``: :math:`(c - d) / \sqrt{(c + d + t_a)(c + d + t_b)}`.

    Returns NaN when the denominator is 0 (e.g. all objects tied).

    References
    ----------
    Kendall, M. G. (1938). A new measure of rank correlation. Biometrika 30.
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33.
    """
    x, y = _pair(a, b)
    sx = _signs(x)
    sy = _signs(y)
    prod = sx * sy
    c = float((prod > 0).sum())
    d = float((prod < 0).sum())
    if variant == "a":
        den = c + d
    elif variant == "b":
        ta = float(((sx == 0) & (sy != 0)).sum())
        tb = float(((sy == 0) & (sx != 0)).sum())
        den = float(np.sqrt((c + d + ta) * (c + d + tb)))
    else:
        msg = f"variant must be 'a' or 'b', got {variant!r}"
        raise ParameterError(msg)
    return (c - d) / den if den > 0 else float("nan")


def pearson(a: ArrayLike, b: ArrayLike) -> float:
    r"""Pearson's linear correlation :math:`\mathrm{cov}(a,b) / (\sigma_a \sigma_b)`.

    NaN when either sequence is constant.
    """
    x, y = _pair(a, b)
    dx = x - x.mean()
    dy = y - y.mean()
    den = float(np.sqrt((dx * dx).sum() * (dy * dy).sum()))
    return float((dx * dy).sum()) / den if den > 0 else float("nan")


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x`` ascending, ties sharing their average rank."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.concatenate([[True], xs[1:] != xs[:-1]])
    first = np.flatnonzero(starts)
    last = np.concatenate([first[1:], [xs.shape[0]]]) - 1
    avg = (first + last) / 2.0 + 1.0
    ranks = np.empty(x.shape[0], np.float64)
    ranks[order] = np.repeat(avg, last - first + 1)
    return ranks


def spearman(a: ArrayLike, b: ArrayLike) -> float:
    r"""Spearman's :math:`\rho`: Pearson's r of the average ranks (ties share a rank).

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things.
    """
    x, y = _pair(a, b)
    return pearson(average_ranks(x), average_ranks(y))


def tau_ap(a: ArrayLike, b: ArrayLike) -> float:
    r"""AP rank correlation of ordering ``b`` against the reference ordering ``a``.

    Objects are listed by ``b`` (descending); for each position
    :math:`i = 2..n`, :math:`C(i)` counts the objects above it that ``a``
    also puts above it:

    .. math:: \tau_{AP} = \frac{2}{n-1} \sum_{i=2}^{n} \frac{C(i)}{i-1} - 1

    Errors near the top weigh more. Not symmetric. Ties: objects tied in
    ``b`` are listed in the reference order of ``a`` (the tie is resolved in
    ``b``'s favour), and a pair tied in ``a`` counts as half correct.

    References
    ----------
    Yilmaz, E., Aslam, J. A., & Robertson, S. (2008). A new rank correlation
    coefficient for information retrieval. SIGIR '08.
    """
    x, y = _pair(a, b)
    n = x.shape[0]
    order = np.lexsort((-x, -y))  # by b descending, ties by a descending
    xa = x[order]
    total = 0.0
    for i in range(1, n):
        above = xa[:i]
        correct = (above > xa[i]).sum() + 0.5 * (above == xa[i]).sum()
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0
