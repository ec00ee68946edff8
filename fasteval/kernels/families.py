"""Measure family numbers and the relevance codes inside a ranking.

The family numbers are an internal contract between :mod:`fasteval.measures`
(which plans measure columns) and :func:`fasteval.kernels.ranking.evaluate_groups`.
Relevance values inside a ranking follow trec_eval's ``form_res_rels``: a judged
grade ``>= 0``; ``NONPOOL`` (-1) for a document absent from the qrels;
``UNJUDGED`` (-2) for a qrels entry with a negative grade.
"""

from __future__ import annotations

NONPOOL = -1
UNJUDGED = -2

# Measure families. The numbers are an internal contract between
# fasteval.measures (which plans columns) and evaluate_groups.
NUM_Q = 0
NUM_RET = 1
NUM_REL = 2
NUM_REL_RET = 3
MAP = 4
GM_MAP = 5
RPREC = 6
BPREF = 7
RECIP_RANK = 8
IPREC_AT_RECALL = 9
P = 10
RECALL = 11
INFAP = 12
ELEVEN_PT_AVG = 13
NDCG = 14
NDCG_CUT = 15
MAP_CUT = 16
SUCCESS = 17
SET_P = 18
SET_RECALL = 19
SET_F = 20
NUM_NONREL_JUDGED_RET = 21
GM_BPREF = 22
RPREC_MULT = 23
UTILITY = 24
BING = 25
G = 26
NDCG_REL = 27
RNDCG = 28
RELATIVE_P = 29
SET_RELATIVE_P = 30
SET_MAP = 31
RBP = 32
RBP_RESID = 33
UNJ = 34
DCG = 35
IDEAL_DCG = 36
ERR = 37
NERR = 38
NCG = 39
JUDGED = 40
JK_DCG = 41
JK_NDCG = 42
NDCG_EXP = 43
DCG_EXP = 44
HITS = 45
COMPAT = 46
ACCURACY = 47
# the C/W/L family (cwl_eval): params (T or p, min_rel, max_rel, k)
INST = 48
INSQ = 49
BPM = 50
SDCG = 51
NERR8 = 52
NERR9 = 53
NERR10 = 54
NERR11 = 55
RBP_BIN = 56
CWL_DEPTH = 1000  # cwl_eval's max_n: rankings cut, or padded with zero gain, to 1000

ERR_GMAX = 4.0  # gdeval's maximum grade for ERR's stopping probabilities
