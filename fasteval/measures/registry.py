"""Measure families (what each computes, its parameters, how it aggregates) and
trec_eval's nicknames.

One entry per family, in the output order: trec_eval's own (``all_trec``, then over
preferences and judgment groups, then trec_eval 10's), then fasteval's (a new family
goes at the end). The parser, the engine, the printers and the tests read the list.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fasteval.measures.family import DEFAULT_CUTOFFS, R_MULTIPLES, RECALL_LEVELS, Family


def _prefs(**entry: Any) -> Family:
    """A family over preference judgments: computed by :mod:`fasteval.engine.prefs`."""
    return Family(kernel=None, **entry)


def _cwl(
    *,
    name: str,
    definition: str,
    citation: str,
    first: str = "T",
    cut: bool = False,
    defaults: tuple[float, ...] = (1.0, 0.0, 1.0, 0.0),
) -> Family:
    """A C/W/L family of ir_measures, named there in capitals (``@k``: with ``cut``)."""
    gains = "gains (clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel) over 1000 ranks"
    doc = f"{definition}. Params: T or p, min_rel, max_rel, k; {gains} ({citation})."
    irm = name.upper() + "@k" * cut
    return Family(name=name, kind="list", defaults=defaults, doc=doc, ir_measures=irm, cwl=first)


_ENTRIES = [
    Family(
        name="num_q",
        aggregate="count",
        per_query=False,
        doc="Number of queries evaluated (with -c: every qrels query).",
    ),
    Family(
        name="num_ret",
        ir_measures="NumRet",
        aggregate="sum",
        doc="Number of documents retrieved (after -M).",
    ),
    Family(
        name="num_rel",
        ir_measures="NumRel",
        aggregate="sum",
        doc="Number of relevant documents (grade >= level) in the qrels.",
    ),
    Family(
        name="num_rel_ret",
        ir_measures="NumRelRet",
        aggregate="sum",
        doc="Number of relevant documents retrieved.",
    ),
    Family(
        name="map",
        ir_measures="AP",
        doc=(
            "Average precision: sum over relevant retrieved d of P@rank(d), divided by R (Buckley &"
            " Voorhees 2005)."
        ),
    ),
    Family(
        name="gm_map",
        ir_measures="gmAP",
        aggregate="gm",
        per_query=False,
        kernel="map",
        doc="Geometric mean over queries of AP: exp(mean(log(max(AP, 1e-5)))).",
    ),
    Family(
        name="Rprec",
        ir_measures="Rprec",
        doc="Precision after R documents (R = number of relevant documents).",
    ),
    Family(
        name="bpref",
        ir_measures="Bpref",
        doc=(
            "Binary preference: 1/R sum over relevant retrieved r of 1 - min(|n ranked above r|, "
            "R)/min(N, R), judged non-relevant n only (Buckley & Voorhees, SIGIR 2004)."
        ),
    ),
    Family(
        name="recip_rank",
        ir_measures="RR[@k]",
        doc="Reciprocal rank of the first relevant document (optionally within a cutoff).",
    ),
    Family(
        name="iprec_at_recall",
        ir_measures="IPrec@k",
        kind="levels",
        defaults=RECALL_LEVELS,
        doc=(
            "Interpolated precision at recall level r: max precision at any rank whose recall >= r "
            "(trec_eval 9 cutoff (long)(r*R+0.9), trec_eval 10 lround(r*R))."
        ),
    ),
    Family(
        name="P",
        ir_measures="P@k",
        kind="cutoffs",
        defaults=DEFAULT_CUTOFFS,
        doc="Precision at cutoff k: relevant in top k / k (missing ranks count non-relevant).",
    ),
    Family(
        name="relstring",
        kind="list",
        defaults=(10.0,),
        aggregate="none",
        kernel=None,
        text=True,
        doc=(
            "The relevance values of the first N (default 10) retrieved documents as a string: "
            "'0'-'9' a grade, '>' above 9, '-' not in the qrels, '.' pooled but unjudged, '<' "
            "another negative grade (trec_eval m_relstring.c; per query only)."
        ),
    ),
    Family(
        name="recall",
        ir_measures="R@k",
        kind="cutoffs",
        defaults=DEFAULT_CUTOFFS,
        doc="Recall at cutoff k: relevant in top k / R.",
    ),
    Family(
        name="infAP",
        ir_measures="infAP",
        doc=(
            "Inferred AP for incomplete judgments; negative qrels grades mark pooled but unjudged "
            "documents (Yilmaz & Aslam, CIKM 2006)."
        ),
    ),
    Family(
        name="gm_bpref",
        aggregate="gm",
        per_query=False,
        kernel="bpref",
        doc="Geometric mean over queries of bpref: exp(mean(log(max(bpref, 1e-5)))).",
    ),
    Family(
        name="Rprec_mult",
        kind="levels",
        defaults=R_MULTIPLES,
        doc=(
            "Precision after x*R documents, cutoff (long)(x*R + 0.9): precision- vs recall-oriented"
            " behaviour at multiples of R."
        ),
    ),
    Family(
        name="utility",
        kind="list",
        defaults=(1.0, -1.0, 0.0, 0.0),
        doc=(
            "Set utility p1*a + p2*b + p3*c + p4*d over the contingency table (a relevant "
            "retrieved, b non-relevant retrieved, c relevant missed, d the rest; d needs -N)."
        ),
    ),
    Family(
        name="11pt_avg",
        kind="list",
        defaults=RECALL_LEVELS,
        doc="Mean interpolated precision over the given recall levels (default 0.0..1.0).",
    ),
    Family(
        name="binG",
        doc=(
            "Binary G: 1/R sum over relevant retrieved of 1/log2(2 + non-relevant ranked above) "
            "(trec_eval, after Kekalainen's generalised precision)."
        ),
    ),
    Family(
        name="G",
        kind="gains",
        doc=(
            "G: gain-weighted precision with cost discount sum g_i/log2(2 + cost_i - gain_i), over "
            "the ideal's total gain (trec_eval m_G.c)."
        ),
    ),
    Family(
        name="dcg",
        kind="gains",
        doc=(
            "DCG over the whole ranking: sum g_i/log2(i+1), gains = grades or as given (Jarvelin & "
            "Kekalainen, TOIS 2002)."
        ),
    ),
    Family(name="ideal_dcg", kind="gains", doc="DCG of the ideal ranking of all judged documents."),
    Family(
        name="ndcg",
        ir_measures="nDCG",
        kind="gains",
        doc=(
            "nDCG over the whole ranking: sum g_i/log2(i+1) over the ideal's, gains = grades, ideal"
            " = all judged grades (Jarvelin & Kekalainen, TOIS 2002)."
        ),
    ),
    Family(
        name="ndcg_rel",
        kind="gains",
        doc=(
            "nDCG averaged over the ranks of the relevant documents (missed ones at the final "
            "nDCG), like AP averages precision."
        ),
    ),
    Family(
        name="Rndcg",
        kind="gains",
        doc=(
            "nDCG averaged at the ranks where the ideal gain changes (R-based nDCG, trec_eval "
            "m_Rndcg.c)."
        ),
    ),
    Family(
        name="ndcg_cut",
        ir_measures="nDCG@k",
        kind="cutoffs",
        defaults=DEFAULT_CUTOFFS,
        doc="nDCG at cutoff k: DCG@k / ideal DCG@k, gains = grades.",
    ),
    Family(
        name="map_cut",
        ir_measures="AP@k",
        kind="cutoffs",
        defaults=DEFAULT_CUTOFFS,
        doc="AP truncated at k: sum of P@rank over relevant docs in the top k, divided by R.",
    ),
    Family(
        name="relative_P",
        kind="cutoffs",
        defaults=DEFAULT_CUTOFFS,
        doc="Precision at k over the best possible precision at k: rel in top k / min(k, R).",
    ),
    Family(
        name="success",
        ir_measures="Success@k",
        kind="cutoffs",
        defaults=(1.0, 5.0, 10.0),
        doc="1 if a relevant document is in the top k, else 0.",
    ),
    Family(name="set_P", ir_measures="SetP", doc="Set precision: relevant retrieved / retrieved."),
    Family(
        name="set_relative_P",
        ir_measures="SetRelP",
        doc="Relative set precision: relevant retrieved / min(retrieved, R).",
    ),
    Family(name="set_recall", ir_measures="SetR", doc="Set recall: relevant retrieved / R."),
    Family(
        name="set_map",
        ir_measures="SetAP",
        doc="Unranked set AP: relevant retrieved^2 / (retrieved * R) = set P * set recall.",
    ),
    Family(
        name="set_F",
        ir_measures="SetF",
        kind="list",
        defaults=(1.0,),
        doc="Set F: (x+1)PR/(xP+R) with trec_eval's parameter x (default 1, F1).",
    ),
    Family(
        name="num_nonrel_judged_ret",
        aggregate="sum",
        doc="Number of judged non-relevant documents retrieved.",
    ),
    # --- preference judgments (trec_eval -R prefs / qrels_prefs; fasteval.engine.prefs)
    _prefs(
        name="prefs_num_prefs_poss",
        aggregate="sum",
        doc=(
            "Number of possible preferences, whether or not the documents were retrieved (summed "
            "over queries; trec_eval m_prefs_num_prefs_poss.c)."
        ),
    ),
    _prefs(
        name="prefs_num_prefs_ful",
        aggregate="sum",
        doc=(
            "Number of preferences A > B fulfilled: A ranked above B, or A retrieved and B not "
            "(summed over queries)."
        ),
    ),
    _prefs(
        name="prefs_num_prefs_ful_ret",
        aggregate="sum",
        doc=(
            "Number of preferences A > B fulfilled with both A and B retrieved (summed over "
            "queries)."
        ),
    ),
    _prefs(
        name="prefs_simp",
        doc=(
            "Preferences fulfilled / preferences possible (a pair in neither retrieved counts as "
            "failed); every preference of every judgment group counts once."
        ),
    ),
    _prefs(
        name="prefs_pair",
        doc=(
            "Mean over document pairs with a preference of the share of the pair's preferences "
            "(over judgment groups) fulfilled."
        ),
    ),
    _prefs(
        name="prefs_avgjg",
        doc=(
            "prefs_simp per judgment group, averaged over the query's judgment groups (one user, "
            "one vote)."
        ),
    ),
    _prefs(
        name="prefs_avgjg_Rnonrel",
        doc=(
            "prefs_avgjg with the judged non-relevant (rel_level 0) documents of a group set to R "
            "in number: akin to bpref for one group of two levels."
        ),
    ),
    _prefs(
        name="prefs_simp_ret",
        doc="prefs_simp over the preferences whose two documents were both retrieved.",
    ),
    _prefs(
        name="prefs_pair_ret",
        doc="prefs_pair over the pairs whose two documents were both retrieved.",
    ),
    _prefs(
        name="prefs_avgjg_ret",
        doc="prefs_avgjg over the preferences whose two documents were both retrieved.",
    ),
    _prefs(
        name="prefs_avgjg_Rnonrel_ret",
        doc=(
            "prefs_avgjg_Rnonrel over the retrieved documents (R and N counted among the "
            "retrieved)."
        ),
    ),
    _prefs(
        name="prefs_simp_imp",
        doc="prefs_simp leaving out the preferences neither of whose documents was retrieved.",
    ),
    _prefs(
        name="prefs_pair_imp",
        doc="prefs_pair leaving out the pairs neither of whose documents was retrieved.",
    ),
    _prefs(
        name="prefs_avgjg_imp",
        doc="prefs_avgjg leaving out the preferences neither of whose documents was retrieved.",
    ),
    # --- judgment groups (trec_eval -R qrels_jg; fasteval.engine.judgment_groups): the
    # measure averaged over the groups that judged the query
    Family(
        name="map_avgjg",
        kernel="map",
        doc=(
            "AP averaged over the query's judgment groups (users), then over queries (trec_eval "
            "m_map_avgjg.c)."
        ),
    ),
    Family(
        name="P_avgjg",
        kind="cutoffs",
        defaults=DEFAULT_CUTOFFS,
        kernel="P",
        doc=(
            "Precision at cutoff k averaged over the query's judgment groups (trec_eval "
            "m_P_avgjg.c)."
        ),
    ),
    Family(
        name="Rprec_mult_avgjg",
        kind="levels",
        defaults=R_MULTIPLES,
        kernel="Rprec_mult",
        doc=(
            "Precision after (long)(x*R + 0.9) documents, R and the precision per judgment group, "
            "averaged over the groups (trec_eval m_Rprec_mult_avgjg.c)."
        ),
    ),
    # --- trec_eval 10 only
    Family(
        name="rbp",
        ir_measures="RBP",
        kind="gains",
        defaults=(0.9,),
        doc=(
            "Rank-biased precision (1-p) sum g_i p^(i-1), p = 0.9, gains scaled to [0, 1] (Moffat &"
            " Zobel, TOIS 2008; trec_eval 10)."
        ),
    ),
    Family(
        name="rbp_resid",
        kind="gains",
        defaults=(0.9,),
        doc=(
            "RBP residual: the most RBP could rise if every unjudged retrieved document were "
            "relevant, plus the tail p^n (Moffat & Zobel 2008; trec_eval 10)."
        ),
    ),
    Family(
        name="unj",
        kind="cutoffs",
        defaults=(5.0, 10.0, 20.0),
        doc="Share of unjudged documents in the top k (missing ranks count judged; trec_eval 10).",
    ),
    # --- beyond trec_eval: ir_measures', ranx's and gdeval's measures
    Family(
        name="err",
        ir_measures="ERR@k",
        kind="cutoffs",
        defaults=(20.0,),
        doc=(
            "Expected reciprocal rank at k, gdeval's form: sum_r 1/r R_r prod_{i<r}(1 - R_i), R = "
            "(2^g - 1)/2^4 (Chapelle et al., CIKM 2009)."
        ),
    ),
    Family(
        name="nerr",
        ir_measures="nERR@k",
        kind="cutoffs",
        defaults=(20.0,),
        doc="ERR@k over the ERR@k of the ideal ranking of the judged grades.",
    ),
    Family(
        name="ncg",
        ir_measures="NCG@k",
        kind="cutoffs",
        defaults=(10.0,),
        doc=(
            "Normalised cumulative gain at k: sum of grades in the top k over the ideal's (Jarvelin"
            " & Kekalainen, TOIS 2002)."
        ),
    ),
    Family(
        name="judged",
        ir_measures="Judged@k",
        kind="cutoffs",
        defaults=(10.0,),
        doc="Share of the top min(k, retrieved) documents that are in the qrels (any grade).",
    ),
    Family(
        name="jk_dcg",
        kind="gains",
        doc=(
            "DCG with the original discount g_1 + sum_{i>=2} g_i/log2(i) (Jarvelin & Kekalainen, "
            "TOIS 2002)."
        ),
    ),
    Family(
        name="jk_ndcg",
        kind="gains",
        doc="jk_dcg over the jk_dcg of the ideal ranking of all judged documents.",
    ),
    Family(
        name="numq",
        ir_measures="NumQ",
        aggregate="count",
        kernel="num_q",
        doc=(
            "ir_measures' NumQ: 1 per query evaluated, summed over queries (trec_eval's num_q has "
            "the sum only)."
        ),
    ),
    Family(
        name="hits",
        kind="cutoffs",
        defaults=(10.0,),
        integer=True,
        ranx="hits",
        doc=(
            "Relevant documents in the top k (ranx's hits@k, ir_measures' NumRelRet@k): P@k times "
            "k."
        ),
    ),
    Family(
        name="rel_ret",
        ir_measures="NumRelRet@k",
        kind="cutoffs",
        defaults=(10.0,),
        aggregate="sum",
        kernel="hits",
        doc=(
            "Relevant documents in the top k, summed over queries as num_rel_ret is (ir_measures' "
            "NumRelRet with a cutoff, NumRelRet@k)."
        ),
    ),
    Family(
        name="dcg_exp",
        kind="cutoffs",
        defaults=(20.0,),
        ranx="dcg_burges",
        doc=(
            "DCG at k with exponential gains: sum_{i<=k} (2^g_i - 1)/log2(i+1) (Burges et al., ICML"
            " 2005; ranx's dcg_burges)."
        ),
    ),
    Family(
        name="ndcg_exp",
        kind="cutoffs",
        defaults=(20.0,),
        ranx="ndcg_burges",
        doc=(
            "nDCG at k with exponential gains 2^g - 1 over the ideal ranking of the judged grades: "
            "gdeval's nDCG@k, the TREC Web track's official measure (ir_measures nDCG(dcg='exp-"
            "log2')@k; ranx's ndcg_burges; Burges et al., ICML 2005)."
        ),
    ),
    Family(
        name="compat",
        ir_measures="Compat",
        kind="list",
        defaults=(0.95, 1.0),
        doc=(
            "Compatibility: rank-biased overlap (persistence p, default 0.95) of the ranking with "
            "the ideal ranking of the relevant documents (grade, then the run's order), over depth "
            "max(|ranking|, R), divided by the ideal's own (normalize=1) (Clarke, Vtyurina & "
            "Smucker, TOIS 2021; ir_measures' Compat(p=, normalize=))."
        ),
    ),
    Family(
        name="accuracy",
        ir_measures="Accuracy[@k]",
        aggregate="defined",
        doc=(
            "Accuracy: the share of (relevant, non-relevant) pairs among the retrieved documents "
            "(within an optional cutoff) where the relevant one is ranked first, 1 - sum_r "
            "nonrel_above(r) / (#nonrel * #rel); undefined with no relevant retrieved (no row; the "
            "mean is over the queries where it is defined, as ir_measures' Accuracy), 1 with no "
            "non-relevant (where ir_measures' fails)."
        ),
    ),
    _cwl(
        name="inst",
        definition="INST: C/W/L with c_i = ((i + T + T_i - 1)/(i + T + T_i))^2, T_i = T - gain "
        "so far",
        citation="Moffat, Bailey, Scholer & Thomas, ADCS 2015; cwl_eval",
    ),
    _cwl(
        name="insq",
        definition="INSQ: C/W/L with c_i = ((i + 2T - 1)/(i + 2T))^2",
        citation="Moffat, Scholer & Thomas, ADCS 2012; cwl_eval",
    ),
    _cwl(
        name="bpm",
        cut=True,
        definition="Bejewelled player model, static: C/W/L that continues while the gain so far is "
        "below T and fewer than k documents were seen",
        citation="Zhang et al., SIGIR 2017; cwl_eval",
    ),
    _cwl(
        name="sdcg",
        first="",
        cut=True,
        definition="Scaled DCG@k: C/W/L with c_i = log2(i+1)/log2(i+2) before k, 0 from k",
        citation="Jarvelin & Kekalainen 2002, as a C/W/L measure; cwl_eval",
    ),
    _cwl(
        name="nerr8",
        first="",
        cut=True,
        definition="NERR eq. 8: c_i = 1 - g_i before k",
        citation="Azzopardi, Mackenzie & Moffat, ICTIR 2021; cwl_eval",
    ),
    _cwl(
        name="nerr9",
        first="",
        cut=True,
        definition="NERR eq. 9: c_i = i/(i+1) (1 - g_i) before k",
        citation="Azzopardi et al., ICTIR 2021",
    ),
    _cwl(
        name="nerr10",
        first="p",
        defaults=(0.9, 0.0, 1.0, 0.0),  # p = 0.9, as ir_measures' NERR10
        definition="NERR eq. 10: c_i = p (1 - g_i)",
        citation="Azzopardi et al., ICTIR 2021",
    ),
    _cwl(
        name="nerr11",
        definition="NERR eq. 11: c_i = ((i + 2T - 1)/(i + 2T))^2 (1 - g_i)",
        citation="Azzopardi et al., ICTIR 2021",
    ),
    replace(  # ir_measures' RBP(p=, rel=): its name is rbp's, the parser reads rel= apart
        _cwl(
            name="rbp_bin",
            first="p",
            defaults=(0.8, 1.0, 1.0, 0.0),
            definition="RBP over binary gains, grade >= rel: ir_measures' RBP(p=, rel=), computed "
            "as cwl_eval does",
            citation="Moffat & Zobel, TOIS 2008",
        ),
        ir_measures=None,
    ),
    Family(
        name="f1",
        kind="cutoffs",
        defaults=(10.0,),
        ranx="f1",
        doc="F1 at k, the harmonic mean of P@k and R@k: 2 P@k R@k / (P@k + R@k), 0 with no "
        "relevant document in the top k (van Rijsbergen, Information Retrieval 1979; ranx's f1@k).",
    ),
]

FAMILIES: dict[str, Family] = {f.name: f for f in _ENTRIES}

# trec_eval's output order (measures.c te_trec_measures[]), then fasteval's families
TREC_ORDER = ["runid", *FAMILIES]

# trec_eval's measures over preference judgments (-R prefs / qrels_prefs), in its order
PREFS_ORDER = tuple(f for f in FAMILIES if f.startswith("prefs_"))

PREFS_FAMILIES = frozenset(PREFS_ORDER)

# Families that only trec_eval 10 has: left out of nicknames under --compat 9.
V10_ONLY = frozenset({"rbp", "rbp_resid", "unj"})

# trec_eval 9's own families over plain qrels, num_q .. num_nonrel_judged_ret
_TREC9 = list(FAMILIES)[: list(FAMILIES).index("num_nonrel_judged_ret") + 1]

# trec_eval's nicknames (measures.c), printed in TREC_ORDER
NICKNAMES: dict[str, list[str]] = {
    "official": ["runid", *_TREC9[:11]],  # num_q .. P
    "all_trec": ["runid", *(f for f in _TREC9 if f not in ("dcg", "ideal_dcg")), *sorted(V10_ONLY)],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
    "all_prefs": ["runid", "num_q", *PREFS_ORDER],
    "prefs": ["runid", "num_q", *PREFS_ORDER[:6]],  # poss, ful, ful_ret, simp, pair, avgjg
    "set": ["runid", *_TREC9[:4], "utility", *(f for f in _TREC9 if f.startswith("set_"))],
}


def _ir_measures_names() -> dict[str, tuple[str | None, str | None]]:
    out: dict[str, tuple[str | None, str | None]] = {}
    for f in FAMILIES.values():
        if not f.ir_measures:
            continue
        name = f.ir_measures.split("[")[0].split("@")[0]
        with_cut, without = out.get(name, (None, None))
        if "@k" in f.ir_measures:  # AP@k, RR[@k]
            with_cut = f.name
        if "@" not in f.ir_measures or "[@k]" in f.ir_measures:  # AP, RR[@k]
            without = f.name
        out[name] = (with_cut, without)
    return out


IR_MEASURES = _ir_measures_names()
"""ir_measures' names -> trec_eval family (cutoff form, no-cutoff form)."""
