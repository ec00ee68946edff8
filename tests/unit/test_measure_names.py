"""The measure-name parser: trec_eval and ir_measures syntaxes."""

from __future__ import annotations

import pytest

from fasteval import MeasureError, parse_measure, parse_measures


def names(arg: str) -> list[str]:
    return [m.name for m in parse_measure(arg)]


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("map", ["map"]),
        ("P.5,10", ["P_5", "P_10"]),
        ("P.10,5,5", ["P_5", "P_10"]),
        ("P_10", ["P_10"]),
        ("ndcg_cut.10,20,23.4", ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]),
        ("iprec_at_recall..10,.20", ["iprec_at_recall_0.10", "iprec_at_recall_0.20"]),
        ("iprec_at_recall_0.10", ["iprec_at_recall_0.10"]),
        ("11pt_avg..25,.5,.75", ["11pt_avg_.25,.5,.75"]),
        ("success", ["success_1", "success_5", "success_10"]),
        ("set_F.0.5", ["set_F_0.5"]),
        ("AP", ["AP"]),
        ("AP@100", ["AP@100"]),
        ("P@10", ["P@10"]),
        ("P(rel=2)@5", ["P(rel=2)@5"]),
        ("nDCG@10", ["nDCG@10"]),
        ("R@1000", ["R@1000"]),
        ("RR", ["RR"]),
        ("RR@10", ["RR@10"]),
        ("IPrec@0.1", ["IPrec@0.1"]),
    ],
)
def test_names(arg, expected):
    assert names(arg) == expected


def test_ir_measures_map_to_trec_families():
    (m,) = parse_measure("P(rel=2)@5")
    assert (m.family, m.params, m.rel) == ("P", (5.0,), 2)
    (m,) = parse_measure("nDCG@10")
    assert (m.family, m.params) == ("ndcg_cut", (10.0,))


def test_official_set_in_trec_order():
    ms = parse_measures(["official"])
    assert ms.runid
    assert [m.name for m in ms][:6] == [
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
    ]
    assert [m.name for m in ms][-1] == "P_1000"


def test_output_follows_trec_eval_measure_order_not_request_order():
    assert [m.name for m in parse_measures(["P_5", "map"])] == ["map", "P_5"]


@pytest.mark.parametrize(
    ("arg", "needle"),
    [
        ("mapp", "unknown measure 'mapp'"),
        ("P.0", "cutoffs must be positive"),
        ("P.x", "cutoff 'x' is not a number"),
        ("map.5", "map takes no parameters"),
        ("iprec_at_recall.1.5", "must be in \\[0, 1\\]"),
        ("P", None),
        ("nDCG(judged_only=True)@10", "not supported"),
        ("Rprec@5", "takes no @cutoff"),
        ("P(rel=x)@5", "rel must be an integer"),
    ],
)
def test_bad_names(arg, needle):
    if needle is None:
        assert names(arg)[0] == "P_5"
        return
    with pytest.raises(MeasureError, match=needle):
        parse_measure(arg)
