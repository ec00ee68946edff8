"""The registry of fusion methods and score normalisations: one definition each, with its source.

Every method is a :class:`FusionMethod`: how a run values each document it
retrieved (its *source*: the normalised score, a function of the rank, or a
table learnt from training qrels), what a run that missed the document
gives it, and how the values of a document's runs combine. Notation, per
query: ``s_r(d)`` the normalised score of ``d`` in run ``r``, ``j_r(d)`` its
0-based position (score descending, then doc id descending), ``n_r`` the
length of run ``r``, ``m`` the number of candidates (documents any run
retrieved), ``c(d)`` the number of runs giving ``d`` a value and ``w_r`` the
run weights (1 unless given). Sums over runs are taken in run order, as ranx
takes them, so fused scores equal ranx's to the last bit where ranx's input
order is well defined.

Names are ranx's (``sum``, ``mnz``, ``w_bordafuse``, ...) or fasteval's
(``combsum``, ``borda``, ...); :func:`method_name` maps either to the
canonical name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fasteval.errors import ParameterError
from fasteval.kernels import fusion as kf

FOX_SHAW = (
    "Fox, E. A., & Shaw, J. A. (1993). Combination of multiple searches. TREC-2, NIST SP 500-215."
)
LEE = "Lee, J. H. (1997). Analyses of multiple evidence combination. SIGIR '97."
MOURAO = (
    "Mourão, A., Martins, F., & Magalhães, J. (2015). Multimodal medical information "
    "retrieval with unsupervised rank fusion. Computerized Medical Imaging and Graphics 39."
)
ASLAM_MONTAGUE = "Aslam, J. A., & Montague, M. (2001). Models for metasearch. SIGIR '01."
WU_CRESTANI = "Wu, S., & Crestani, F. (2002). Data fusion with estimated weights. CIKM '02."
LILLIS_2010 = (
    "Lillis, D., Zhang, L., Toolan, F., Collier, R. W., Leonard, D., & Dunnion, J. (2010). "
    "Estimating probabilities for effective data fusion. SIGIR '10."
)


@dataclass(frozen=True)
class FusionMethod:
    """One fusion method: its definition, parameters and how the kernel computes it.

    Attributes
    ----------
    name
        Canonical name.
    combiner, source
        Kernel codes (:mod:`fasteval.kernels.fusion`): how values combine,
        and where a run's value for a retrieved document comes from.
    definition
        The formula, in the module's notation.
    citation
        Where it was proposed.
    params
        Scalar parameters and their defaults (``None``: required).
    weighted
        Takes per-run ``weights``.
    trained
        The learnt table it needs (``probs``, ``log_odds``, ``map_scores``),
        or ``None``.
    miss
        The value of a run that did not retrieve the document (NaN: none).
    reads_scores
        Uses the normalised scores (otherwise only the ranks).
    aliases
        Other accepted names (ranx's among them).
    """

    name: str
    combiner: int
    source: int
    definition: str
    citation: str
    params: dict[str, float | None] = field(default_factory=dict)
    weighted: bool = False
    trained: str | None = None
    miss: float = float("nan")
    reads_scores: bool = False
    upper_bound: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def rank_based(self) -> bool:
        """Orders by pairwise votes or relevance rather than a fused score."""
        return kf.CONDORCET <= self.combiner <= kf.MAJORITARIAN


_M = FusionMethod
REGISTRY: dict[str, FusionMethod] = {
    m.name: m
    for m in (
        _M(
            "combsum",
            kf.COMBSUM,
            kf.SRC_SCORE,
            "S(d) = sum_r w_r s_r(d) (a run missing d adds 0); ranx's sum, and wsum with weights",
            FOX_SHAW,
            weighted=True,
            reads_scores=True,
            aliases=("sum", "comb_sum", "wsum"),
        ),
        _M(
            "combmnz",
            kf.COMBMNZ,
            kf.SRC_SCORE,
            "S(d) * c(d)",
            FOX_SHAW,
            weighted=True,
            reads_scores=True,
            aliases=("mnz", "comb_mnz"),
        ),
        _M(
            "combanz",
            kf.COMBANZ,
            kf.SRC_SCORE,
            "S(d) / c(d)",
            FOX_SHAW,
            weighted=True,
            reads_scores=True,
            aliases=("anz", "comb_anz"),
        ),
        _M(
            "combmax",
            kf.COMBMAX,
            kf.SRC_SCORE,
            "max_r s_r(d), a run missing d counting -1e9 (ranx's sentinel)",
            FOX_SHAW,
            miss=-1e9,
            reads_scores=True,
            aliases=("max", "comb_max"),
        ),
        _M(
            "combmin",
            kf.COMBMIN,
            kf.SRC_SCORE,
            "min_r s_r(d), a run missing d counting 1e9 (ranx's sentinel)",
            FOX_SHAW,
            miss=1e9,
            reads_scores=True,
            aliases=("min", "comb_min"),
        ),
        _M(
            "combmed",
            kf.COMBMED,
            kf.SRC_SCORE,
            "median of s_r(d) over the runs retrieving d",
            FOX_SHAW,
            reads_scores=True,
            aliases=("med", "comb_med"),
        ),
        _M(
            "combgmnz",
            kf.COMBGMNZ,
            kf.SRC_SCORE,
            "S(d) * c(d) ** gamma",
            LEE,
            params={"gamma": None},
            reads_scores=True,
            aliases=("gmnz", "comb_gmnz"),
        ),
        _M(
            "mixed",
            kf.MIXED,
            kf.SRC_SCORE,
            "(sum_r w_r s_r(d)) * sqrt(c(d)) over the runs retrieving d",
            WU_CRESTANI,
            weighted=True,
            reads_scores=True,
        ),
        _M(
            "wmnz",
            kf.WMNZ,
            kf.SRC_SCORE,
            "(sum_r s_r(d)) * (sum_r w_r) over the runs retrieving d",
            WU_CRESTANI,
            weighted=True,
            reads_scores=True,
        ),
        _M(
            "rrf",
            kf.COMBSUM,
            kf.SRC_RRF,
            "sum_r w_r / (k + j_r(d) + 1) over the runs retrieving d",
            "Cormack, G. V., Clarke, C. L. A., & Buettcher, S. (2009). Reciprocal rank fusion "
            "outperforms Condorcet and individual rank learning methods. SIGIR '09.",
            params={"k": 60.0},
            weighted=True,
            aliases=("wrrf", "weightedrrf", "reciprocalrank"),
        ),
        _M(
            "isr",
            kf.COMBMNZ,
            kf.SRC_ISR,
            "c(d) * sum_r 1 / (j_r(d) + 1)^2 (CombMNZ of inverse square ranks)",
            MOURAO,
        ),
        _M(
            "log_isr",
            kf.LOGMNZ,
            kf.SRC_ISR,
            "log(c(d)) * sum_r 1 / (j_r(d) + 1)^2",
            MOURAO,
        ),
        _M(
            "logn_isr",
            kf.LOGNMNZ,
            kf.SRC_ISR,
            "log(c(d) + sigma) * sum_r 1 / (j_r(d) + 1)^2",
            MOURAO,
            params={"sigma": 0.01},
        ),
        _M(
            "rbc",
            kf.COMBSUM,
            kf.SRC_RBC,
            "sum_r w_r (1 - phi) phi^j_r(d) (rank-biased centroid)",
            "Bailey, P., Moffat, A., Scholer, F., & Thomas, P. (2017). Retrieval consistency "
            "in the presence of query variations. SIGIR '17.",
            params={"phi": None},
            weighted=True,
        ),
        _M(
            "borda",
            kf.COMBSUM,
            kf.SRC_BORDA,
            "sum_r w_r b_r(d), b_r(d) = m - j_r(d), or (m - n_r + 1) / 2 if r missed d",
            ASLAM_MONTAGUE,
            weighted=True,
            aliases=("bordafuse", "w_bordafuse", "wbordafuse", "weighted_bordafuse"),
        ),
        _M(
            "condorcet",
            kf.CONDORCET,
            kf.SRC_SCORE,
            "merge sort with 'a above b iff the runs ranking a above b outweigh those ranking "
            "b above a' (a run retrieving neither abstains), from the Borda order",
            "Montague, M., & Aslam, J. A. (2002). Condorcet fusion for improved retrieval. "
            "CIKM '02.",
            weighted=True,
            aliases=("condorcetfuse", "w_condorcet", "wcondorcet", "weighted_condorcet"),
        ),
        _M(
            "probfuse",
            kf.COMBSUM,
            kf.SRC_TABLE,
            "sum_r P_r(k) / (k + 1), k = j_r(d) // ceil(n_r / n_segments) the segment of d, "
            "P_r(k) the mean over training queries of the fraction of relevant documents "
            "in r's k-th segment",
            "Lillis, D., Toolan, F., Collier, R., & Dunnion, J. (2006). ProbFuse: a "
            "probabilistic approach to data fusion. SIGIR '06.",
            params={"n_segments": None},
            trained="probs",
        ),
        _M(
            "segfuse",
            kf.COMBSUM,
            kf.SRC_TABLE,
            "sum_r P_r(k) (s_r(d) + 1), segments k of sizes 10 * 2^(k-1) - 5 (ends 5, 15, 35, "
            "..., 5115), P_r(k) the mean over training queries of (relevant in segment) / "
            "(segment size); 0 beyond 5115",
            "Shokouhi, M. (2007). Segmentation of search engine results for effective "
            "data-fusion. ECIR 2007.",
            trained="probs",
            reads_scores=True,
        ),
        _M(
            "slidefuse",
            kf.COMBSUM,
            kf.SRC_TABLE,
            "sum_r mean of p_r(i) for i in [max(j - w, 0), min(j + w, n_r - 1)], p_r(i) the "
            "fraction of training queries (long enough) with a relevant document at "
            "position i (0 beyond the training lists)",
            "Lillis, D., Toolan, F., Collier, R., & Dunnion, J. (2008). Extending "
            "probabilistic data fusion using sliding windows. ECIR 2008.",
            params={"w": None},
            trained="probs",
        ),
        _M(
            "posfuse",
            kf.COMBSUM,
            kf.SRC_TABLE,
            "sum_r p_r(j_r(d)), p_r as for slidefuse (0 beyond the training lists)",
            LILLIS_2010,
            trained="probs",
        ),
        _M(
            "mapfuse",
            kf.COMBSUM,
            kf.SRC_TABLE,
            "sum_r MAP_r / (j_r(d) + 1), MAP_r run r's MAP on the training qrels",
            LILLIS_2010,
            trained="map_scores",
        ),
        _M(
            "bayesfuse",
            kf.COMBSUM,
            kf.SRC_TABLE,
            "sum_r log(p / (1 - p)) of the precision p of r's training segment of j_r(d) "
            "(segments end at 5, 10, 15, 20, 30, 100, 200, 500, 1000; 0 precision counts "
            "0.001, 1 counts 0.999); a run missing d (or d beyond 1000) adds log(0.001/0.999)",
            ASLAM_MONTAGUE,
            trained="log_odds",
            miss=math.log(0.001 / 0.999),
        ),
        _M(
            "naive",
            kf.NAIVE,
            kf.SRC_SCORE,
            "upper bound: relevant documents any run retrieved first (higher grades first), "
            "then the Borda order",
            "Montague, M. (2002). Metasearch: data fusion for document retrieval. PhD thesis, "
            "Dartmouth College.",
            upper_bound=True,
        ),
        _M(
            "pareto",
            kf.PARETO,
            kf.SRC_SCORE,
            "upper bound: a linear extension of unanimity lifting relevant documents as far "
            "as unanimity allows",
            "Montague, M. (2002). Metasearch: data fusion for document retrieval. PhD thesis.",
            upper_bound=True,
        ),
        _M(
            "majoritarian",
            kf.MAJORITARIAN,
            kf.SRC_SCORE,
            "upper bound: merge sort with 'a above b if at least half the runs rank it above', "
            "otherwise the higher grade class",
            "Montague, M. (2002). Metasearch: data fusion for document retrieval. PhD thesis.",
            upper_bound=True,
        ),
    )
}

METHODS = {name: m.combiner for name, m in REGISTRY.items()}
UPPER_BOUNDS = tuple(n for n, m in REGISTRY.items() if m.upper_bound)
SUPERVISED = tuple(n for n, m in REGISTRY.items() if m.trained)


def _key(name: str) -> str:
    return str(name).lower().replace("_", "").replace("-", "")


_LOOKUP = {_key(a): m.name for m in REGISTRY.values() for a in (m.name, *m.aliases)}

NORMS = {
    "min-max": kf.NORM_MINMAX,
    "min-max-inverted": kf.NORM_MINMAX_INV,
    "max": kf.NORM_MAX,
    "zscore": kf.NORM_ZSCORE,
    "sum": kf.NORM_SUM,
    "rank": kf.NORM_RANK,
    "borda": kf.NORM_BORDA,
    "none": kf.NORM_NONE,
}
NORM_DEFINITIONS = {
    "min-max": "(s - min) / max(max - min, 1e-9)",
    "min-max-inverted": "(max - s) / max(max - min, 1e-9) (the order reversed)",
    "max": "s / max(max, 1e-9)",
    "zscore": "(s - mean) / max(std, 1e-9), population std (ranx's zmuv)",
    "sum": "(s - min) / max(sum(s) - n min, 1e-9)",
    "rank": "1 - j / n",
    "borda": "over the m candidates of the fusion: 1 - j / m, and 0.5 - (n - 1) / (2 m) for a "
    "candidate the run missed (so every run gives every candidate a value)",
    "none": "the raw score",
}
_NORM_ALIASES = {
    "minmax": "min-max",
    "min_max": "min-max",
    "minmaxinverted": "min-max-inverted",
    "min_max_inverted": "min-max-inverted",
    "zmuv": "zscore",
    "z-score": "zscore",
}


def method_name(method: str) -> str:
    """The canonical name of a fusion method (ranx's names accepted)."""
    m = _LOOKUP.get(_key(method))
    if m is None:
        msg = f"unknown fusion method {method!r}; choose one of {', '.join(REGISTRY)}"
        raise ParameterError(msg)
    return m


def method_spec(method: str) -> FusionMethod:
    """The registry entry of ``method`` (any accepted name)."""
    return REGISTRY[method_name(method)]


def norm_name(norm: str | None) -> str:
    """The canonical name of a score normalisation (``None`` means ``none``)."""
    n = "none" if norm is None else str(norm).lower()
    n = _NORM_ALIASES.get(n, n)
    if n not in NORMS:
        msg = f"unknown normalisation {norm!r}; choose one of {', '.join(NORMS)}"
        raise ParameterError(msg)
    return n


def check_norm(spec: FusionMethod, norm: str) -> None:
    """Refuse a normalisation that would reorder the lists of a rank-reading method.

    Methods that read ranks use the order of the input scores; min-max-inverted
    reverses it and Borda gives every run every candidate, so ranx's result for
    those pairs depends on the iteration order of its hash sets and dicts.
    """
    reorders = norm in ("min-max-inverted", "borda")
    reads_ranks = spec.rank_based or spec.source != kf.SRC_SCORE
    if reorders and not spec.reads_scores and not spec.upper_bound and reads_ranks:
        msg = (
            f"the {norm} normalisation reorders or completes the runs, and {spec.name} "
            f"reads ranks only; use it with a score method (combsum, combmnz, ...)"
        )
        raise ParameterError(msg)
    if spec.name == "segfuse" and reorders:
        msg = f"segfuse reads ranks and scores; the {norm} normalisation reorders the runs"
        raise ParameterError(msg)


def describe() -> list[dict[str, object]]:
    """One row per method: name, definition, parameters, citation (for docs and ``--help``)."""
    return [
        {
            "method": m.name,
            "aliases": ", ".join(m.aliases),
            "definition": m.definition,
            "parameters": ", ".join(
                f"{k}={'required' if v is None else v}" for k, v in m.params.items()
            )
            + (", weights" if m.weighted else "")
            + (f", {m.trained} (trained)" if m.trained else ""),
            "citation": m.citation,
        }
        for m in REGISTRY.values()
    ]
