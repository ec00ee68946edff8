"""The registry's families and the ranking kernel agree on every family's code."""

from __future__ import annotations

from fasteval.kernels import families as fm
from fasteval.kernels import measure_parts as mp
from fasteval.kernels import ranking as kr
from fasteval.measures.family import Family
from fasteval.measures.registry import FAMILIES, IR_MEASURES, TREC_ORDER


def _kernel_codes() -> set[int]:
    """The codes the kernel has a branch for: its upper-case int constants, the C/W/L ones."""
    names = [n for n, v in vars(kr).items() if n.isupper() and type(v) is int]
    return {getattr(kr, n) for n in names} | set(mp.CWL)


def test_no_two_families_share_a_code() -> None:
    own = [f.name for f in FAMILIES.values() if f.kernel == ""]
    codes = [fm.code(n) for n in own]
    assert len(set(codes)) == len(codes)
    assert fm.NONPOOL not in codes and fm.UNJUDGED not in codes


def test_every_kernel_family_has_a_branch() -> None:
    computed = _kernel_codes()
    missing = [f.name for f in FAMILIES.values() if f.kernel is not None and f.code not in computed]
    assert not missing, f"registry entries the ranking kernel does not compute: {missing}"


def test_a_family_computed_as_another_names_a_family_of_its_own() -> None:
    for f in FAMILIES.values():
        if f.kernel:
            assert FAMILIES[f.kernel].kernel == "", f.name
            assert f.code == FAMILIES[f.kernel].code


def test_the_print_order_is_the_order_of_the_entries() -> None:
    assert [*TREC_ORDER] == ["runid", *FAMILIES]
    assert TREC_ORDER[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]


def test_entries_take_keywords_only() -> None:
    f = Family(name="x", doc="An example (nobody 2026).")
    assert (f.kind, f.aggregate, f.per_query, f.code) == ("single", "mean", True, fm.code("x"))
    assert Family(name="y", doc=".", kernel=None).code == -1


def test_ir_measures_names_come_from_the_entries() -> None:
    assert IR_MEASURES["AP"] == ("map_cut", "map")
    assert IR_MEASURES["RR"] == ("recip_rank", "recip_rank")
    assert IR_MEASURES["P"] == ("P", None) and IR_MEASURES["Rprec"] == (None, "Rprec")
    assert IR_MEASURES["INST"] == (None, "inst") and IR_MEASURES["BPM"] == ("bpm", None)
    assert len(IR_MEASURES) == 35


def test_every_nickname_names_registry_families() -> None:
    from fasteval.measures.registry import NICKNAMES

    unknown = {f for names in NICKNAMES.values() for f in names} - {"runid", *FAMILIES}
    assert not unknown, f"nicknames naming families the registry lacks: {unknown}"
