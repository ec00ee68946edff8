"""Metasearch: fuse runs with any of ranx's methods, tune them on qrels, and the upper bounds.

The package: :mod:`.methods` (the registry: one definition and citation per
method and normalisation, ranx's names accepted), :mod:`.inputs` (runs read
and encoded once), :mod:`.core` (fused runs, :func:`fuse`, :func:`fuse_groups`),
:mod:`.supervised` (ProbFuse, SegFuse, SlideFuse, PosFuse, MAPFuse, BayesFuse
tables learnt from training qrels), :mod:`.optimize` (:func:`optimize_fusion`
and :func:`cross_validate_fusion`: a whole grid fused and scored as one batch)
and :mod:`.study` (the upper-bound study). The original methods, in detail
(SPEC section 8). Per query, over the runs of a *fusion group*:

* **CombSUM** (Fox & Shaw, TREC-2 1993): ``S(d) = sum_r s_r(d)`` of normalised
  scores (a run that did not retrieve ``d`` adds 0). **CombMNZ**:
  ``S(d) * c(d)`` with ``c(d)`` the number of runs retrieving ``d``;
  **CombANZ**: ``S(d) / c(d)``. Normalisations (per run and query, as ranx
  defines them): ``min-max`` (default), ``zscore``, ``sum``, ``rank``, ``none``.
* **RRF** (Cormack, Clarke & Buettcher, SIGIR 2009): ``S(d) = sum_r w_r /
  (k + rank_r(d))``, ``k = 60``, over the runs retrieving ``d``.
  **BordaFuse** (Aslam & Montague, SIGIR 2001) as ranx scores it: with ``m``
  candidates, a run's ``i``-th document (from 0) gets ``m - i`` points and
  each candidate it misses ``(m - n_r + 1) / 2``. Both, and CombSUM (ranx's
  ``wsum``), take per-run weights ``w_r`` (default 1).
* **CondorcetFuse** (Montague & Aslam, CIKM 2002): documents sorted with the
  comparator "more runs rank ``a`` above ``b`` than ``b`` above ``a``"; a
  retrieved document is above an unretrieved one, a run retrieving neither
  abstains. Deterministic rule: a bottom-up stable merge sort starting from
  the Borda order (Borda count descending, then doc id descending), so a tied
  vote keeps the Borda order.
* Upper bounds (Montague 2002), which read the qrels (relevant = grade
  ``>= rel_level``; the *grade class* of a relevant document is its grade,
  of every other document -1):

  - **Naive**: every relevant document retrieved by any run above all others
    (higher grades first), then the Borda order.
  - **Pareto**: ``a`` above ``b`` whenever ``a`` Pareto-dominates ``b`` (no
    run ranks ``a`` below ``b``, one ranks it above), otherwise by relevance:
    documents are sorted by the best grade class among themselves and the
    relevant documents they dominate, then Borda count. This is a linear
    extension of unanimity (Borda is strictly larger for a dominating
    document), so every unanimous ordering is respected, and relevant
    documents rise as far as unanimity allows.
  - **Majoritarian**: the merge sort above with the comparator "``a`` above
    ``b`` if at least half of the runs rank it above (and more than rank
    ``b`` above ``a``), otherwise the higher grade class".

Every order ends ties with the larger doc id first (trec_eval's tie rule).
Fused scores: the fused value for CombSUM/MNZ/ANZ, ``m - j`` for the ``j``-th
of ``m`` candidates for rank-based methods. Input rankings are ordered by
float64 score descending, then doc id descending. Each fused run keeps its
first ``depth`` documents. ``fasteval.evaluate(qrels, fused, compat=10)``
scores exactly the fused order (``compat=9`` rounds scores to float32 first,
which can reorder near-ties of CombSUM-like scores).

Documents are identified across runs once: doc ids are dictionary-encoded
(Arrow) and numbered per query in byte-wise order; nothing is re-read or
re-encoded per fusion group (:func:`prepare_fusion`, :func:`fuse_groups`).
"""

from fasteval.analysis.fusion.core import (
    FusedRuns,
    Group,
    fuse,
    fuse_groups,
    input_runs,
    kernel_fuse,
    random_groups,
)
from fasteval.analysis.fusion.inputs import FusionInput, prepare_fusion
from fasteval.analysis.fusion.methods import (
    METHODS,
    NORM_DEFINITIONS,
    NORMS,
    REGISTRY,
    SUPERVISED,
    UPPER_BOUNDS,
    FusionMethod,
    check_norm,
    describe,
    method_name,
    method_spec,
    norm_name,
)
from fasteval.analysis.fusion.optimize import cross_validate_fusion, fusion_grid, optimize_fusion
from fasteval.analysis.fusion.study import (
    RIC_COLUMN,
    STUDY_METHODS,
    upper_bound_study,
    upper_bound_summary,
)
from fasteval.analysis.fusion.supervised import train as train_fusion

__all__ = [
    "METHODS",
    "NORMS",
    "NORM_DEFINITIONS",
    "REGISTRY",
    "RIC_COLUMN",
    "STUDY_METHODS",
    "SUPERVISED",
    "UPPER_BOUNDS",
    "FusedRuns",
    "FusionInput",
    "FusionMethod",
    "Group",
    "check_norm",
    "cross_validate_fusion",
    "describe",
    "fuse",
    "fuse_groups",
    "fusion_grid",
    "input_runs",
    "kernel_fuse",
    "method_name",
    "method_spec",
    "norm_name",
    "optimize_fusion",
    "prepare_fusion",
    "random_groups",
    "train_fusion",
    "upper_bound_study",
    "upper_bound_summary",
]
