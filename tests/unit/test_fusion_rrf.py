"""RRF, BordaFuse and weights against a slow pure-Python reference (ranx: tests/oracle)."""

from __future__ import annotations

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fasteval.analysis import fusion as fu
from fasteval.cli import main
from fasteval.errors import ParameterError


def _ranking(docs: dict[str, float]) -> list[str]:
    return [d for d, _ in sorted(docs.items(), key=lambda t: (-t[1], [-b for b in t[0].encode()]))]


def reference(
    runs: dict[str, dict[str, dict[str, float]]], method: str, w: dict[str, float], k: float
):
    """``{qid: {doc: fused}}``: RRF, BordaFuse (ranx's points) or weighted CombSUM of raw scores."""
    out: dict[str, dict[str, float]] = {}
    qids = sorted({q for r in runs.values() for q in r})
    for q in qids:
        cands = sorted({d for r in runs.values() for d in r.get(q, {})})
        m = len(cands)
        fused = dict.fromkeys(cands, 0.0)
        for name, r in runs.items():
            ranked = _ranking(r.get(q, {}))
            for d in cands:
                if method == "combsum":
                    fused[d] += w[name] * r.get(q, {}).get(d, 0.0)
                elif method == "rrf":
                    if d in ranked:
                        fused[d] += w[name] / (k + ranked.index(d) + 1)
                elif d in ranked:
                    fused[d] += w[name] * (m - ranked.index(d))
                else:
                    fused[d] += w[name] * (m - len(ranked) + 1) / 2
        out[q] = fused
    return out


runs_strategy = st.dictionaries(
    st.sampled_from(["r1", "r2", "r3"]),
    st.dictionaries(
        st.sampled_from(["1", "2"]),
        st.dictionaries(st.sampled_from(list("abcdefg")), st.integers(0, 5).map(float), min_size=1),
        min_size=1,
    ),
    min_size=1,
)


@settings(max_examples=40, deadline=None)
@given(
    runs_strategy,
    st.sampled_from(["rrf", "borda", "combsum"]),
    st.lists(st.integers(1, 4), min_size=3, max_size=3),
)
def test_rrf_and_borda_equal_reference(runs, method, wl):
    names = sorted(runs)
    assume(len(names) >= 2)
    w = {n: float(x) for n, x in zip(["r1", "r2", "r3"], wl, strict=True)}
    rows = [(n, q, d, s) for n in names for q, docs in runs[n].items() for d, s in docs.items()]
    frame = pl.DataFrame(rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row")
    got = fu.fuse(frame, method, names, 100, weights=[w[n] for n in names], k=5, norm="none")
    want = reference({n: runs[n] for n in names}, method, w, 5)
    for q, docs in want.items():
        sub = got.filter(pl.col("query_id") == q)
        have = dict(sub.select("doc_id", "score").iter_rows())
        assert set(have) == set(docs)
        for d, v in docs.items():
            assert have[d] == pytest.approx(v, rel=1e-12, abs=1e-15)
        # fused order: score descending, ties by the larger doc id first
        order = sub["doc_id"].to_list()
        assert order == sorted(order, key=lambda d: (-have[d], [-b for b in d.encode()]))


def test_weights_are_checked():
    frame = pl.DataFrame(
        {"run_id": ["a", "b"], "query_id": ["1", "1"], "doc_id": ["x", "y"], "score": [1.0, 2.0]}
    )
    with pytest.raises(ParameterError, match="1 weights for 2 fused runs"):
        fu.fuse(frame, "rrf", weights=[1.0])
    with pytest.raises(ParameterError, match="weights apply to"):
        fu.fuse(frame, "combmed", weights=[1.0, 2.0])
    with pytest.raises(ParameterError, match="unknown fusion method"):
        fu.fuse(frame, "rff")


def test_cli_fuse_rrf(write, tmp_path):
    a = write("a", "1 Q0 x 1 3 a\n1 Q0 y 2 2 a\n")
    b = write("b", "1 Q0 y 1 9 b\n1 Q0 z 2 1 b\n")
    out = tmp_path / "f.run"
    res = CliRunner().invoke(main, ["fuse", str(a), str(b), "-m", "rrf", "-o", str(out)])
    assert res.exit_code == 0, res.output
    lines = out.read_text().split("\n")
    assert lines[0].split()[2] == "y"  # 1/61 + 1/62 beats 1/61
    assert float(lines[0].split()[4]) == pytest.approx(1 / 61 + 1 / 62)
