"""Runs for the content study: 17 retrieval models on each classic collection (issue 18).

The classic collections have text, queries and judgments but no submitted
runs. This script builds runs from genuinely different retrieval models with
numpy / scipy.sparse / scikit-learn (the ``bench`` extra) and writes, per
collection, under ``benchmarks/data/content/<name>/`` (git-ignored):

- ``runs/<model>.run``: TREC run files, top ``--depth`` (default 100) per query;
- ``qrels.txt``: the judgments as TREC qrels;
- ``collection.parquet``: the collection indexed by ``fasteval.io.collection``
  (SPEC 9's analyzer), so the study does not tokenize again.

Models (scores over the whole collection for every query):
BM25 at five (k1, b) (Lucene idf); TF-IDF cosine (sublinear tf); raw tf dot
product; pivoted-normalisation TF-IDF (Singhal et al. 1996, s = 0.2);
query likelihood with Dirichlet (mu = 500, 2000) and Jelinek-Mercer
(lambda = 0.1, 0.7) smoothing; DFR InL2 (Amati & van Rijsbergen 2002, c = 1);
coordination level (number of query terms present, a Boolean OR ranking);
RM3 pseudo-relevance feedback over BM25 (10 docs, 20 terms, weight 0.5);
LSI (100 dims); LDA-based document model (20 topics); random projection of
TF-IDF (256 dims, cosine). The BM25, TF-IDF, QL Dirichlet, LSI and LDA models
are those of ``hsa_efficiency.py``.

Run from the repository root::

    python benchmarks/content_runs.py [--data ../shared/data] [--only cf,med]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import hsa_efficiency as he  # noqa: E402

from fasteval.io.classic import load  # noqa: E402
from fasteval.io.collection import from_texts, write_collection  # noqa: E402

COLLECTIONS = ("cf", "cranfield", "cisi", "cacm", "med", "npl", "lisa")
OUT = REPO / "benchmarks" / "data" / "content"


class Scores:
    """A model as a function of query indices -> dense (n_queries, n_docs) scores."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def all(self, qs: np.ndarray) -> np.ndarray:
        return np.asarray(self.fn(qs))


def _idf(X: sp.csr_matrix) -> tuple[np.ndarray, int]:
    df = np.bincount(X.indices, minlength=X.shape[1]).astype(np.float64)
    return df, X.shape[0]


def tf_dot(ix: he.Index) -> he.SparseDot:
    """Raw term-frequency dot product (no idf, no length normalisation)."""
    return he.SparseDot(ix.X, ix.Q)


def pivoted(ix: he.Index, s: float = 0.2) -> he.SparseDot:
    """Pivoted-normalisation TF-IDF: (1 + ln(1 + ln tf)) / ((1 - s) + s dl/avgdl) * ln((N+1)/df)."""
    X = ix.X.tocsr(copy=True)
    df, n = _idf(X)
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    norm = (1 - s) + s * ix.dl / ix.dl.mean()
    X.data = (1 + np.log1p(np.log(X.data))) / norm[rows] * np.log((n + 1) / df[X.indices])
    return he.SparseDot(X, ix.Q)


def ql_jm(ix: he.Index, lam: float) -> he.SparseDot:
    """Query likelihood, Jelinek-Mercer (rank-equivalent form).

    sum qtf log(1 + (1-lam) tf/dl / (lam p_t))
    """
    X = ix.X.tocsr(copy=True)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    X.data = np.log1p((1 - lam) * X.data / ix.dl[rows] / (lam * ix.p_t[X.indices]))
    return he.SparseDot(X, ix.Q)


def dfr_inl2(ix: he.Index, c: float = 1.0) -> he.SparseDot:
    """DFR InL2: tfn = tf log2(1 + c avgdl/dl); sum qtf tfn/(tfn+1) log2((N+1)/(df+0.5))."""
    X = ix.X.tocsr(copy=True)
    df, n = _idf(X)
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    tfn = X.data * np.log2(1 + c * ix.dl.mean() / ix.dl[rows])
    X.data = tfn / (tfn + 1) * np.log2((n + 1) / (df[X.indices] + 0.5))
    return he.SparseDot(X, ix.Q)


def coordination(ix: he.Index) -> he.SparseDot:
    """Coordination level: how many distinct query terms the document contains."""
    X = ix.X.tocsr(copy=True)
    X.data = np.ones_like(X.data)
    Q = ix.Q.tocsr(copy=True)
    Q.data = np.ones_like(Q.data)
    return he.SparseDot(X, Q)


def rm3(ix: he.Index, fb_docs: int = 10, fb_terms: int = 20, weight: float = 0.5) -> Scores:
    """RM3 over BM25 (k1 1.2, b 0.75): expand each query with its feedback docs' top terms."""
    base = he.bm25(ix, 1.2, 0.75)
    P = sp.diags(1.0 / np.maximum(ix.dl, 1)) @ ix.X  # p(t|d)

    def fn(qs: np.ndarray) -> np.ndarray:
        s = base.all(qs)
        out = np.empty_like(s)
        for r, q in enumerate(qs):
            top = np.argsort(-s[r], kind="stable")[:fb_docs]
            w = np.exp(s[r, top] - s[r, top].max())
            rm = np.asarray(P[top].T @ w).ravel()
            keep = np.argsort(-rm, kind="stable")[:fb_terms]
            exp_q = np.zeros(ix.X.shape[1])
            exp_q[keep] = rm[keep] / rm[keep].sum()
            qv = ix.Q[q].toarray().ravel()
            qv = qv / max(qv.sum(), 1e-12)
            mixed = sp.csr_matrix((1 - weight) * qv + weight * exp_q)
            out[r] = (mixed @ base.WT).toarray().ravel()
        return out

    return Scores(fn)


def random_projection(ix: he.Index, dims: int, seed: int) -> he.Dense:
    """Gaussian random projection of TF-IDF vectors, cosine."""
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.random_projection import GaussianRandomProjection

    t = TfidfTransformer(sublinear_tf=True).fit(ix.X)
    rp = GaussianRandomProjection(n_components=dims, random_state=seed)
    D = rp.fit_transform(t.transform(ix.X))
    return he.Dense(np.asarray(D), np.asarray(rp.transform(t.transform(ix.Q))))


def models(ix: he.Index, seed: int) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k1, b in [(0.9, 0.4), (1.2, 0.75), (2.0, 0.75), (1.2, 0.3), (0.5, 1.0)]:
        out.append((f"bm25_k{k1}_b{b}", lambda k1=k1, b=b: he.bm25(ix, k1, b)))
    out.append(("tfidf_cosine", lambda: he.tfidf_cosine(ix)))
    out.append(("tf_dot", lambda: tf_dot(ix)))
    out.append(("tfidf_pivoted", lambda: pivoted(ix)))
    for mu in (500, 2000):
        out.append((f"ql_dir_{mu}", lambda mu=mu: he.ql_dirichlet(ix, mu)))
    for lam in (0.1, 0.7):
        out.append((f"ql_jm_{lam}", lambda lam=lam: ql_jm(ix, lam)))
    out.append(("dfr_inl2", lambda: dfr_inl2(ix)))
    out.append(("coordination", lambda: coordination(ix)))
    out.append(("rm3_bm25", lambda: rm3(ix)))
    out.append(("lsi_100", lambda: he.lsi(ix, 100, seed)))
    out.append(("lda_20", lambda: he.lda(ix, 20, seed)))
    out.append(("randproj_256", lambda: random_projection(ix, 256, seed)))
    return out


def write_run(
    path: Path, tag: str, qids: list[str], doc_ids: np.ndarray, S: np.ndarray, depth: int
) -> None:
    lines = []
    for r, q in enumerate(qids):
        s = S[r]
        top = np.argsort(-s, kind="stable")[:depth]
        for rank, d in enumerate(top, start=1):
            lines.append(f"{q} Q0 {doc_ids[d]} {rank} {s[d]:.8g} {tag}")
    path.write_text("\n".join(lines) + "\n")


def build(name: str, data: Path, depth: int, seed: int) -> None:
    c = load(data / "classic", name)
    out = OUT / name
    (out / "runs").mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    write_collection(
        from_texts(c.doc_ids, c.texts, source=f"classic:{name}"), out / "collection.parquet"
    )
    with open(out / "qrels.txt", "w") as f:
        for q, d, g in c.qrels:
            f.write(f"{q} 0 {d} {g}\n")
    qids = list(c.queries)
    ix = he.build_index(c.texts, [c.queries[q] for q in qids])
    doc_ids = np.array(c.doc_ids, dtype=object)
    qs = np.arange(len(qids))
    for tag, make in models(ix, seed):
        t = time.perf_counter()
        m = make()
        S = np.vstack([m.all(qs[i : i + 32]) for i in range(0, len(qs), 32)])
        write_run(
            out / "runs" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tag)}.run",
            tag,
            qids,
            doc_ids,
            S,
            depth,
        )
        print(f"  {name} {tag}: {time.perf_counter() - t:.1f} s", flush=True)
    print(f"{name}: {len(c.doc_ids)} docs, {len(qids)} queries, {time.perf_counter() - t0:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--only", default=",".join(COLLECTIONS))
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for name in args.only.split(","):
        build(name.strip(), args.data, args.depth, args.seed)


if __name__ == "__main__":
    main()
