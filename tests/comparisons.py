"""Every measure fasteval computes, and what its numbers are checked against.

One row per measure family (numbagg's ``COMPARISONS`` idea): the fasteval name,
an example measure string, the slow obviously-correct reference in
``tests/reference`` (where one exists) and the outside oracles its values are
compared with. The table drives the tests and benchmarks:

- ``tests/oracle/_pytrec.py`` takes the families compared with pytrec_eval
  (and, through it, the TREC-8 and Robust 2003 oracle tests and the ad hoc
  property tests) from :func:`families`;
- ``tests/unit/test_comparisons.py`` fails when a family of the measure
  registry has no row, when a row has neither a reference nor an oracle, or
  when a named reference does not exist;
- ``benchmarks/peers.py`` takes the benchmarked measures, in each tool's own
  spelling, from :data:`BENCHMARK`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fasteval.measures.registry import PREFS_ORDER

# oracle name -> what it is (and which tests use it)
ORACLES: dict[str, str] = {
    "pytrec_eval": "pytrec-eval-terrier (trec_eval 9.0.8 in C): TREC-8, Robust 2003, "
    "property tests (tests/oracle/_pytrec.py)",
    "trec_eval_10": "stored trec_eval 10.0 outputs: TREC-8 -q -m all_trec and trec_eval's "
    "own test suite (tests/oracle/test_trec8.py, test_trec_eval_suite.py)",
    "trec_eval_9": "trec_eval 9.0.8's own test suite outputs (test_trec_eval_suite.py)",
    "nist_1999": "the 1999 NIST TREC-8 summaries (test_trec8.py, test_report_1999.py)",
    "pyndeval": "pyndeval (ndeval in C): Web 2009-2014 and property tests",
    "gdeval": "gdeval.pl values transcribed in peer_tests/ir_measures",
    "ir_measures": "ir_measures' own implementation (tests/property/test_beyond_trec_eval.py)",
    "ranx": "ranx's metrics, every row with this oracle under its tools['ranx'] spelling "
    "(tests/property/test_exp_gain_measures.py::test_matches_ranx)",
    "cwl_eval": "cwl_eval through ir_measures' provider, and its values published by ir_measures "
    "(tests/property/test_cwl_measures.py)",
}


@dataclass(frozen=True)
class Comparison:
    """One measure family and how it is checked.

    Attributes
    ----------
    family
        fasteval's family name (trec_eval's where it has one).
    example
        A measure string fasteval evaluates (default parameters).
    naive
        ``"module:function"`` in ``tests.reference`` computing it the slow way, or None.
    oracles
        Keys of :data:`ORACLES` whose numbers fasteval must reproduce.
    evaluator
        Which evaluator computes it: ``ranking`` (ad hoc), ``diversity``, ``ric``,
        ``histogram`` or ``judgment_groups``.
    """

    family: str
    example: str
    naive: str | None
    oracles: tuple[str, ...]
    evaluator: str = "ranking"
    tools: dict[str, str] = field(default_factory=dict)


_TE = ("pytrec_eval", "trec_eval_10", "trec_eval_9")
_NAIVE = "naive:measures"


def _adhoc(
    family: str,
    example: str | None = None,
    naive: str | None = _NAIVE,
    oracles: tuple[str, ...] = _TE,
    **tools: str,
) -> Comparison:
    return Comparison(family, example or family, naive, oracles, "ranking", tools)


COMPARISONS: tuple[Comparison, ...] = (
    # --- trec_eval 9 and 10 --------------------------------------------------------------
    _adhoc("num_q", naive=None),
    _adhoc("num_ret"),
    _adhoc("num_rel"),
    _adhoc("num_rel_ret"),
    _adhoc("map", oracles=(*_TE, "nist_1999"), trec_eval="map", ranx="map", ir_measures="AP"),
    _adhoc("gm_map"),
    _adhoc("Rprec", oracles=(*_TE, "nist_1999")),
    _adhoc("bpref", trec_eval="bpref", ranx="bpref", ir_measures="Bpref"),
    _adhoc("recip_rank", trec_eval="recip_rank", ranx="mrr", ir_measures="RR"),
    _adhoc("iprec_at_recall", "iprec_at_recall_0.10"),
    _adhoc(
        "P",
        "P_10",
        oracles=(*_TE, "nist_1999"),
        trec_eval="P.10",
        ranx="precision@10",
        ir_measures="P@10",
    ),
    _adhoc("recall", "recall_100", trec_eval="recall.100", ranx="recall@100", ir_measures="R@100"),
    _adhoc("infAP"),
    _adhoc("11pt_avg"),
    _adhoc("ndcg", trec_eval="ndcg", ranx="ndcg", ir_measures="nDCG"),
    _adhoc(
        "ndcg_cut", "ndcg_cut_10", trec_eval="ndcg_cut.10", ranx="ndcg@10", ir_measures="nDCG@10"
    ),
    _adhoc("map_cut", "map_cut_10"),
    _adhoc("success", "success_10"),
    _adhoc("set_P"),
    _adhoc("set_recall"),
    _adhoc("set_F"),
    _adhoc("num_nonrel_judged_ret"),
    _adhoc("gm_bpref", naive=None),
    _adhoc("Rprec_mult", "Rprec_mult_0.20", naive="naive:rprec_mult"),
    _adhoc("utility", naive=None),
    _adhoc("binG", naive=None),
    _adhoc("G", naive=None),
    _adhoc("ndcg_rel", naive=None),
    _adhoc("Rndcg", naive=None),
    _adhoc("relative_P", "relative_P_10", naive=None),
    _adhoc("set_relative_P", naive=None),
    _adhoc("set_map", naive=None),
    # --- trec_eval 10 only -----------------------------------------------------------------
    _adhoc("rbp", naive=None, oracles=("trec_eval_10",)),
    _adhoc("rbp_resid", naive=None, oracles=("trec_eval_10",)),
    _adhoc("unj", "unj_10", naive=None, oracles=("trec_eval_10",)),
    # not in trec_eval 10's all_trec: no stored output has them
    _adhoc("dcg", naive="naive:dcg", oracles=()),
    _adhoc("ideal_dcg", naive="naive:ideal_dcg", oracles=()),
    _adhoc("relstring", "relstring", naive="naive:relstring", oracles=("trec_eval_10",)),
    # --- judgment groups (-R qrels_jg) ---------------------------------------------------
    Comparison("map_avgjg", "map_avgjg", None, ("trec_eval_10",), "judgment_groups"),
    Comparison("P_avgjg", "P_avgjg_10", None, ("trec_eval_10",), "judgment_groups"),
    Comparison(
        "Rprec_mult_avgjg", "Rprec_mult_avgjg_0.20", None, ("trec_eval_10",), "judgment_groups"
    ),
    # --- preference judgments (-R prefs / qrels_prefs): byte-for-byte against the quicktest
    # files (tests/oracle/test_trec_eval_suite.py), the naive reference in the property test
    *(
        Comparison(
            f,
            f,
            None if "Rnonrel" in f else "prefs_naive:measures",
            ("trec_eval_10", "trec_eval_9"),
            "preferences",
        )
        for f in PREFS_ORDER
    ),
    # --- beyond trec_eval ----------------------------------------------------------------
    _adhoc("err", "ERR@20", naive="naive:err_at", oracles=("gdeval",)),
    _adhoc("nerr", "nERR@20", naive="naive:nerr_at", oracles=()),
    _adhoc("ncg", "NCG@20", naive="naive:ncg_at", oracles=()),
    _adhoc("judged", "Judged@10", naive="naive:judged_at", oracles=("ir_measures",)),
    _adhoc("jk_dcg", "jk_dcg", naive="naive:jk_dcg", oracles=()),
    _adhoc("jk_ndcg", "jk_ndcg", naive="naive:jk_ndcg", oracles=()),
    # ir_measures' NumQ (tests/unit/test_measure_spellings.py)
    _adhoc("numq", "NumQ", naive=None, oracles=("ir_measures",)),
    # gdeval's nDCG@k and ranx's dcg_burges / hits (tests/property/test_exp_gain_measures.py)
    _adhoc(
        "ndcg_exp",
        "nDCG(dcg='exp-log2')@20",
        "gain_naive:exp_ndcg_at",
        ("gdeval", "ranx"),
        ranx="ndcg_burges@20",
    ),
    _adhoc("dcg_exp", "dcg_burges@20", "gain_naive:exp_dcg_at", ("ranx",), ranx="dcg_burges@20"),
    _adhoc("hits", "hits@10", "gain_naive:hits_at", ("ranx",), ranx="hits@10"),
    _adhoc("rel_ret", "NumRelRet@10", "gain_naive:hits_at", ()),
    # ranx's f1@k, against ranx alone (tests/property/test_exp_gain_measures.py::test_matches_ranx)
    _adhoc("f1", "f1@10", None, ("ranx",), ranx="f1@10"),
    # tests/property/test_ir_measures_extra.py (Compat also against Clarke's published values)
    _adhoc("compat", "Compat", "ir_measures_naive:compat", ("ir_measures",)),
    _adhoc("accuracy", "Accuracy", "ir_measures_naive:accuracy", ("ir_measures",)),
    *(
        _adhoc(f, ex, "cwl_naive:measure", ("cwl_eval",))
        for f, ex in (
            ("inst", "INST(T=1, max_rel=3)"),
            ("insq", "INSQ(T=1, max_rel=3)"),
            ("bpm", "BPM(T=1, max_rel=3)@10"),
            ("sdcg", "SDCG(max_rel=3)@10"),
            ("nerr8", "NERR8(max_rel=3)@10"),
            ("nerr9", "NERR9(max_rel=3)@10"),
            ("nerr10", "NERR10(p=0.9, max_rel=3)"),
            ("nerr11", "NERR11(T=1, max_rel=3)"),
            ("rbp_bin", "RBP(p=0.8, rel=1)"),
        )
    ),
    # --- diversity (ndeval) --------------------------------------------------------------
    *(
        Comparison(
            f, f"{f}@20" if cut else f, "ndeval_naive:topic_measures", ("pyndeval",), "diversity"
        )
        for f, cut in (
            ("ERR_IA", True),
            ("nERR_IA", True),
            ("alpha_DCG", True),
            ("alpha_nDCG", True),
            ("NRBP", False),
            ("nNRBP", False),
            ("MAP_IA", False),
            ("P_IA", True),
            ("strec", True),
        )
    ),
    # --- information and histogram measures ----------------------------------------------
    Comparison("RIC", "RIC", "information:joint_ric_query", (), "ric"),
    Comparison("HSA", "HSA", "hsa_naive:analyse", (), "histogram"),
    Comparison("DO", "DO", "hsa_naive:analyse", (), "histogram"),
)

BY_FAMILY: dict[str, Comparison] = {c.family: c for c in COMPARISONS}

# the per-query measures every benchmark times, in each tool's own spelling (same order)
_BENCH = ("map", "P", "ndcg_cut", "recall", "recip_rank", "bpref", "ndcg")
BENCHMARK: dict[str, list[str]] = {
    "trec": [BY_FAMILY[f].example for f in _BENCH],
    **{
        tool: [BY_FAMILY[f].tools[tool] for f in _BENCH]
        for tool in ("trec_eval", "ranx", "ir_measures")
    },
}


def families(oracle: str) -> list[str]:
    """The families whose values are compared with ``oracle``, sorted."""
    if oracle not in ORACLES:
        msg = f"unknown oracle {oracle!r}; known: {', '.join(ORACLES)}"
        raise KeyError(msg)
    return sorted(c.family for c in COMPARISONS if oracle in c.oracles)
