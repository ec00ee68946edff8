"""Measure families beyond trec_eval: ir_measures', ranx's and gdeval's measures.

Printed after trec_eval's, in the order of the entries (a new family goes at
the end). Assembled with :mod:`fasteval.measures.trec_families` into
:data:`fasteval.measures.registry.FAMILIES`.
"""

from __future__ import annotations

from fasteval.measures.family import Family


def _cwl(
    *, name: str, definition: str, citation: str, defaults: tuple[float, ...] = (1.0, 0.0, 1.0, 0.0)
) -> Family:
    """A C/W/L family of ir_measures (cwl_eval's), read by the parser's C/W/L branch."""
    gains = "gains (clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel) over 1000 ranks"
    doc = f"{definition}. Params: T or p, min_rel, max_rel, k; {gains} ({citation})."
    return Family(name=name, kind="list", defaults=defaults, doc=doc)


EXTRA_FAMILIES = [
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
        integer=True,
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
        integer=True,
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
        definition="Bejewelled player model, static: C/W/L that continues while the gain so far is "
        "below T and fewer than k documents were seen",
        citation="Zhang et al., SIGIR 2017; cwl_eval",
    ),
    _cwl(
        name="sdcg",
        definition="Scaled DCG@k: C/W/L with c_i = log2(i+1)/log2(i+2) before k, 0 from k",
        citation="Jarvelin & Kekalainen 2002, as a C/W/L measure; cwl_eval",
    ),
    _cwl(
        name="nerr8",
        definition="NERR eq. 8: c_i = 1 - g_i before k",
        citation="Azzopardi, Mackenzie & Moffat, ICTIR 2021; cwl_eval",
    ),
    _cwl(
        name="nerr9",
        definition="NERR eq. 9: c_i = i/(i+1) (1 - g_i) before k",
        citation="Azzopardi et al., ICTIR 2021",
    ),
    _cwl(
        name="nerr10",
        definition="NERR eq. 10: c_i = p (1 - g_i)",
        citation="Azzopardi et al., ICTIR 2021",
    ),
    _cwl(
        name="nerr11",
        definition="NERR eq. 11: c_i = ((i + 2T - 1)/(i + 2T))^2 (1 - g_i)",
        citation="Azzopardi et al., ICTIR 2021",
    ),
    _cwl(
        name="rbp_bin",
        defaults=(0.8, 1.0, 1.0, 0.0),
        definition="RBP over binary gains, grade >= rel: ir_measures' RBP(p=, rel=), computed as "
        "cwl_eval does",
        citation="Moffat & Zobel, TOIS 2008",
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
