"""The C/W/L measures (INST, INSQ, BPM, SDCG, NERR8-11, binary RBP), the slow obvious way.

C/W/L (Moffat et al.; Azzopardi, Thomas & Moffat, SIGIR 2019): a user at rank i
continues with probability c_i; the weight of rank i is
``W_i = prod_{j<i} c_j / sum_m prod_{j<m} c_j`` and the measure is
``sum_i W_i g_i``, over cwl_eval's 1000 ranks (zero gain past the ranking).
"""

from __future__ import annotations

import math

DEPTH = 1000


def gains(grades: list[int | None], lo: float, hi: float) -> list[float]:
    """Grades (None: not in the qrels) clipped to [lo, hi], scaled to [0, 1], padded with 0."""
    out = [0.0 if g is None else (min(max(g, 0, lo), hi) - lo) / (hi - lo) for g in grades]
    return (out + [0.0] * DEPTH)[:DEPTH]


def expected_utility(g: list[float], c: list[float]) -> float:
    weights = [math.prod(c[:i]) for i in range(len(g))]
    return sum(w * x for w, x in zip(weights, g, strict=True)) / sum(weights)


def measure(name: str, grades: list[int | None], a: float, lo: float, hi: float, k: int) -> float:
    """``name`` in inst, insq, bpm, sdcg, nerr8..11, rbp_bin (``lo`` = rel for rbp_bin)."""
    if name == "rbp_bin":
        g = [0.0 if x is None else float(max(x, 0) >= lo) for x in grades]
        g = (g + [0.0] * DEPTH)[:DEPTH]
    else:
        g = gains(grades, lo, hi)
    c = []
    for i in range(DEPTH):
        rank, seen = i + 1, sum(g[: i + 1])
        if name == "rbp_bin":
            c.append(a)
        elif name == "inst":
            t_i = a - seen
            c.append(((rank + a + t_i - 1) / (rank + a + t_i)) ** 2)
        elif name == "insq":
            c.append(((rank + 2 * a - 1) / (rank + 2 * a)) ** 2)
        elif name == "bpm":
            c.append(1.0 if seen < a and rank < k else 0.0)
        elif name == "sdcg":
            c.append(math.log(rank + 1, 2) / math.log(rank + 2, 2) if rank < k else 0.0)
        elif name == "nerr8":
            c.append(1 - g[i] if rank < k else 0.0)
        elif name == "nerr9":
            c.append(rank / (rank + 1) * (1 - g[i]) if rank < k else 0.0)
        elif name == "nerr10":
            c.append(a * (1 - g[i]))
        elif name == "nerr11":
            c.append(((rank + 2 * a - 1) / (rank + 2 * a)) ** 2 * (1 - g[i]))
    return expected_utility(g, c)
