"""Measure families: what each computes, its parameters, how it aggregates.

One entry per trec_eval measure family. The table drives the parser, the
engine's column plan, the trec-format printer and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from fasteval.kernels import ranking as k

DEFAULT_CUTOFFS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class Family:
    """A measure family (trec_eval's ``TREC_MEAS``).

    Attributes
    ----------
    name
        trec_eval name (``P``, ``ndcg_cut``, ...).
    code
        Kernel family code (``fasteval.kernels.ranking``).
    kind
        ``"single"`` (one value), ``"cutoffs"`` (one value per integer cutoff,
        e.g. ``P_10``), ``"levels"`` (one value per recall level,
        ``iprec_at_recall_0.10``) or ``"list"`` (one value from a parameter
        list, e.g. ``11pt_avg``, ``set_F``).
    defaults
        Default parameters.
    aggregate
        ``"mean"``, ``"sum"``, ``"gm"`` (geometric mean, trec_eval's
        ``log(max(x, 1e-5))``) or ``"count"``.
    per_query
        Whether trec_eval prints per-query values.
    doc
        One line: what it measures, formula, citation.
    """

    name: str
    code: int
    kind: str
    defaults: tuple[float, ...]
    aggregate: str
    per_query: bool
    integer: bool
    doc: str


_FAMILIES = [
    Family(
        "num_q",
        k.NUM_Q,
        "single",
        (),
        "count",
        False,
        True,
        "Number of queries evaluated (with -c: every qrels query).",
    ),
    Family(
        "num_ret",
        k.NUM_RET,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of documents retrieved (after -M).",
    ),
    Family(
        "num_rel",
        k.NUM_REL,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of relevant documents (grade >= level) in the qrels.",
    ),
    Family(
        "num_rel_ret",
        k.NUM_REL_RET,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of relevant documents retrieved.",
    ),
    Family(
        "map",
        k.MAP,
        "single",
        (),
        "mean",
        True,
        False,
        "Average precision: sum over relevant retrieved d of P@rank(d), divided by R "
        "(Buckley & Voorhees 2005).",
    ),
    Family(
        "gm_map",
        k.GM_MAP,
        "single",
        (),
        "gm",
        False,
        False,
        "Geometric mean over queries of AP: exp(mean(log(max(AP, 1e-5)))).",
    ),
    Family(
        "Rprec",
        k.RPREC,
        "single",
        (),
        "mean",
        True,
        False,
        "Precision after R documents (R = number of relevant documents).",
    ),
    Family(
        "bpref",
        k.BPREF,
        "single",
        (),
        "mean",
        True,
        False,
        "Binary preference: 1/R sum over relevant retrieved r of "
        "1 - min(|n ranked above r|, R)/min(N, R), judged non-relevant n only "
        "(Buckley & Voorhees, SIGIR 2004).",
    ),
    Family(
        "recip_rank",
        k.RECIP_RANK,
        "single",
        (),
        "mean",
        True,
        False,
        "Reciprocal rank of the first relevant document (optionally within a cutoff).",
    ),
    Family(
        "iprec_at_recall",
        k.IPREC_AT_RECALL,
        "levels",
        RECALL_LEVELS,
        "mean",
        True,
        False,
        "Interpolated precision at recall level r: max precision at any rank whose "
        "recall >= r (trec_eval 9 cutoff (long)(r*R+0.9), trec_eval 10 lround(r*R)).",
    ),
    Family(
        "P",
        k.P,
        "cutoffs",
        DEFAULT_CUTOFFS,
        "mean",
        True,
        False,
        "Precision at cutoff k: relevant in top k / k (missing ranks count non-relevant).",
    ),
    Family(
        "recall",
        k.RECALL,
        "cutoffs",
        DEFAULT_CUTOFFS,
        "mean",
        True,
        False,
        "Recall at cutoff k: relevant in top k / R.",
    ),
    Family(
        "infAP",
        k.INFAP,
        "single",
        (),
        "mean",
        True,
        False,
        "Inferred AP for incomplete judgments; negative qrels grades mark pooled but "
        "unjudged documents (Yilmaz & Aslam, CIKM 2006).",
    ),
    Family(
        "11pt_avg",
        k.ELEVEN_PT_AVG,
        "list",
        RECALL_LEVELS,
        "mean",
        True,
        False,
        "Mean interpolated precision over the given recall levels (default 0.0..1.0).",
    ),
    Family(
        "ndcg",
        k.NDCG,
        "single",
        (),
        "mean",
        True,
        False,
        "nDCG over the whole ranking: sum g_i/log2(i+1) over the ideal's, gains = grades, "
        "ideal = all judged grades (Jarvelin & Kekalainen, TOIS 2002).",
    ),
    Family(
        "ndcg_cut",
        k.NDCG_CUT,
        "cutoffs",
        DEFAULT_CUTOFFS,
        "mean",
        True,
        False,
        "nDCG at cutoff k: DCG@k / ideal DCG@k, gains = grades.",
    ),
    Family(
        "map_cut",
        k.MAP_CUT,
        "cutoffs",
        DEFAULT_CUTOFFS,
        "mean",
        True,
        False,
        "AP truncated at k: sum of P@rank over relevant docs in the top k, divided by R.",
    ),
    Family(
        "success",
        k.SUCCESS,
        "cutoffs",
        (1.0, 5.0, 10.0),
        "mean",
        True,
        False,
        "1 if a relevant document is in the top k, else 0.",
    ),
    Family(
        "set_P",
        k.SET_P,
        "single",
        (),
        "mean",
        True,
        False,
        "Set precision: relevant retrieved / retrieved.",
    ),
    Family(
        "set_recall",
        k.SET_RECALL,
        "single",
        (),
        "mean",
        True,
        False,
        "Set recall: relevant retrieved / R.",
    ),
    Family(
        "set_F",
        k.SET_F,
        "list",
        (1.0,),
        "mean",
        True,
        False,
        "Set F: (x+1)PR/(xP+R) with trec_eval's parameter x (default 1, F1).",
    ),
    Family(
        "num_nonrel_judged_ret",
        k.NUM_NONREL_JUDGED_RET,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of judged non-relevant documents retrieved.",
    ),
]

FAMILIES: dict[str, Family] = {f.name: f for f in _FAMILIES}

# trec_eval's output order (measures.c te_trec_measures[]).
TREC_ORDER = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
]

# trec_eval's nicknames (measures.c). Families fasteval does not compute yet are
# reported, never dropped silently.
NICKNAMES: dict[str, list[str]] = {
    "official": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ],
    "all_trec": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ],
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}

# ir_measures names -> trec_eval family (cutoff form, no-cutoff form).
IR_MEASURES: dict[str, tuple[str | None, str | None]] = {
    "AP": ("map_cut", "map"),
    "P": ("P", None),
    "R": ("recall", None),
    "RR": ("recip_rank", "recip_rank"),
    "nDCG": ("ndcg_cut", "ndcg"),
    "Rprec": (None, "Rprec"),
    "Bpref": (None, "bpref"),
    "infAP": (None, "infAP"),
    "NumRet": (None, "num_ret"),
    "NumRel": (None, "num_rel"),
    "NumRelRet": (None, "num_rel_ret"),
    "NumQ": (None, "num_q"),
    "Success": ("success", None),
    "SetP": (None, "set_P"),
    "SetR": (None, "set_recall"),
    "SetF": (None, "set_F"),
    "IPrec": ("iprec_at_recall", None),
    "gmAP": (None, "gm_map"),
}
