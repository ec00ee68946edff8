"""Measure families beyond trec_eval: ir_measures', ranx's and gdeval's measures.

Assembled with :mod:`fasteval.measures.trec_families` into
:data:`fasteval.measures.registry.FAMILIES`.
"""

from __future__ import annotations

from fasteval.kernels import families as k
from fasteval.measures.family import Family

EXTRA_FAMILIES = [
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
        "defined",
        True,
        False,
        "Accuracy: the share of (relevant, non-relevant) pairs among the retrieved documents "
        "(within an optional cutoff) where the relevant one is ranked first, "
        "1 - sum_r nonrel_above(r) / (#nonrel * #rel); undefined with no relevant retrieved "
        "(no row; the mean is over the queries where it is defined, as ir_measures' Accuracy), "
        "1 with no non-relevant (where ir_measures' fails).",
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
