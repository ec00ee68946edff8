"""Correlation between two orderings of the same objects (e.g. systems ranked by two measures).

Every function takes two equal-length 1-D sequences of scores, ``a`` and
``b`` (higher = ranked higher), and returns a float. Pairs are unordered
pairs of distinct objects.

Pearson's r, Spearman's rho and Kendall's tau stay numpy / numba rather than
scipy's ``pearsonr``, ``spearmanr`` and ``kendalltau`` (the tests check them
against those), for measured reasons:

* the studies call them once per variant of the qrels (thousands of times), and
  numpy's r and rho cost a fraction of scipy's per call (figures:
  benchmarks/RESULTS.md, "Figures moved out of the code");
* ``kendalltau`` costs about what :func:`kendall_tau` costs but divides by two
  square roots, so identical rankings give
  0.9999999999999998 instead of 1 (a study at rate 1.0 must report tau = 1);
  here the one square root of a product of integers is exact there;
* tau-a as Golbus & Aslam use it and information tau need the pair counts of
  :func:`pair_counts` anyway (scipy has neither).

On 5,000 random pairs with ties, r, rho and tau-b equal scipy's within 4.5e-16,
2.3e-16 and 2.3e-16.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fasteval.errors import ParameterError
from fasteval.kernels.pairs import concordance

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


def kendall_tau(a: ArrayLike, b: ArrayLike, variant: str = "b") -> float:
    r"""Kendall's rank correlation between two orderings.

    With :math:`c` concordant and :math:`d` discordant pairs, :math:`t_a`
    pairs tied only in ``a``, :math:`t_b` tied only in ``b`` (pairs tied in
    both count in neither):

    - ``variant="a"`` (as Golbus & Aslam use it): :math:`(c - d) / (c + d)`,
      ties left out;
    - ``variant="b"``: :math:`(c - d) / \sqrt{(c + d + t_a)(c + d + t_b)}`.

    Returns NaN when the denominator is 0 (e.g. all objects tied).
    O(n log n) (:func:`pair_counts`).

    References
    ----------
    Kendall, M. G. (1938). A new measure of rank correlation. Biometrika 30.
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33.
    """
    c, d, ta, tb, _ = pair_counts(a, b)
    if variant == "a":
        den = float(c + d)
    elif variant == "b":
        den = float(np.sqrt(float(c + d + ta) * float(c + d + tb)))
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
        total += float(correct) / i
    return float(2.0 * total / (n - 1) - 1.0)


# --- pair counts in O(n log n), information tau (Golbus & Aslam), dispatch ---------------


def _dense(x: np.ndarray) -> tuple[np.ndarray, int]:
    u, inv = np.unique(x, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), int(u.shape[0])


def _tied_pairs(*codes: np.ndarray) -> int:
    """Unordered pairs of objects equal in every one of ``codes``."""
    key = np.stack(codes, axis=1) if len(codes) > 1 else codes[0][:, None]
    _, counts = np.unique(key, axis=0, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def pair_counts(a: ArrayLike, b: ArrayLike) -> tuple[int, int, int, int, int]:
    """Unordered pairs of objects by how two orderings order them, in O(n log n).

    Returns ``(concordant, discordant, tied_in_a_only, tied_in_b_only,
    tied_in_both)``; they sum to :math:`n(n-1)/2`. Concordant and discordant
    pairs come from one sweep with a Fenwick tree (Knight's algorithm).
    """

    x, y = _pair(a, b)
    xr, _ = _dense(x)
    yr, ny = _dense(y)
    order = np.lexsort((yr, xr))
    c, d = concordance(np.ascontiguousarray(xr[order]), np.ascontiguousarray(yr[order]), ny)
    t_ab = _tied_pairs(xr, yr)
    t_a = _tied_pairs(xr) - t_ab
    t_b = _tied_pairs(yr) - t_ab
    return int(c), int(d), t_a, t_b, t_ab


def _mi(table: np.ndarray) -> float:
    """Mutual information in bits of a 2-D table of counts."""
    n = table.sum()
    if n <= 0:
        return float("nan")
    p = table / n
    pr = p.sum(axis=1, keepdims=True)
    pc = p.sum(axis=0, keepdims=True)
    nz = p > 0
    return float((p[nz] * np.log2(p[nz] / (pr @ pc)[nz])).sum())


def _entropy(counts: np.ndarray) -> float:
    n = counts.sum()
    p = counts[counts > 0] / n
    return float(-(p * np.log2(p)).sum())


def _sign_codes(cols: list[np.ndarray], chunk: int = 2_000_000) -> dict[int, int]:
    """Counts of the joint sign vector over ordered pairs of distinct objects.

    Digit ``t`` of a code (base 3) is 0 for a tie in ``cols[t]``, 1 when the
    first object is above, 2 when below. O(n^2 k) time, memory bounded by
    ``chunk`` pairs at a time.
    """
    n = cols[0].shape[0]
    counts: dict[int, int] = {}
    rows_per = max(1, chunk // max(n, 1))
    pw = 3 ** np.arange(len(cols), dtype=np.int64)
    for lo in range(0, n, rows_per):
        i = np.arange(lo, min(n, lo + rows_per))
        ii = np.repeat(i, n)
        jj = np.tile(np.arange(n), i.shape[0])
        keep = ii != jj
        ii, jj = ii[keep], jj[keep]
        code = np.zeros(ii.shape[0], np.int64)
        for t, c in enumerate(cols):
            s = np.sign(c[ii] - c[jj]).astype(np.int64)
            code += np.where(s > 0, 1, np.where(s < 0, 2, 0)) * pw[t]
        u, k = np.unique(code, return_counts=True)
        for key, v in zip(u.tolist(), k.tolist(), strict=True):
            counts[key] = counts.get(key, 0) + v
    return counts


def information_tau(
    a: ArrayLike,
    b: ArrayLike,
    given: Sequence[ArrayLike] = (),
    per_query: bool = False,
) -> float | np.ndarray:
    r"""Information tau: mutual information between the pairwise orders of two orderings.

    Over ordered pairs :math:`(i, j)` of distinct objects,
    :math:`X_R(i, j) = +1` if :math:`R` ranks :math:`i` strictly above
    :math:`j`, -1 strictly below, 0 tied; :math:`\tau_I(R, S) = I(X_R; X_S)`
    in bits. Without ties it equals :math:`1 - H_2((1 + \tau) / 2)`.
    With ``given`` orderings :math:`T_1..T_k` it is the conditional
    :math:`I(X_R; X_S | X_{T_1}, ..., X_{T_k})`.

    Parameters
    ----------
    a, b
        Scores of the same objects (higher = ranked higher). With
        ``per_query``, 2-D arrays ``(objects, queries)``: one value per column.
    given
        Orderings to condition on (same shape as ``a``).

    Returns
    -------
    float or numpy.ndarray
        Bits; NaN when there are fewer than 2 objects in a column.

    Notes
    -----
    Unconditional: O(n log n) from :func:`pair_counts`. Conditional: O(n^2 k)
    over pairs, in bounded memory.

    References
    ----------
    Golbus, P. B., & Aslam, J. A. (2013). A mutual information-based framework
    for the analysis of information retrieval systems. SIGIR '13.
    """
    if per_query:
        x = np.asarray(a, np.float64)
        y = np.asarray(b, np.float64)
        gs = [np.asarray(g, np.float64) for g in given]
        if x.ndim != 2 or y.shape != x.shape or any(g.shape != x.shape for g in gs):
            msg = (
                f"per_query needs 2-D arrays (objects, queries) of one shape, got {x.shape}, "
                f"{y.shape}, {[g.shape for g in gs]}"
            )
            raise ParameterError(msg)
        return np.array(
            [information_tau(x[:, q], y[:, q], [g[:, q] for g in gs]) for q in range(x.shape[1])],
            dtype=np.float64,
        )
    x, y = _pair(a, b)
    if not given:
        c, d, ta, tb, tab = pair_counts(x, y)
        # ordered pairs: each unordered pair and its reverse (all signs flipped)
        t = np.array(
            [[c, tb, d], [ta, 2 * tab, ta], [d, tb, c]], dtype=np.float64
        )  # rows X_a = +, 0, -; columns X_b = +, 0, -
        return _mi(t)
    gs = [_pair(x, g)[1] for g in given]
    counts = _sign_codes([x, y, *gs])
    keys = np.array(list(counts), dtype=np.int64)
    w = np.array(list(counts.values()), dtype=np.float64)
    xa = keys % 3
    yb = (keys // 3) % 3
    z = keys // 9

    def h(*parts: np.ndarray) -> float:
        _, inv = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
        return _entropy(np.bincount(inv.reshape(-1), weights=w))

    return max(0.0, h(xa, z) + h(yb, z) - h(xa, yb, z) - h(z))


METHODS = ("tau_a", "tau_b", "spearman", "pearson", "tau_ap", "information_tau")


def rank_correlation(a: ArrayLike, b: ArrayLike, method: str = "tau_b") -> float:
    """Correlation of two orderings of the same objects by ``method``.

    ``method`` is one of ``tau_a``, ``tau_b`` (Kendall), ``spearman``,
    ``pearson``, ``tau_ap`` (Yilmaz et al.; ``a`` is the reference) or
    ``information_tau`` (Golbus & Aslam, bits).
    """
    if method == "tau_a":
        return kendall_tau(a, b, "a")
    if method == "tau_b":
        return kendall_tau(a, b, "b")
    if method == "spearman":
        return spearman(a, b)
    if method == "pearson":
        return pearson(a, b)
    if method == "tau_ap":
        return tau_ap(a, b)
    if method == "information_tau":
        return float(information_tau(a, b))
    msg = f"unknown correlation method {method!r}; choose one of {', '.join(METHODS)}"
    raise ParameterError(msg)
