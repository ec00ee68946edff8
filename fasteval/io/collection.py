"""Document collections for content-based evaluation (SPEC 9), read once into CSR term counts.

A :class:`Collection` holds every document as its term counts over an
integer vocabulary: document ``i`` has terms ``terms[doc_off[i]:doc_off[i+1]]``
(increasing term ids) with counts ``counts[...]``. That is all the content
kernels read; the text itself is not kept.

Sources (:func:`read_collection`): tables with ``doc_id, text`` columns, TREC ``<DOC>``
SGML files, the classic collections, and a collection stored by :func:`write_collection`
(``fasteval index``: term counts and vocabulary, so a later study does not tokenize again).

The default analyzer is SPEC 9's, exactly: ``re.findall(r"[a-z0-9]+",
text.lower())``. It runs vectorised in polars (``str.to_lowercase`` then
``str.extract_all``); Python's ``str.lower`` and polars' lowercase agree on
every code point that can lower-case into ``[a-z0-9]`` (a test checks all of
Unicode). A stop list and a stemmer (``snowballstemmer``, the ``content``
extra) can be plugged in; they apply to the distinct tokens only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fasteval.errors import InputFormatError, ParameterError, SchemaError, install_hint
from fasteval.io import formats, provenance, stored, writers
from fasteval.io.classic import READERS, load
from fasteval.io.files import read_text

TOKEN_PATTERN = r"[a-z0-9]+"
FORMAT_VERSION = 1
_META_KEY = b"fasteval.collection"
INDEX_AGAIN = "build the index again (fasteval index)"


def analyze(text: str) -> list[str]:
    """SPEC 9's default analyzer, in plain Python (the definition the fast path must equal)."""
    return re.findall(TOKEN_PATTERN, text.lower())


@dataclass(frozen=True)
class Analyzer:
    """The analyzer: SPEC 9's tokenizer, then an optional stop list and stemmer.

    Parameters
    ----------
    stopwords
        Tokens to drop (compared after lower-casing, before stemming).
    stemmer
        ``None``, or a Snowball algorithm name (``"english"``, ``"porter"``,
        ...) applied with the ``snowballstemmer`` package.
    """

    stopwords: frozenset[str] = field(default_factory=frozenset)
    stemmer: str | None = None

    def describe(self) -> str:
        """A short, stable description stored with an indexed collection."""
        parts = [f"re.findall({TOKEN_PATTERN!r}, text.lower())"]
        if self.stopwords:
            parts.append(f"stop list of {len(self.stopwords)} words")
        if self.stemmer:
            parts.append(f"snowball stemmer {self.stemmer!r}")
        return "; ".join(parts)

    def normalizer(self) -> Callable[[list[str]], list[str | None]] | None:
        """Map distinct tokens to their final form (``None`` drops the token); None if identity."""
        if not self.stopwords and not self.stemmer:
            return None
        stem: Callable[[list[str]], list[str]] | None = None
        if self.stemmer:
            try:
                import snowballstemmer  # noqa: PLC0415 (optional extra: content)
            except ImportError as e:  # pragma: no cover - depends on the environment
                msg = (
                    "stemming needs the snowballstemmer package, which is not installed: "
                    + install_hint("content")
                )
                raise ParameterError(msg) from e
            try:
                st = snowballstemmer.stemmer(self.stemmer)
            except KeyError as e:
                algos = ", ".join(sorted(snowballstemmer.algorithms()))
                msg = f"unknown stemmer {self.stemmer!r}\n  hint: one of {algos}"
                raise ParameterError(msg) from e
            stem = st.stemWords
        stop = self.stopwords

        def norm(tokens: list[str]) -> list[str | None]:
            kept = [t for t in tokens if t not in stop]
            stems = stem(kept) if stem is not None else kept
            it = iter(stems)
            return [None if t in stop else next(it) for t in tokens]

        return norm

    def tokens(self, text: str) -> list[str]:
        """The analyzer applied to one text in plain Python (for tests and small inputs)."""
        toks = analyze(text)
        norm = self.normalizer()
        if norm is None:
            return toks
        return [t for t in norm(toks) if t is not None]


@dataclass
class Collection:
    """Documents as term counts in CSR form over an integer vocabulary.

    Attributes
    ----------
    doc_ids
        Document ids (row ``i`` of the CSR arrays is ``doc_ids[i]``), unique.
    doc_off
        ``int64[n_docs + 1]``: document ``i``'s entries are ``doc_off[i]:doc_off[i+1]``.
    terms, counts
        ``int32`` term ids (increasing within a document) and their counts.
    vocabulary
        Term of each id.
    analyzer
        Description of the analyzer that produced the counts.
    """

    doc_ids: pa.LargeStringArray
    doc_off: np.ndarray
    terms: np.ndarray
    counts: np.ndarray
    vocabulary: list[str]
    analyzer: str = ""

    def __post_init__(self) -> None:
        # read-only whatever the source (Parquet's arrive so): numba compiles a kernel once
        # per array type, read-only included (views: the caller's arrays stay writable)
        self.doc_off = _read_only(self.doc_off, np.int64)
        self.terms = _read_only(self.terms, np.int32)
        self.counts = _read_only(self.counts, np.int32)

    def __len__(self) -> int:
        return len(self.doc_ids)

    @property
    def doc_len(self) -> np.ndarray:
        """``int64`` token count |d| of every document."""
        c = np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)])
        return np.ascontiguousarray(c[self.doc_off[1:]] - c[self.doc_off[:-1]])

    @property
    def collection_lm(self) -> np.ndarray:
        """theta_C: ``float64`` probability of every term in the whole collection."""
        tot = np.bincount(self.terms, weights=self.counts, minlength=len(self.vocabulary))
        s = float(tot.sum())
        return np.ascontiguousarray(tot / s if s > 0 else tot, np.float64)

    def index_of(self, ids: pa.Array | pa.ChunkedArray | list[str]) -> np.ndarray:
        """Row of each of ``ids`` in the collection (``-1`` where absent), ``int32``."""
        arr = pa.array(ids, pa.large_string()) if isinstance(ids, list) else ids
        if not pa.types.is_large_string(arr.type):
            arr = pc.cast(arr, pa.large_string())
        idx = pc.index_in(arr, value_set=self.doc_ids)
        return np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), np.int32)

    def counts_of(self, doc_id: str) -> dict[str, int]:
        """Term counts of one document as a dict (for inspection and tests)."""
        i = int(self.index_of([doc_id])[0])
        if i < 0:
            msg = f"document {doc_id!r} is not in the collection"
            raise ParameterError(msg)
        a, b = self.doc_off[i], self.doc_off[i + 1]
        return {
            self.vocabulary[t]: int(c)
            for t, c in zip(self.terms[a:b].tolist(), self.counts[a:b].tolist(), strict=True)
        }


def _read_only(a: np.ndarray, dtype: type) -> np.ndarray:
    view: np.ndarray = np.ascontiguousarray(a, dtype).view()
    view.setflags(write=False)
    return view


def from_texts(
    doc_ids: Iterable[str] | pl.Series,
    texts: Iterable[str | None] | pl.Series,
    *,
    analyzer: Analyzer | None = None,
    source: str = "<texts>",
) -> Collection:
    """Tokenize documents (vectorised in polars) into a :class:`Collection`.

    Parameters
    ----------
    doc_ids, texts
        One id and one text per document (a null text is an empty document).
    analyzer
        Default: SPEC 9's analyzer with no stop list and no stemmer.
    source
        Name used in error messages (file name).

    Raises
    ------
    fasteval.errors.InputFormatError
        For a null or repeated document id (naming the id and the rows).
    """
    analyzer = analyzer or Analyzer()
    ids = doc_ids if isinstance(doc_ids, pl.Series) else pl.Series(list(doc_ids), dtype=pl.String)
    tx = texts if isinstance(texts, pl.Series) else pl.Series(list(texts), dtype=pl.String)
    df = pl.DataFrame({"doc_id": ids.cast(pl.String), "text": tx.cast(pl.String)})
    _check_ids(df["doc_id"], source)
    n = df.height
    toks = (
        df.select(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("doc"),
            pl.col("text")
            .fill_null("")
            .str.to_lowercase()
            .str.extract_all(TOKEN_PATTERN)
            .alias("tok"),
        )
        .explode("tok")
        .drop_nulls("tok")
    )
    tok_vocab = toks.select(pl.col("tok").unique().sort())["tok"]
    norm = analyzer.normalizer()  # each distinct token's final form (None: as it is)
    final = tok_vocab if norm is None else pl.Series(norm(tok_vocab.to_list()), dtype=pl.String)
    table = pl.DataFrame({"tok": tok_vocab, "final": final}).drop_nulls("final")
    vocab = table.select(pl.col("final").unique().sort())["final"]
    terms = pl.DataFrame({"final": vocab, "term": pl.int_range(len(vocab), eager=True)})
    code_of = table.join(terms, on="final").select("tok", "term")
    counts = (
        toks.join(code_of, on="tok", how="inner")
        .group_by(["doc", "term"])
        .agg(pl.len().alias("count"))
        .sort(["doc", "term"])
    )
    doc = counts["doc"].to_numpy()
    doc_off = np.searchsorted(doc, np.arange(n + 1), side="left").astype(np.int64)
    return Collection(
        pa.array(df["doc_id"].to_arrow(), pa.large_string()),
        doc_off,
        counts["term"].to_numpy().astype(np.int32),
        counts["count"].to_numpy().astype(np.int32),
        vocab.to_list(),
        analyzer.describe(),
    )


def _check_ids(ids: pl.Series, source: str) -> None:
    if ids.null_count():
        row = int(ids.is_null().arg_true()[0])
        msg = f"{source}: document {row + 1} has no doc_id"
        raise InputFormatError(msg)
    dup = ids.is_duplicated()
    if dup.any():
        first = int(dup.arg_true()[0])
        value = ids[first]
        rows = (ids == value).arg_true().to_list()
        msg = (
            f"{source}: document id {value!r} appears more than once "
            f"(documents {', '.join(str(r + 1) for r in rows[:5])}); "
            f"{int(dup.sum())} documents share an id"
        )
        raise InputFormatError(msg)


_DOC_RE = re.compile(r"<DOC>(.*?)</DOC>", re.S | re.I)
_DOCNO_RE = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.S | re.I)
_TAG_RE = re.compile(r"<[^>]*>")


def read_trec_sgml(path: str | os.PathLike[str]) -> pl.DataFrame:
    """A TREC ``<DOC>`` SGML file (plain or ``.gz``) as ``doc_id, text``.

    The id is the ``<DOCNO>`` element; the text is the rest of the ``<DOC>``
    element with tags removed.
    """
    p = Path(path)
    raw = read_text(p, errors="replace")
    ids, texts = [], []
    for m in _DOC_RE.finditer(raw):
        body = m.group(1)
        no = _DOCNO_RE.search(body)
        if no is None:
            line = raw.count("\n", 0, m.start()) + 1
            msg = f"{p}:{line}: <DOC> without <DOCNO>"
            raise InputFormatError(msg)
        ids.append(no.group(1))
        texts.append(_TAG_RE.sub(" ", body[: no.start()] + " " + body[no.end() :]))
    if not ids:
        msg = f"{p}: no <DOC> element found\n  hint: is this a TREC SGML document file?"
        raise InputFormatError(msg)
    return pl.DataFrame(
        {"doc_id": ids, "text": texts}, schema={"doc_id": pl.String, "text": pl.String}
    )


def _table_docs(df: pl.DataFrame, source: str, analyzer: Analyzer | None) -> Collection:
    missing = [c for c in ("doc_id", "text") if c not in df.columns]
    if missing:
        msg = (
            f"{source}: a collection needs columns doc_id and text; missing "
            f"{', '.join(missing)} (has {', '.join(df.columns[:8])})"
        )
        raise SchemaError(msg)
    return from_texts(df["doc_id"], df["text"], analyzer=analyzer, source=source)


def read_collection(
    source: Any,
    *,
    analyzer: Analyzer | None = None,
    format: str | None = None,
) -> Collection:
    """Read a collection from a file, folder, frame or table (see the module docstring).

    Parameters
    ----------
    source
        Path (``.parquet``, ``.csv``, ``.jsonl``/``.ndjson``, TREC SGML,
        optionally ``.gz``), ``classic:NAME`` or a classic collection's folder,
        a polars DataFrame / Arrow table with ``doc_id, text``, or a
        :class:`Collection` (returned as is).
    analyzer
        Tokenizing options for text sources (a stored collection keeps its own).
    format
        Force ``"parquet"``, ``"csv"``, ``"jsonl"``, ``"trec"`` or ``"classic"``.
    """
    if isinstance(source, Collection):
        return source
    if isinstance(source, pl.DataFrame):
        return _table_docs(source, "<DataFrame>", analyzer)
    if isinstance(source, pa.Table):
        return _table_docs(pl.from_arrow(source), "<Table>", analyzer)  # type: ignore[arg-type]
    s = str(source)
    if s.startswith("classic:") or format == "classic":
        return _classic(s.removeprefix("classic:"), analyzer)
    p = Path(s)
    if not p.exists():
        msg = f"{p}: no such collection file or folder"
        raise InputFormatError(msg)
    if p.is_dir():
        if p.name.lower() in READERS:
            return _classic(str(p), analyzer)
        msg = (
            f"{p}: a folder is read only as a classic collection "
            f"({', '.join(sorted(READERS))})\n  hint: give a file"
        )
        raise InputFormatError(msg)
    fmt = format or formats.table_format(p)
    try:
        if fmt == "parquet":
            if _META_KEY in (pq.read_schema(p).metadata or {}):
                return _load_stored(p)
            df = pl.read_parquet(p)
        elif fmt == "csv":
            df = pl.read_csv(p, infer_schema_length=0)
        elif fmt == "jsonl":
            df = pl.read_ndjson(p)
        elif fmt == "trec":
            df = read_trec_sgml(p)
        else:
            msg = f"unknown collection format {fmt!r}\n  hint: parquet, csv, jsonl, trec or classic"
            raise ParameterError(msg)
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        msg = f"{p}: cannot read as a {fmt} collection: {first}"
        raise InputFormatError(msg) from e
    return _table_docs(df, str(p), analyzer)


def _classic(spec: str, analyzer: Analyzer | None) -> Collection:
    p = Path(spec)
    if p.is_dir():
        root, name = p.parent, p.name.lower()
    else:
        env = os.environ.get("FASTEVAL_SHARED_DATA")
        root = (Path(env) if env else Path.cwd().parent / "shared" / "data") / "classic"
        name = spec.lower()
    if name not in READERS:
        msg = f"unknown classic collection {spec!r}\n  hint: one of {', '.join(sorted(READERS))}"
        raise ParameterError(msg)
    c = load(root, name)
    return from_texts(c.doc_ids, c.texts, analyzer=analyzer, source=f"classic:{name}")


def write_collection(c: Collection, path: str | os.PathLike[str]) -> None:
    """Store a collection as Parquet: ``doc_id, terms, counts``; vocabulary in the metadata."""
    off = pa.array(c.doc_off, pa.int64())
    table = pa.table(
        {
            "doc_id": c.doc_ids,
            "terms": pa.LargeListArray.from_arrays(off, pa.array(c.terms, pa.int32())),
            "counts": pa.LargeListArray.from_arrays(off, pa.array(c.counts, pa.int32())),
        }
    )
    meta = {"version": FORMAT_VERSION, "analyzer": c.analyzer, "vocabulary": c.vocabulary}
    table = table.replace_schema_metadata({_META_KEY: json.dumps(meta).encode()})
    writers.write_parquet_table(table, path, compression="zstd")


def _load_stored(p: Path) -> Collection:
    table = stored.read_table(p, advice=INDEX_AGAIN)
    meta = provenance.footer_json(table.schema.metadata, _META_KEY) or {}
    if meta.get("version") != FORMAT_VERSION:
        msg = f"{p}: collection format version {meta.get('version')!r}, expected {FORMAT_VERSION}"
        raise InputFormatError(msg)
    terms = table.column("terms").combine_chunks()
    counts = table.column("counts").combine_chunks()
    off = np.asarray(terms.offsets.to_numpy(), np.int64)
    off = off - off[0]
    ids = table.column("doc_id").combine_chunks()
    if not pa.types.is_large_string(ids.type):
        ids = ids.cast(pa.large_string())
    return Collection(
        ids,
        off,
        np.asarray(terms.flatten().to_numpy(), np.int32),
        np.asarray(counts.flatten().to_numpy(), np.int32),
        list(meta["vocabulary"]),
        str(meta.get("analyzer", "")),
    )
