"""Content-based measures (SPEC 9; Hui, PIKM'14): names, parameters and definitions.

They compare the language model of a run's top ``k`` documents with that of the
documents judged relevant, over a collection (:mod:`fasteval.io.collection`); the
values come from :mod:`fasteval.analysis.content`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fasteval.errors import MeasureError
from fasteval.measures import names_of

DEFAULT_LAMBDA = 0.1

FAMILIES = ("LMJS", "LMKL", "LMJS_IA")
_NAME = re.compile(
    r"^\s*(?P<fam>LMJS_IA|LMJS|LMKL)"
    r"(?:\(\s*(?:lambda|lam|λ)\s*=\s*(?P<lam>[0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*\))?"
    r"(?:@(?P<k>\d+))?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ContentMeasure:
    """A content-based measure: family, depth ``k`` and (LMKL) smoothing weight ``lam``.

    Families
    --------
    ``LMJS@k``
        ``1 - JS(theta_R, theta_k)``, JS the Jensen-Shannon divergence in bits,
        ``JS(P, Q) = KL(P||M)/2 + KL(Q||M)/2`` with ``M = (P + Q)/2``; in [0, 1].
    ``LMKL@k``
        ``exp(-KL(theta_R || (1 - lam) theta_k + lam theta_C))``, natural log.
    ``LMJS_IA@k``
        Mean over the query's subtopics with a relevant document of
        ``1 - JS(theta_{R_qs}, theta_k)`` (diversity qrels).

    ``theta_R(w) = sum_{d in R} c(w, d) / sum_{d in R} |d|`` is the LM of the
    relevant documents' concatenation; ``theta_k(w) = sum_i omega_i c(w, d_i)
    / |d_i| / sum_i omega_i`` with ``omega_i = 1 / log2(i + 1)`` over the first
    ``k`` ranked documents found in the collection; ``theta_C`` is the
    collection LM.

    References
    ----------
    Hui, K. (2014). Towards robust & reusable evaluation for novelty &
    diversity. PIKM '14 (CIKM PhD workshop), ACM.
    """

    family: str  # "LMJS", "LMKL" or "LMJS_IA"
    k: int
    lam: float = DEFAULT_LAMBDA

    @property
    def name(self) -> str:
        """Canonical name (its identity): ``LMJS@20``, ``LMKL(lambda=0.2)@20``..."""
        if self.family == "LMKL" and self.lam != DEFAULT_LAMBDA:
            return f"LMKL(lambda={self.lam:g})@{self.k}"
        return f"{self.family}@{self.k}"

    @property
    def intent_aware(self) -> bool:
        """Whether the measure needs subtopics (diversity qrels)."""
        return self.family == "LMJS_IA"


def parse_content_measure(name: str) -> ContentMeasure | None:
    """Parse a content measure name; ``None`` when ``name`` is not one.

    Accepts ``LMJS@k``, ``LMKL@k``, ``LMKL(lambda=x)@k`` and ``LMJS_IA@k``
    (case-insensitive; ``@k`` defaults to 20).

    Raises
    ------
    fasteval.errors.MeasureError
        For a content family with a bad parameter (``k < 1``, ``lambda``
        outside ``[0, 1)``, ``lambda`` on a JS measure).
    """
    m = _NAME.match(name)
    if m is None:
        return None
    fam = m.group("fam").upper()
    k = int(m.group("k")) if m.group("k") else 20
    if k < 1:
        msg = f"measure {name!r}: the depth k must be >= 1"
        raise MeasureError(msg)
    lam = DEFAULT_LAMBDA
    if m.group("lam") is not None:
        if fam != "LMKL":
            msg = f"measure {name!r}: only LMKL takes a lambda\n  hint: LMKL(lambda=0.2)@{k}"
            raise MeasureError(msg)
        lam = float(m.group("lam"))
        if not 0.0 <= lam < 1.0:
            msg = f"measure {name!r}: lambda must be in [0, 1), got {lam:g}"
            raise MeasureError(msg)
    return ContentMeasure(fam, k, lam)


def parse_content_measures(names: str | list[str] | tuple[str, ...]) -> list[ContentMeasure]:
    """Parse a list (or comma-separated string) of content measure names; unknown names raise."""
    out: list[ContentMeasure] = []
    for p in names_of(names):
        cm = parse_content_measure(p)
        if cm is None:
            msg = (
                f"unknown content measure {p!r}\n"
                "  hint: LMJS@k, LMKL@k, LMKL(lambda=0.2)@k or LMJS_IA@k"
            )
            raise MeasureError(msg)
        if cm not in out:
            out.append(cm)
    return out


def is_content_measure(name: str) -> bool:
    """Whether ``name`` names a content measure (parameters not checked)."""
    return _NAME.match(name) is not None
