"""Measure families: what each computes, its parameters, how it aggregates.

One entry per trec_eval measure family. The table drives the parser, the
engine's column plan, the trec-format printer and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from fasteval.kernels import families as k

DEFAULT_CUTOFFS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


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
        ``iprec_at_recall_0.10``), ``"list"`` (one value from a parameter
        list, e.g. ``11pt_avg``, ``set_F``) or ``"gains"`` (one value from
        ``name=value`` pairs: grade gains ``1=3,2=9`` and, for rbp, ``p=0.95``).
    defaults
        Default parameters.
    aggregate
        ``"mean"``, ``"sum"``, ``"gm"`` (geometric mean, trec_eval's
        ``log(max(x, 1e-5))``) or ``"count"``.
    per_query
        Whether trec_eval prints per-query values.
    doc
        One line: what it measures, formula, citation.
    text
        A string-valued, per-query-only measure (``relstring``): not computed
        by the kernels, no ``all`` row; its value is in the ``text`` column.
    """

    name: str
    code: int
    kind: str
    defaults: tuple[float, ...]
    aggregate: str
    per_query: bool
    integer: bool
    doc: str
    text: bool = False


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
        "gains",
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
    Family(
        "gm_bpref",
        k.GM_BPREF,
        "single",
        (),
        "gm",
        False,
        False,
        "Geometric mean over queries of bpref: exp(mean(log(max(bpref, 1e-5)))).",
    ),
    Family(
        "Rprec_mult",
        k.RPREC_MULT,
        "levels",
        R_MULTIPLES,
        "mean",
        True,
        False,
        "Precision after x*R documents, cutoff (long)(x*R + 0.9): precision- vs "
        "recall-oriented behaviour at multiples of R.",
    ),
    Family(
        "utility",
        k.UTILITY,
        "list",
        (1.0, -1.0, 0.0, 0.0),
        "mean",
        True,
        False,
        "Set utility p1*a + p2*b + p3*c + p4*d over the contingency table (a relevant "
        "retrieved, b non-relevant retrieved, c relevant missed, d the rest; d needs -N).",
    ),
    Family(
        "binG",
        k.BING,
        "single",
        (),
        "mean",
        True,
        False,
        "Binary G: 1/R sum over relevant retrieved of 1/log2(2 + non-relevant ranked above) "
        "(trec_eval, after Kekalainen's generalised precision).",
    ),
    Family(
        "G",
        k.G,
        "gains",
        (),
        "mean",
        True,
        False,
        "G: gain-weighted precision with cost discount sum g_i/log2(2 + cost_i - gain_i), "
        "over the ideal's total gain (trec_eval m_G.c).",
    ),
    Family(
        "dcg",
        k.DCG,
        "gains",
        (),
        "mean",
        True,
        False,
        "DCG over the whole ranking: sum g_i/log2(i+1), gains = grades or as given "
        "(Jarvelin & Kekalainen, TOIS 2002).",
    ),
    Family(
        "ideal_dcg",
        k.IDEAL_DCG,
        "gains",
        (),
        "mean",
        True,
        False,
        "DCG of the ideal ranking of all judged documents.",
    ),
    Family(
        "ndcg_rel",
        k.NDCG_REL,
        "gains",
        (),
        "mean",
        True,
        False,
        "nDCG averaged over the ranks of the relevant documents (missed ones at the "
        "final nDCG), like AP averages precision.",
    ),
    Family(
        "Rndcg",
        k.RNDCG,
        "gains",
        (),
        "mean",
        True,
        False,
        "nDCG averaged at the ranks where the ideal gain changes (R-based nDCG, "
        "trec_eval m_Rndcg.c).",
    ),
    Family(
        "relative_P",
        k.RELATIVE_P,
        "cutoffs",
        DEFAULT_CUTOFFS,
        "mean",
        True,
        False,
        "Precision at k over the best possible precision at k: rel in top k / min(k, R).",
    ),
    Family(
        "set_relative_P",
        k.SET_RELATIVE_P,
        "single",
        (),
        "mean",
        True,
        False,
        "Relative set precision: relevant retrieved / min(retrieved, R).",
    ),
    Family(
        "set_map",
        k.SET_MAP,
        "single",
        (),
        "mean",
        True,
        False,
        "Unranked set AP: relevant retrieved^2 / (retrieved * R) = set P * set recall.",
    ),
    Family(
        "rbp",
        k.RBP,
        "gains",
        (0.9,),
        "mean",
        True,
        False,
        "Rank-biased precision (1-p) sum g_i p^(i-1), p = 0.9, gains scaled to [0, 1] "
        "(Moffat & Zobel, TOIS 2008; trec_eval 10).",
    ),
    Family(
        "rbp_resid",
        k.RBP_RESID,
        "gains",
        (0.9,),
        "mean",
        True,
        False,
        "RBP residual: the most RBP could rise if every unjudged retrieved document were "
        "relevant, plus the tail p^n (Moffat & Zobel 2008; trec_eval 10).",
    ),
    Family(
        "unj",
        k.UNJ,
        "cutoffs",
        (5.0, 10.0, 20.0),
        "mean",
        True,
        False,
        "Share of unjudged documents in the top k (missing ranks count judged; trec_eval 10).",
    ),
    Family(
        "relstring",
        -1,  # not a kernel family: fasteval.engine.relstring builds the strings
        "list",
        (10.0,),
        "none",
        True,
        False,
        "The relevance values of the first N (default 10) retrieved documents as a string: "
        "'0'-'9' a grade, '>' above 9, '-' not in the qrels, '.' pooled but unjudged, "
        "'<' another negative grade (trec_eval m_relstring.c; per query only).",
        text=True,
    ),
    # --- judgment groups (trec_eval -R qrels_jg): the measure averaged over the groups
    # that judged the query (fasteval.engine.judgment_groups); with plain qrels a query has
    # one group and the value is the base measure's
    Family(
        "map_avgjg",
        k.MAP,
        "single",
        (),
        "mean",
        True,
        False,
        "AP averaged over the query's judgment groups (users), then over queries "
        "(trec_eval m_map_avgjg.c).",
    ),
    Family(
        "P_avgjg",
        k.P,
        "cutoffs",
        DEFAULT_CUTOFFS,
        "mean",
        True,
        False,
        "Precision at cutoff k averaged over the query's judgment groups (trec_eval m_P_avgjg.c).",
    ),
    Family(
        "Rprec_mult_avgjg",
        k.RPREC_MULT,
        "levels",
        R_MULTIPLES,
        "mean",
        True,
        False,
        "Precision after (long)(x*R + 0.9) documents, R and the precision per judgment "
        "group, averaged over the groups (trec_eval m_Rprec_mult_avgjg.c).",
    ),
    # --- preference judgments (trec_eval -R prefs / qrels_prefs): computed by
    # fasteval.engine.prefs from the preferences of each judgment group (Buckley, trec_eval 9)
    Family(
        "prefs_num_prefs_poss",
        -1,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of possible preferences, whether or not the documents were retrieved "
        "(summed over queries; trec_eval m_prefs_num_prefs_poss.c).",
    ),
    Family(
        "prefs_num_prefs_ful",
        -1,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of preferences A > B fulfilled: A ranked above B, or A retrieved and B not "
        "(summed over queries).",
    ),
    Family(
        "prefs_num_prefs_ful_ret",
        -1,
        "single",
        (),
        "sum",
        True,
        True,
        "Number of preferences A > B fulfilled with both A and B retrieved (summed over queries).",
    ),
    Family(
        "prefs_simp",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "Preferences fulfilled / preferences possible (a pair in neither retrieved counts as "
        "failed); every preference of every judgment group counts once.",
    ),
    Family(
        "prefs_pair",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "Mean over document pairs with a preference of the share of the pair's preferences "
        "(over judgment groups) fulfilled.",
    ),
    Family(
        "prefs_avgjg",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_simp per judgment group, averaged over the query's judgment groups "
        "(one user, one vote).",
    ),
    Family(
        "prefs_avgjg_Rnonrel",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_avgjg with the judged non-relevant (rel_level 0) documents of a group set to R "
        "in number: akin to bpref for one group of two levels.",
    ),
    Family(
        "prefs_simp_ret",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_simp over the preferences whose two documents were both retrieved.",
    ),
    Family(
        "prefs_pair_ret",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_pair over the pairs whose two documents were both retrieved.",
    ),
    Family(
        "prefs_avgjg_ret",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_avgjg over the preferences whose two documents were both retrieved.",
    ),
    Family(
        "prefs_avgjg_Rnonrel_ret",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_avgjg_Rnonrel over the retrieved documents (R and N counted among the retrieved).",
    ),
    Family(
        "prefs_simp_imp",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_simp leaving out the preferences neither of whose documents was retrieved.",
    ),
    Family(
        "prefs_pair_imp",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_pair leaving out the pairs neither of whose documents was retrieved.",
    ),
    Family(
        "prefs_avgjg_imp",
        -1,
        "single",
        (),
        "mean",
        True,
        False,
        "prefs_avgjg leaving out the preferences neither of whose documents was retrieved.",
    ),
    # --- beyond trec_eval
    Family(
        "numq",
        k.NUM_Q,
        "single",
        (),
        "count",
        True,
        True,
        "ir_measures' NumQ: 1 per query evaluated, summed over queries (trec_eval's num_q "
        "has the sum only).",
    ),
    Family(
        "hits",
        k.HITS,
        "cutoffs",
        (10.0,),
        "mean",
        True,
        True,
        "Relevant documents in the top k (ranx's hits@k, ir_measures' NumRelRet@k): P@k times k.",
    ),
    Family(
        "rel_ret",
        k.HITS,
        "cutoffs",
        (10.0,),
        "sum",
        True,
        True,
        "Relevant documents in the top k, summed over queries as num_rel_ret is "
        "(ir_measures' NumRelRet with a cutoff, NumRelRet@k).",
    ),
    Family(
        "dcg_exp",
        k.DCG_EXP,
        "cutoffs",
        (20.0,),
        "mean",
        True,
        False,
        "DCG at k with exponential gains: sum_{i<=k} (2^g_i - 1)/log2(i+1) (Burges et al., "
        "ICML 2005; ranx's dcg_burges).",
    ),
    Family(
        "ndcg_exp",
        k.NDCG_EXP,
        "cutoffs",
        (20.0,),
        "mean",
        True,
        False,
        "nDCG at k with exponential gains 2^g - 1 over the ideal ranking of the judged grades: "
        "gdeval's nDCG@k, the TREC Web track's official measure (ir_measures "
        "nDCG(dcg='exp-log2')@k; ranx's ndcg_burges; Burges et al., ICML 2005).",
    ),
    Family(
        "compat",
        k.COMPAT,
        "list",
        (0.95, 1.0),
        "mean",
        True,
        False,
        "Compatibility: rank-biased overlap (persistence p, default 0.95) of the ranking with "
        "the ideal ranking of the relevant documents (grade, then the run's order), over depth "
        "max(|ranking|, R), divided by the ideal's own (normalize=1) (Clarke, Vtyurina & "
        "Smucker, TOIS 2021; ir_measures' Compat(p=, normalize=)).",
    ),
    Family(
        "accuracy",
        k.ACCURACY,
        "single",
        (),
        "mean",
        True,
        False,
        "Accuracy: the share of (relevant, non-relevant) pairs among the retrieved documents "
        "(within an optional cutoff) where the relevant one is ranked first, "
        "1 - sum_r nonrel_above(r) / (#nonrel * #rel); 0 with no relevant retrieved, 1 with no "
        "non-relevant (ir_measures' Accuracy, which skips the first and fails on the second).",
    ),
    Family(
        "inst",
        k.INST,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "INST: C/W/L with c_i = ((i + T + T_i - 1)/(i + T + T_i))^2, T_i = T - gain so far "
        "(Moffat, Bailey, Scholer & Thomas, ADCS 2015; cwl_eval)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "insq",
        k.INSQ,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "INSQ: C/W/L with c_i = ((i + 2T - 1)/(i + 2T))^2 (Moffat, Scholer & Thomas, ADCS 2012; "
        "cwl_eval)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "bpm",
        k.BPM,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "Bejewelled player model, static: C/W/L that continues while the gain so far is below T "
        "and fewer than k documents were seen (Zhang et al., SIGIR 2017; cwl_eval)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "sdcg",
        k.SDCG,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "Scaled DCG@k: C/W/L with c_i = log2(i+1)/log2(i+2) before k, 0 from k (Jarvelin & "
        "Kekalainen 2002, as a C/W/L measure; cwl_eval)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "nerr8",
        k.NERR8,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "NERR eq. 8: c_i = 1 - g_i before k (Azzopardi, Mackenzie & Moffat, ICTIR 2021; cwl_eval)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "nerr9",
        k.NERR9,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "NERR eq. 9: c_i = i/(i+1) (1 - g_i) before k (Azzopardi et al., ICTIR 2021)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "nerr10",
        k.NERR10,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "NERR eq. 10: c_i = p (1 - g_i) (Azzopardi et al., ICTIR 2021)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "nerr11",
        k.NERR11,
        "list",
        (1.0, 0.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "NERR eq. 11: c_i = ((i + 2T - 1)/(i + 2T))^2 (1 - g_i) (Azzopardi et al., ICTIR 2021)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "rbp_bin",
        k.RBP_BIN,
        "list",
        (0.8, 1.0, 1.0, 0.0),
        "mean",
        True,
        False,
        "RBP over binary gains, grade >= rel (ir_measures' RBP(p=, rel=), computed as cwl_eval "
        "does over 1000 ranks; Moffat & Zobel, TOIS 2008)."
        " Params: T or p, min_rel, max_rel, k; gains (clip(grade, min_rel, max_rel) - min_rel)"
        " / (max_rel - min_rel) over 1000 ranks.",
    ),
    Family(
        "err",
        k.ERR,
        "cutoffs",
        (20.0,),
        "mean",
        True,
        False,
        "Expected reciprocal rank at k, gdeval's form: sum_r 1/r R_r prod_{i<r}(1 - R_i), "
        "R = (2^g - 1)/2^4 (Chapelle et al., CIKM 2009).",
    ),
    Family(
        "nerr",
        k.NERR,
        "cutoffs",
        (20.0,),
        "mean",
        True,
        False,
        "ERR@k over the ERR@k of the ideal ranking of the judged grades.",
    ),
    Family(
        "ncg",
        k.NCG,
        "cutoffs",
        (10.0,),
        "mean",
        True,
        False,
        "Normalised cumulative gain at k: sum of grades in the top k over the ideal's "
        "(Jarvelin & Kekalainen, TOIS 2002).",
    ),
    Family(
        "judged",
        k.JUDGED,
        "cutoffs",
        (10.0,),
        "mean",
        True,
        False,
        "Share of the top min(k, retrieved) documents that are in the qrels (any grade).",
    ),
    Family(
        "jk_dcg",
        k.JK_DCG,
        "gains",
        (),
        "mean",
        True,
        False,
        "DCG with the original discount g_1 + sum_{i>=2} g_i/log2(i) "
        "(Jarvelin & Kekalainen, TOIS 2002).",
    ),
    Family(
        "jk_ndcg",
        k.JK_NDCG,
        "gains",
        (),
        "mean",
        True,
        False,
        "jk_dcg over the jk_dcg of the ideal ranking of all judged documents.",
    ),
]

# The families defined over preference judgments (trec_eval -R prefs / qrels_prefs).
PREFS_ORDER = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
"""trec_eval's preference measures, in its output order."""

PREFS_FAMILIES = frozenset(PREFS_ORDER)

# Families that only trec_eval 10 has: left out of nicknames under --compat 9.
V10_ONLY = frozenset({"rbp", "rbp_resid", "unj"})

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
    *PREFS_ORDER,
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
    "err",
    "nerr",
    "ncg",
    "judged",
    "jk_dcg",
    "jk_ndcg",
    "numq",
    "hits",
    "rel_ret",
    "dcg_exp",
    "ndcg_exp",
    "compat",
    "accuracy",
    "inst",
    "insq",
    "bpm",
    "sdcg",
    "nerr8",
    "nerr9",
    "nerr10",
    "nerr11",
    "rbp_bin",
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
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
    "all_prefs": ["runid", "num_q", *PREFS_ORDER],
    "prefs": [
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
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
    "NumRelRet": ("rel_ret", "num_rel_ret"),
    "NumQ": (None, "numq"),
    "Compat": (None, "compat"),
    "Accuracy": ("accuracy", "accuracy"),
    "SetAP": (None, "set_map"),
    "SetRelP": (None, "set_relative_P"),
    "Success": ("success", None),
    "SetP": (None, "set_P"),
    "SetR": (None, "set_recall"),
    "SetF": (None, "set_F"),
    "IPrec": ("iprec_at_recall", None),
    "gmAP": (None, "gm_map"),
    "ERR": ("err", None),
    "nERR": ("nerr", None),
    "NCG": ("ncg", None),
    "Judged": ("judged", None),
    "RBP": (None, "rbp"),
}
