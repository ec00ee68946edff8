"""A measure family (the registry's entries), and the parameter lists they share."""

from __future__ import annotations

from dataclasses import dataclass

from fasteval.kernels.families import code

DEFAULT_CUTOFFS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@dataclass(frozen=True, kw_only=True)
class Family:
    """A measure family (trec_eval's ``TREC_MEAS``), written with keywords.

    Attributes
    ----------
    name
        trec_eval name (``P``, ``ndcg_cut``, ...).
    doc
        One line: what it measures, formula, and at the end in parentheses its citation.
    kind
        ``"single"`` (one value), ``"cutoffs"`` (one per integer cutoff, ``P_10``),
        ``"levels"`` (one per recall level, ``iprec_at_recall_0.10``), ``"list"`` (one
        from a parameter list, ``set_F``) or ``"gains"`` (one from ``name=value``
        pairs: grade gains ``1=3,2=9``, rbp's ``p=0.95``).
    defaults
        Default parameters.
    aggregate
        ``"mean"``, ``"sum"``, ``"gm"`` (geometric mean, trec_eval's
        ``log(max(x, 1e-5))``), ``"count"``, or ``"defined"``: a mean over the queries
        where the kernel wrote no NaN (the others get no row).
    per_query
        Whether trec_eval prints per-query values.
    integer
        Whether its values are counts (printed without decimals); always, for a
        ``"sum"`` or ``"count"`` aggregate.
    kernel
        The family whose per-query values it takes from the ranking kernel
        (:func:`fasteval.kernels.ranking.evaluate_groups`): ``""`` its own,
        another's name (``gm_map`` is ``map``'s values, aggregated otherwise),
        or ``None``: not computed by that kernel (relstring, preferences).
    ranx
        ranx's name for it (``f1`` for ``f1@10``), read by the parser, or ``None``.
    ir_measures
        ir_measures' name for it, read by the parser: ``"AP"`` (without a cutoff),
        ``"AP@k"`` (with one), ``"RR[@k]"`` (either), or ``None``.
    cwl
        For a C/W/L measure of ir_measures (params ``(T or p, min_rel, max_rel, k)``):
        the name of its first parameter (``"T"``, ``"p"``, ``""`` for none).
    text
        A string-valued, per-query-only measure (``relstring``), in the ``text`` column.
    """

    name: str
    doc: str
    kind: str = "single"
    defaults: tuple[float, ...] = ()
    aggregate: str = "mean"
    per_query: bool = True
    integer: bool = False
    kernel: str | None = ""
    ranx: str | None = None
    ir_measures: str | None = None
    cwl: str | None = None
    text: bool = False

    def __post_init__(self) -> None:
        if self.aggregate in ("sum", "count"):
            object.__setattr__(self, "integer", True)

    @property
    def code(self) -> int:
        """The kernel's code for its values (:func:`fasteval.kernels.families.code`; -1: none)."""
        return -1 if self.kernel is None else code(self.kernel or self.name)
