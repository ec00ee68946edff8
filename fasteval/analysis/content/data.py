"""Content layer, joined data: qrels, runs and collection read once and joined.

:class:`ContentData` is the input of every content computation (models,
measures, completion, selection); :func:`ensure_depth` looks ranked documents
up in the collection lazily, as deep as a reader needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval.engine import Prepared, QrelsLike, RunsLike, prepare
from fasteval.engine.encode import Encoded
from fasteval.io.collection import Collection, read_collection
from fasteval.io.diversity import load_diversity_qrels
from fasteval.io.tables import load_qrels
from fasteval.kernels import content as kc

NOT_LOOKED_UP = -2


@dataclass
class ContentData:
    """Qrels, runs and collection joined once: the input of every content computation.

    Attributes
    ----------
    prep
        Prepared qrels and runs (ad-hoc view: a document's grade is its
        highest grade over the subtopics).
    coll
        The collection.
    pos_doc
        ``int32`` collection row of the document at every ranked position
        (``prep.enc.rel`` order), ``-1`` when it is not in the collection,
        ``-2`` where not looked up yet (see :func:`ensure_depth`).
    jdoc
        ``int32`` collection row of every judgment (``prep.enc.qr_rel`` order).
    sub_j, sub_s, sub_rel
        Subtopic judgments: judgment index, subtopic code and grade (ad-hoc
        qrels: one subtopic 0 with the judgment's grade).
    subtopic_names
        Label of every subtopic code.
    relevance_level
        A grade ``>= relevance_level`` is relevant.
    """

    prep: Prepared
    coll: Collection
    pos_doc: np.ndarray
    jdoc: np.ndarray
    sub_j: np.ndarray
    sub_s: np.ndarray
    sub_rel: np.ndarray
    subtopic_names: list[str]
    relevance_level: int = 1
    doc_len: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    coll_p: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    jquery: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    has_subtopics: bool = False
    # result models of rankings and pools, reused across qrels variants
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)
    # per evaluated group: how many leading positions have been looked up in the collection
    looked: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    depth_ready: int = 0

    @property
    def enc(self) -> Encoded:
        """The encoded rankings and judgments."""
        return self.prep.enc

    def kernel_docs(self) -> kc.Docs:
        """The collection as the kernels take it (its CSR arrays read-only, see Collection)."""
        coll = self.coll
        return kc.Docs(coll.doc_off, coll.terms, coll.counts, self.doc_len, self.coll_p)


def _read_qrels_frame(qrels: QrelsLike, diversity: bool) -> tuple[pl.DataFrame, bool]:
    """Qrels as ``query_id, doc_id, relevance[, subtopic]``."""
    if isinstance(qrels, pl.DataFrame):
        df = qrels
    elif diversity:
        df = load_diversity_qrels(qrels)
    else:
        df = load_qrels(qrels)
    has_sub = "subtopic" in df.columns
    return df, has_sub


def prepare_content(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    *,
    diversity: bool = False,
    relevance_level: int = 1,
    compat: int = 9,
    on_duplicate: str = "error",
    prepared: Prepared | None = None,
) -> ContentData:
    """Read qrels, runs and the collection once and join them (see :class:`ContentData`).

    Parameters
    ----------
    qrels
        Ad-hoc qrels, or diversity qrels (``query_id, subtopic, doc_id,
        relevance``) when ``diversity`` is true or the frame has ``subtopic``.
    runs
        As for :func:`fasteval.evaluate`.
    collection
        Anything :func:`fasteval.io.collection.read_collection` reads.
    prepared
        Reuse qrels and runs already prepared from the ad-hoc qrels.
    """
    coll = read_collection(collection)
    if prepared is None:
        prep, qdf, has_sub = _prepare_adhoc(qrels, runs, diversity, compat, on_duplicate)
    else:
        prep, has_sub = prepared, False
        qdf = pl.DataFrame()
    enc = prep.enc
    # ranked documents are looked up in the collection lazily, as deep as a measure reads
    pos_doc = np.full(enc.rel.shape[0], NOT_LOOKED_UP, np.int32)
    jdoc = np.ascontiguousarray(coll.index_of(prep.qrels.doc.take(enc.qr_rows)), np.int32)
    names, sub_j, sub_s, sub_rel = _subtopic_judgments(prep, qdf if has_sub else None)
    return ContentData(
        prep=prep,
        coll=coll,
        pos_doc=pos_doc,
        jdoc=jdoc,
        sub_j=sub_j,
        sub_s=sub_s,
        sub_rel=sub_rel,
        subtopic_names=[str(x) for x in names],
        relevance_level=relevance_level,
        doc_len=coll.doc_len,
        coll_p=coll.collection_lm,
        jquery=np.repeat(np.arange(enc.qr_off.shape[0] - 1), np.diff(enc.qr_off)),
        has_subtopics=has_sub,
        looked=np.zeros(enc.starts.shape[0], np.int64),
    )


def _prepare_adhoc(
    qrels: QrelsLike, runs: RunsLike, diversity: bool, compat: int, on_duplicate: str
) -> tuple[Prepared, pl.DataFrame, bool]:
    """Qrels and runs prepared in the ad-hoc view, the qrels frame, and whether it has subtopics.

    The ad-hoc grade of a document is its highest grade over the subtopics.
    """
    qdf, has_sub = _read_qrels_frame(qrels, diversity)
    if has_sub:
        adhoc = qdf.group_by(["query_id", "doc_id"], maintain_order=True).agg(
            pl.col("relevance").max()
        )
    else:
        adhoc = qdf.select("query_id", "doc_id", "relevance")
    return prepare(adhoc, runs, compat=compat, on_duplicate=on_duplicate), qdf, has_sub


def _subtopic_judgments(
    prep: Prepared, qdf: pl.DataFrame | None
) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
    """Subtopic labels, and per subtopic judgment its judgment index, subtopic code and grade.

    ``qdf`` holds the diversity qrels rows; without it (ad-hoc qrels) every
    judgment is one judgment of subtopic ``"0"`` with its grade.
    """
    enc = prep.enc
    n_j = enc.qr_rel.shape[0]
    if qdf is None:
        sub_j = np.arange(n_j, dtype=np.int64)
        return ["0"], sub_j, np.zeros(n_j, np.int32), enc.qr_rel.astype(np.int32)
    # subtopic rows -> judgment index by (query, doc)
    jq = pl.Series(prep.qrels.qid.take(enc.qr_rows)).cast(pl.String)
    jd = pl.Series(prep.qrels.doc.take(enc.qr_rows)).cast(pl.String)
    jt = pl.DataFrame({"query_id": jq, "doc_id": jd, "j": np.arange(n_j, dtype=np.int64)})
    sub_lab = qdf["subtopic"].cast(pl.String)
    names = sub_lab.unique(maintain_order=True).to_list()
    code = {s: i for i, s in enumerate(names)}
    rows = qdf.with_columns(sub_lab.replace_strict(code, return_dtype=pl.Int32).alias("_s")).join(
        jt, on=["query_id", "doc_id"], how="inner"
    )
    sub_j = rows["j"].to_numpy().astype(np.int64)
    sub_s = rows["_s"].to_numpy().astype(np.int32)
    sub_rel = rows["relevance"].to_numpy().astype(np.int32)
    return names, sub_j, sub_s, sub_rel


def _lookup(data: ContentData, positions: np.ndarray) -> None:
    if positions.shape[0]:
        docs = data.prep.runs.doc.take(data.enc.row[positions])
        data.pos_doc[positions] = data.coll.index_of(docs)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    lens = ends - starts
    total = int(lens.sum())
    out: np.ndarray = np.repeat(starts, lens) + (
        np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    )
    return out


def ensure_depth(data: ContentData, depth: int) -> None:
    """Look up ranked documents in the collection as deep as a depth-``depth`` reader needs.

    Every evaluated ranking gets at least its first ``depth`` positions; one
    whose looked-up prefix holds fewer than ``depth`` documents present in
    the collection with a token (skipped ones do not use up the depth) is
    extended until it does or the ranking ends.
    """
    if depth <= data.depth_ready:
        return
    enc = data.enc
    lens = (enc.ends - enc.starts).astype(np.int64)
    target = np.minimum(lens, depth)
    grow = target > data.looked
    _lookup(data, _ranges(enc.starts[grow] + data.looked[grow], enc.starts[grow] + target[grow]))
    data.looked = np.maximum(data.looked, target)
    while True:
        d = data.pos_doc
        usable = (d >= 0) & (data.doc_len[np.maximum(d, 0)] > 0)
        cs = np.concatenate([[0], np.cumsum(usable, dtype=np.int64)])
        have = cs[enc.starts + data.looked] - cs[enc.starts]
        short = (have < depth) & (data.looked < lens)
        if not short.any():
            break
        new = np.minimum(lens, 2 * data.looked + depth)
        _lookup(
            data, _ranges(enc.starts[short] + data.looked[short], enc.starts[short] + new[short])
        )
        data.looked = np.where(short, new, data.looked)
    data.depth_ready = depth
