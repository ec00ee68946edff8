"""Does HSA rank retrieval models like MAP does, at a fraction of the cost? (issue 5)

For each classic collection (``../shared/data/classic``; readers and format
notes in ``classic_collections.py``) and each retrieval model built with
scikit-learn / scipy.sparse:

(a) full ranking: score every document for every query, keep the top 1000,
    evaluate MAP, NDCG and P@10 with ``fasteval.evaluate``;
(b) histogram analysis: score only each query's relevant documents plus a
    seeded sample of ``s`` non-relevant ones (s = 10, 50, 100, all), then
    DO / HSA with ``fasteval.analysis.hsa.histogram_arrays`` (scores,
    min-max per query, 20 bins, pooled).

Both are timed from the query vectors to the numbers (scoring included; the
index / model fit that both need is timed apart). Non-relevant = every
document not judged relevant for the query (the classic collections only
list relevant documents; Cranfield's -1 code is non-relevant too).

Models: BM25 at several (k1, b); TF-IDF cosine (sublinear tf); query
likelihood with Dirichlet smoothing at several mu; LSI (TruncatedSVD of the
TF-IDF matrix) at several ranks, cosine; LDA (LatentDirichletAllocation) at a
few topic counts, as the LDA-based document model of Wei & Croft (2006):
p(t|d) = lambda * p_Dir(t|d) + (1 - lambda) * sum_z p(t|z) p(z|d), lambda = 0.7, mu = 1000.

Then per collection Pearson and Spearman of HSA and DO against MAP, NDCG and
P@10 across the models, a CSV, figures, and the speed-up as the collection
grows (NPL padded with copies of documents relevant to no query, BM25 only,
up to ``--max-docs``).

Run from the repository root (once; it takes minutes on 2 cores)::

    python benchmarks/hsa_efficiency.py [--data ../shared/data] [--out benchmarks/figures]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import classic_collections as cc  # noqa: E402

import fasteval  # noqa: E402
from fasteval.analysis.correlation import pearson, spearman  # noqa: E402
from fasteval.analysis.hsa import histogram_arrays  # noqa: E402

SAMPLES: list[int | None] = [10, 50, 100, None]  # None = all non-relevant documents
MEASURES = ["map", "ndcg", "P_10"]
DEPTH = 1000
QBLOCK = 16  # queries scored at once in the full ranking (bounds memory on big collections)


# ----------------------------------------------------------------- models


@dataclass
class Index:
    """What every model needs: term counts of documents and queries."""

    X: sp.csr_matrix  # docs x terms, counts
    Q: sp.csr_matrix  # queries x terms, counts
    dl: np.ndarray
    p_t: np.ndarray  # collection language model


def build_index(texts: list[str], queries: list[str]) -> Index:
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(stop_words="english", dtype=np.float64)
    X = vec.fit_transform(texts).tocsr()
    Q = vec.transform(queries).tocsr()
    dl = np.asarray(X.sum(1)).ravel()
    cf = np.asarray(X.sum(0)).ravel()
    return Index(X, Q, dl, cf / cf.sum())


def _rowdot(W: sp.csr_matrix, Qm: sp.csr_matrix, qi: np.ndarray, di: np.ndarray) -> np.ndarray:
    """score_i = W[di_i] . Qm[qi_i] for each (query, doc) pair."""
    return np.asarray(W[di].multiply(Qm[qi]).sum(1)).ravel()


class SparseDot:
    """score(q, d) = Qm[q] . W[d] (+ a per-(q, d) length term)."""

    def __init__(self, W: sp.csr_matrix, Qm: sp.csr_matrix, qlen=None, dterm=None) -> None:
        self.W = W.tocsr()
        self.Qm = Qm.tocsr()
        self.WT = self.W.T.tocsr()
        self.qlen = qlen
        self.dterm = dterm

    def all(self, qs: np.ndarray) -> np.ndarray:
        s = (self.Qm[qs] @ self.WT).toarray()
        if self.qlen is not None:
            s += self.qlen[qs][:, None] * self.dterm[None, :]
        return s

    def pairs(self, qi: np.ndarray, di: np.ndarray) -> np.ndarray:
        s = _rowdot(self.W, self.Qm, qi, di)
        if self.qlen is not None:
            s += self.qlen[qi] * self.dterm[di]
        return s


def bm25(ix: Index, k1: float, b: float) -> SparseDot:
    """BM25, Lucene idf: sum_t qtf idf tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))."""
    X = ix.X.tocsr(copy=True)
    n = X.shape[0]
    df = np.bincount(X.indices, minlength=X.shape[1])
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * ix.dl / ix.dl.mean())
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    tf = X.data
    X.data = idf[X.indices] * tf * (k1 + 1) / (tf + norm[rows])
    return SparseDot(X, ix.Q)


def tfidf_cosine(ix: Index) -> SparseDot:
    from sklearn.feature_extraction.text import TfidfTransformer

    t = TfidfTransformer(sublinear_tf=True).fit(ix.X)
    return SparseDot(t.transform(ix.X), t.transform(ix.Q))


def ql_dirichlet(ix: Index, mu: float) -> SparseDot:
    """Query likelihood, Dirichlet prior (Zhai & Lafferty 2001), rank-equivalent form:
    sum_{t in q, d} qtf log(1 + tf / (mu p_t)) + |q| log(mu / (dl + mu))."""
    X = ix.X.tocsr(copy=True)
    X.data = np.log1p(X.data / (mu * ix.p_t[X.indices]))
    qlen = np.asarray(ix.Q.sum(1)).ravel()
    return SparseDot(X, ix.Q, qlen, np.log(mu / (ix.dl + mu)))


class Dense:
    """score(q, d) = E_q . E_d for row-normalised embeddings (cosine)."""

    def __init__(self, D: np.ndarray, Qe: np.ndarray) -> None:
        self.D = D / np.maximum(np.linalg.norm(D, axis=1, keepdims=True), 1e-12)
        self.Qe = Qe / np.maximum(np.linalg.norm(Qe, axis=1, keepdims=True), 1e-12)

    def all(self, qs: np.ndarray) -> np.ndarray:
        return self.Qe[qs] @ self.D.T

    def pairs(self, qi: np.ndarray, di: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->i", self.D[di], self.Qe[qi])


def lsi(ix: Index, k: int, seed: int) -> Dense:
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfTransformer

    t = TfidfTransformer(sublinear_tf=True).fit(ix.X)
    svd = TruncatedSVD(n_components=min(k, ix.X.shape[1] - 1), random_state=seed)
    D = svd.fit_transform(t.transform(ix.X))
    return Dense(D, svd.transform(t.transform(ix.Q)))


class LBDM:
    """LDA-based document model (Wei & Croft 2006), log p(q|d) = sum qtf log p(t|d)."""

    def __init__(
        self,
        ix: Index,
        theta: np.ndarray,
        phi: np.ndarray,
        cols: np.ndarray,
        mu: float = 1000.0,
        lam: float = 0.7,
    ) -> None:
        self.X = ix.X.tocsc()
        self.Q = ix.Q
        self.dl = ix.dl
        self.p_t = ix.p_t
        self.theta = theta
        # p(t|z) over the full vocabulary (0 for terms outside the LDA vocabulary)
        self.phi = np.zeros((phi.shape[0], ix.X.shape[1]))
        self.phi[:, cols] = phi
        self.mu = mu
        self.lam = lam

    def _score(self, q: int, docs: np.ndarray | None) -> np.ndarray:
        row = self.Q[q]
        terms, qtf = row.indices, row.data
        Xt = self.X[:, terms]
        if docs is not None:
            Xt = Xt[docs]
        tf = Xt.toarray()
        dl = self.dl if docs is None else self.dl[docs]
        th = self.theta if docs is None else self.theta[docs]
        p_dir = (tf + self.mu * self.p_t[terms]) / (dl[:, None] + self.mu)
        p_lda = th @ self.phi[:, terms]
        return np.log(self.lam * p_dir + (1 - self.lam) * p_lda) @ qtf

    def all(self, qs: np.ndarray) -> np.ndarray:
        return np.vstack([self._score(int(q), None) for q in qs])

    def pairs(self, qi: np.ndarray, di: np.ndarray) -> np.ndarray:
        out = np.empty(qi.shape[0])
        # pairs come grouped by query
        cut = np.flatnonzero(np.diff(qi)) + 1
        for a, b in zip(np.r_[0, cut], np.r_[cut, qi.shape[0]], strict=True):
            out[a:b] = self._score(int(qi[a]), di[a:b])
        return out


def lda(ix: Index, k: int, seed: int) -> LBDM:
    from sklearn.decomposition import LatentDirichletAllocation

    df = np.bincount(ix.X.indices, minlength=ix.X.shape[1])
    cols = np.flatnonzero(df >= 2)
    m = LatentDirichletAllocation(
        n_components=k, learning_method="online", max_iter=10, random_state=seed, n_jobs=1
    )
    theta = m.fit_transform(ix.X[:, cols])
    phi = m.components_ / m.components_.sum(1, keepdims=True)
    return LBDM(ix, theta, phi, cols)


def models(ix: Index, seed: int, lite: bool) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k1, b in [(0.9, 0.4), (1.2, 0.75), (2.0, 0.75), (1.2, 0.3), (0.5, 1.0)]:
        out.append((f"BM25 k1={k1} b={b}", lambda k1=k1, b=b: bm25(ix, k1, b)))
    out.append(("TF-IDF cosine", lambda: tfidf_cosine(ix)))
    for mu in [100, 500, 2000, 5000]:
        out.append((f"QL Dirichlet mu={mu}", lambda mu=mu: ql_dirichlet(ix, mu)))
    if not lite:
        for k in [50, 100, 200]:
            out.append((f"LSI k={k}", lambda k=k: lsi(ix, k, seed)))
        for k in [20, 50]:
            out.append((f"LDA k={k}", lambda k=k: lda(ix, k, seed)))
    return out


# ----------------------------------------------------------------- the two ways


@dataclass
class Judged:
    qids: list[str]  # judged queries (in Q's row order)
    rel: list[np.ndarray]  # relevant doc indices per query
    qrels: pl.DataFrame  # for fasteval.evaluate (graded)


def judged(c: cc.Collection, doc_index: dict[str, int]) -> Judged:
    qids = list(c.queries)
    rel = [
        np.array(sorted({doc_index[d] for q2, d, g in c.qrels if q2 == q and g >= 1}), np.int64)
        for q in qids
    ]
    qrels = pl.DataFrame(
        {
            "query_id": [q for q, _, _ in c.qrels],
            "doc_id": [d for _, d, _ in c.qrels],
            "relevance": [g for _, _, g in c.qrels],
        },
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
    )
    return Judged(qids, rel, qrels)


def full_ranking(model: Any, j: Judged, doc_ids: np.ndarray) -> dict[str, float]:
    """Score everything, top 1000 per query, fasteval MAP / NDCG / P@10."""
    n_q = len(j.qids)
    qcol, dcol, scol = [], [], []
    for a in range(0, n_q, QBLOCK):
        qs = np.arange(a, min(a + QBLOCK, n_q))
        S = model.all(qs)
        k = min(DEPTH, S.shape[1])
        top = (
            np.argpartition(-S, k - 1, axis=1)[:, :k]
            if k < S.shape[1]
            else np.tile(np.arange(S.shape[1]), (len(qs), 1))
        )
        for r, q in enumerate(qs):
            t = top[r]
            qcol.append(np.full(t.shape[0], q))
            dcol.append(t)
            scol.append(S[r, t])
    qq = np.concatenate(qcol)
    run = pl.DataFrame(
        {
            "run_id": pl.Series(["m"] * qq.shape[0], dtype=pl.String),
            "query_id": pl.Series(np.asarray(j.qids, dtype=object)[qq].tolist(), dtype=pl.String),
            "doc_id": pl.Series(doc_ids[np.concatenate(dcol)].tolist(), dtype=pl.String),
            "score": np.concatenate(scol),
        }
    )
    ev = fasteval.evaluate(j.qrels, run, MEASURES, per_query=False)
    return dict(zip(ev["measure"].to_list(), ev["value"].to_list(), strict=True))


def sample_pairs(j: Judged, n_docs: int, s: int | None, seed: int):
    """(query, doc, label) of relevant docs + s sampled non-relevant per query, grouped by query."""
    rng = np.random.default_rng(seed)
    qi, di, lab, off = [], [], [], [0]
    for q, rel in enumerate(j.rel):
        if s is None:
            non = np.setdiff1d(np.arange(n_docs), rel, assume_unique=True)
        else:
            # rejection-free: draw from [0, n - |rel|) and skip over the relevant indices
            m = min(s, n_docs - rel.shape[0])
            x = np.sort(rng.choice(n_docs - rel.shape[0], size=m, replace=False))
            non = x + np.searchsorted(rel - np.arange(rel.shape[0]), x, side="right")
        docs = np.concatenate([rel, non])
        qi.append(np.full(docs.shape[0], q))
        di.append(docs)
        lab.append(np.r_[np.ones(rel.shape[0], np.int8), np.zeros(non.shape[0], np.int8)])
        off.append(off[-1] + docs.shape[0])
    return np.concatenate(qi), np.concatenate(di), np.concatenate(lab), np.array(off)


def hsa_way(model: Any, j: Judged, n_docs: int, s: int | None, seed: int) -> tuple[float, float]:
    qi, di, lab, off = sample_pairs(j, n_docs, s, seed)
    h = histogram_arrays(model.pairs(qi, di), lab, off, bins=20, normalize="query")
    return float(h.hsa[0]), float(h.do[0])


def timed(fn, reps: int):
    """Median wall time of ``reps`` calls after one untimed warm-up call (numba, caches)."""
    out = fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return out, statistics.median(ts)


# ----------------------------------------------------------------- experiment


def run_collection(c: cc.Collection, seed: int, reps: int, lite: bool) -> list[dict[str, Any]]:
    doc_index = {d: i for i, d in enumerate(c.doc_ids)}
    doc_ids = np.asarray(c.doc_ids, dtype=object)
    t0 = time.perf_counter()
    ix = build_index(c.texts, list(c.queries.values()))
    t_index = time.perf_counter() - t0
    j = judged(c, doc_index)
    rows = []
    for name, make in models(ix, seed, lite):
        t0 = time.perf_counter()
        model = make()
        t_fit = time.perf_counter() - t0
        ms, t_full = timed(lambda m=model: full_ranking(m, j, doc_ids), reps)
        row = {
            "collection": c.name,
            "docs": len(c.doc_ids),
            "queries": len(j.qids),
            "model": name,
            "index_s": t_index,
            "fit_s": t_fit,
            "full_s": t_full,
            **ms,
        }
        for s in SAMPLES:
            (hsa, do), t = timed(lambda s=s, m=model: hsa_way(m, j, len(c.doc_ids), s, seed), reps)
            tag = "all" if s is None else str(s)
            row[f"hsa_{tag}"] = hsa
            row[f"do_{tag}"] = do
            row[f"hsa_s_{tag}"] = t
        rows.append(row)
        print(
            f"  {c.name:10s} {name:22s} map {ms['map']:.4f} hsa100 {row['hsa_100']:.3f} "
            f"full {t_full * 1000:.1f} ms, hsa(100) {row['hsa_s_100'] * 1000:.1f} ms",
            flush=True,
        )
    return rows


LEXICAL = ("BM25", "TF-IDF", "QL")


def correlations(df: pl.DataFrame, lexical_only: bool = False) -> pl.DataFrame:
    """Pearson / Spearman of HSA and DO against each measure, across the models of a collection."""
    if lexical_only:
        df = df.filter(pl.any_horizontal(pl.col("model").str.starts_with(f) for f in LEXICAL))
    out = []
    for (coll,), g in df.group_by("collection", maintain_order=True):
        for s in SAMPLES:
            tag = "all" if s is None else str(s)
            for stat in ("hsa", "do"):
                x = g[f"{stat}_{tag}"].to_numpy()
                rec: dict[str, Any] = {"collection": coll, "stat": stat.upper(), "s": tag}
                for m in MEASURES:
                    y = g[m].to_numpy()
                    ok = np.isfinite(x) & np.isfinite(y)
                    rec[f"{m}_pearson"] = pearson(x[ok], y[ok]) if ok.sum() >= 3 else np.nan
                    rec[f"{m}_spearman"] = spearman(x[ok], y[ok]) if ok.sum() >= 3 else np.nan
                out.append(rec)
    return pl.DataFrame(out)


def scaling(c: cc.Collection, sizes: list[int], seed: int, reps: int) -> list[dict[str, Any]]:
    """NPL padded with copies of documents relevant to no query; BM25 (1.2, 0.75)."""
    rng = np.random.default_rng(seed)
    ix0 = build_index(c.texts, list(c.queries.values()))
    doc_index = {d: i for i, d in enumerate(c.doc_ids)}
    j = judged(c, doc_index)
    relevant_any = np.unique(np.concatenate(j.rel))
    pool = np.setdiff1d(np.arange(len(c.doc_ids)), relevant_any)
    rows = []
    for n in sizes:
        extra = rng.choice(pool, size=max(0, n - len(c.doc_ids)), replace=True)
        X = sp.vstack([ix0.X, ix0.X[extra]]).tocsr() if extra.size else ix0.X
        dl = np.asarray(X.sum(1)).ravel()
        cf = np.asarray(X.sum(0)).ravel()
        ix = Index(X, ix0.Q, dl, cf / cf.sum())
        ids = np.asarray(c.doc_ids + [f"x{i}" for i in range(extra.size)], dtype=object)
        model = bm25(ix, 1.2, 0.75)
        ms, t_full = timed(lambda m=model, ids=ids: full_ranking(m, j, ids), reps)
        row = {"docs": X.shape[0], "nnz": X.nnz, "full_s": t_full, "map": ms["map"]}
        for s in (100, 1000):
            nd = X.shape[0]
            (hsa, _), t = timed(lambda s=s, m=model, nd=nd: hsa_way(m, j, nd, s, seed), reps)
            row[f"hsa_s_{s}"] = t
            row[f"hsa_{s}"] = hsa
        rows.append(row)
        print(
            f"  scale {X.shape[0]:>9,} docs: full {t_full:.3f} s, "
            f"hsa(100) {row['hsa_s_100']:.4f} s",
            flush=True,
        )
    return rows


# ----------------------------------------------------------------- figures


def figures(df: pl.DataFrame, scale: pl.DataFrame, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colls = df["collection"].unique(maintain_order=True).to_list()
    nc = 3
    nr = (len(colls) + nc - 1) // nc
    fig, axes = plt.subplots(nr, nc, figsize=(12, 3.4 * nr), squeeze=False)
    fam_color = {
        "BM25": "tab:blue",
        "TF-IDF": "tab:orange",
        "QL": "tab:green",
        "LSI": "tab:red",
        "LDA": "tab:purple",
    }
    for ax, coll in zip(axes.ravel(), colls, strict=False):
        g = df.filter(pl.col("collection") == coll)
        for fam, col in fam_color.items():
            h = g.filter(pl.col("model").str.starts_with(fam))
            if h.height:
                ax.scatter(h["hsa_100"], h["map"], c=col, label=fam, s=22)
        x = g["hsa_100"].to_numpy()
        y = g["map"].to_numpy()
        ok = np.isfinite(x) & np.isfinite(y)
        r = spearman(x[ok], y[ok]) if ok.sum() >= 3 else np.nan
        ax.set_title(f"{coll}: Spearman {r:.2f}")
        ax.set_xlabel("HSA (s = 100)")
        ax.set_ylabel("MAP (top 1000)")
    for ax in axes.ravel()[len(colls) :]:
        ax.axis("off")
    axes[0, 0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out / "hsa_vs_map.png", dpi=80)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(scale["docs"], scale["full_s"], "o-", label="full ranking + MAP")
    ax.loglog(scale["docs"], scale["hsa_s_100"], "s-", label="HSA, s = 100")
    ax.loglog(scale["docs"], scale["hsa_s_1000"], "^-", label="HSA, s = 1000")
    ax2 = ax.twinx()
    ax2.semilogx(
        scale["docs"], scale["full_s"] / scale["hsa_s_100"], "k--", label="speed-up (s=100)"
    )
    ax2.set_ylabel("speed-up (s = 100)")
    ax.set_xlabel("documents (NPL padded)")
    ax.set_ylabel("seconds (93 queries, BM25)")
    ax.legend(loc="upper left", fontsize="small")
    ax2.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(out / "hsa_speedup_scaling.png", dpi=80)
    plt.close(fig)


# ----------------------------------------------------------------- report


def report(df: pl.DataFrame, corr: pl.DataFrame, scale: pl.DataFrame, args: Any) -> str:
    L = []
    L.append("Correlation across the models of each collection (Pearson / Spearman):\n")
    L.append(
        "| collection | models | stat | s | MAP P | MAP S | NDCG P | NDCG S | P@10 P | P@10 S |"
    )
    L.append("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    nmod = dict(df.group_by("collection").len().iter_rows())
    for r in corr.iter_rows(named=True):
        L.append(
            f"| {r['collection']} | {nmod[r['collection']]} | {r['stat']} | {r['s']} | "
            + " | ".join(f"{r[f'{m}_{k}']:.2f}" for m in MEASURES for k in ("pearson", "spearman"))
            + " |"
        )
    L.append(
        "\nTime per model (median of the repetitions; scoring included, model fit excluded):\n"
    )
    L.append(
        "| collection | docs | queries | model | MAP | HSA s=100 | full ranking + eval ms | "
        "HSA s=10 ms | s=100 ms | s=all ms | speed-up s=100 | fit s |"
    )
    L.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in df.iter_rows(named=True):
        L.append(
            f"| {r['collection']} | {r['docs']:,} | {r['queries']} | {r['model']} | "
            f"{r['map']:.4f} | "
            f"{r['hsa_100']:.3f} | {r['full_s'] * 1e3:.1f} | {r['hsa_s_10'] * 1e3:.1f} | "
            f"{r['hsa_s_100'] * 1e3:.1f} | {r['hsa_s_all'] * 1e3:.1f} | "
            f"{r['full_s'] / r['hsa_s_100']:.1f} | {r['fit_s']:.2f} |"
        )
    lex = correlations(df, lexical_only=True).filter(pl.col("s") == "100")
    L.append("\nLexical models only (BM25 x 5, TF-IDF, QL x 4 = 10 models), s = 100:\n")
    L.append("| collection | stat | MAP P | MAP S | NDCG P | NDCG S | P@10 P | P@10 S |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in lex.iter_rows(named=True):
        L.append(
            f"| {r['collection']} | {r['stat']} | "
            + " | ".join(f"{r[f'{m}_{k}']:.2f}" for m in MEASURES for k in ("pearson", "spearman"))
            + " |"
        )
    if scale.height:
        L.append(
            "\nSpeed-up as the collection grows (NPL + copies of documents relevant to no "
            "query; BM25 k1=1.2 b=0.75; 93 queries):\n"
        )
        L.append(
            "| docs | postings | full ranking + eval s | HSA s=100 s | speed-up | HSA s=1000 s | "
            "speed-up | MAP | HSA s=100 |"
        )
        L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in scale.iter_rows(named=True):
            L.append(
                f"| {r['docs']:,} | {r['nnz']:,} | {r['full_s']:.3f} | {r['hsa_s_100']:.4f} | "
                f"{r['full_s'] / r['hsa_s_100']:.0f} | {r['hsa_s_1000']:.4f} | "
                f"{r['full_s'] / r['hsa_s_1000']:.0f} | {r['map']:.4f} | {r['hsa_100']:.3f} |"
            )
    return "\n".join(L)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("FASTEVAL_SHARED_DATA", REPO.parent / "shared" / "data")),
    )
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "figures")
    ap.add_argument("--collections", default=",".join(cc.READERS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20251122)
    ap.add_argument("--lite", action="store_true", help="lexical models only (no LSI / LDA)")
    ap.add_argument(
        "--scale",
        default="11429,50000,100000,300000,1000000",
        help="collection sizes for the scaling run ('' to skip)",
    )
    ap.add_argument(
        "--from-csv",
        action="store_true",
        help="only re-print the report from the CSV files of an earlier run in --out",
    )
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    if a.from_csv:
        df = pl.read_csv(a.out / "hsa_efficiency_models.csv")
        sc = a.out / "hsa_efficiency_scaling.csv"
        scale = pl.read_csv(sc) if sc.exists() else pl.DataFrame()
        print(report(df, correlations(df), scale, a))
        return
    root = a.data / "classic"
    rows = []
    for name in a.collections.split(","):
        c = cc.load(root, name)
        print(f"{c.name}: {len(c.doc_ids)} docs, {len(c.queries)} judged queries", flush=True)
        rows += run_collection(c, a.seed, a.reps, a.lite)
    df = pl.DataFrame(rows)
    corr = correlations(df)
    scale_rows = []
    if a.scale:
        sizes = [int(x) for x in a.scale.split(",")]
        scale_rows = scaling(cc.load(root, "npl"), sizes, a.seed, a.reps)
    scale = pl.DataFrame(scale_rows)
    df.write_csv(a.out / "hsa_efficiency_models.csv")
    corr.write_csv(a.out / "hsa_efficiency_correlations.csv", float_precision=4)
    if scale.height:
        scale.write_csv(a.out / "hsa_efficiency_scaling.csv")
        figures(df, scale, a.out)
    print()
    print(report(df, corr, scale, a))
    print(f"\npeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
