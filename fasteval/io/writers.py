"""The one module that writes fasteval's files: tables, runs, archives, figures, reports.

Every file is opened here (:func:`output`) and written atomically: into a temporary
file beside the target, then renamed over it, so a crash leaves no half-written file.
A write the system refuses (disk full, no permission, ...) is one line, a
:class:`~fasteval.errors.WriteError` (``cannot write PATH: no space left on device``),
whatever library was writing. Every Parquet file carries page checksums and a
whole-file digest (:mod:`fasteval.io.stored` reads them back).
"""

from __future__ import annotations

import io
import json
import math
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from fasteval.errors import ParameterError, WriteError
from fasteval.io import provenance
from fasteval.io.formats import named_format
from fasteval.io.stored import DIGEST_KEY
from fasteval.measures.diversity import parse_diversity_measures
from fasteval.measures.parser import MeasureSet

if TYPE_CHECKING:  # polars and pyarrow load where a table is written, not for text
    import polars as pl
    import pyarrow as pa

FORMATS = ("trec", "csv", "json", "jsonl", "parquet")
DIVERSITY_FORMATS = ("trec", "csv", "json", "parquet", "ndeval")
TABLE_FORMATS = ("tsv", "csv", "json", "parquet")  # the analysis commands' tables


def part_path(path: PathLike, part: str) -> Path:
    """``out.csv`` -> ``out.labels.csv``: one file per table of a result."""
    p = Path(path)
    return p.with_name(f"{p.stem}.{part}{p.suffix}")


PathLike = str | os.PathLike[str]


@runtime_checkable
class Rows(Protocol):
    """A result table given as rows (:class:`fasteval.engine.table.Long`)."""

    def rows(self) -> Iterator[tuple[str, str, str, float, str | None]]:
        """Each row as ``(run_id, query_id, measure, value, text)``."""
        ...

    def to_polars(self) -> pl.DataFrame:
        """The table as a polars frame."""
        ...

    def to_arrow(self) -> pa.Table:
        """The table as Arrow (what :meth:`to_polars` converts to)."""
        ...


def _open(path: str, mode: str) -> IO[Any]:
    """THE place fasteval opens a file to write (the full-disk tests make it fail)."""
    return open(path, mode)  # closed by Sink.close


def cannot_write(path: PathLike, e: OSError) -> WriteError:
    """``cannot write PATH: <the system's reason>`` (no library text)."""
    reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e))
    return WriteError(f"cannot write {path}: {reason[:1].lower()}{reason[1:]}")


class Sink(io.RawIOBase):
    """A binary file being written: counts (and optionally hashes) the bytes, and keeps the
    system's error for :func:`output` (polars and pyarrow wrap a failed ``write`` and lose
    its ``errno``)."""

    def __init__(self, f: IO[bytes], *, digest: bool = False) -> None:
        super().__init__()
        self._f = f
        self._hash = provenance.HASHERS[provenance.DIGEST]() if digest else None
        self.count = 0
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        if self.error is not None:
            raise self.error
        try:
            self._f.write(b)
        except OSError as e:
            self.error = e
            raise
        n = memoryview(b).nbytes
        if self._hash is not None:
            self._hash.update(b)
        self.count += n
        return n

    def tell(self) -> int:
        return self.count

    def hexdigest(self) -> str:
        """The digest (:data:`~fasteval.io.provenance.DIGEST`) of the bytes written so far
        (hex)."""
        return self._hash.hexdigest() if self._hash is not None else ""

    def flush(self) -> None:
        if not self._f.closed:
            try:
                self._f.flush()
            except OSError as e:
                self.error = self.error or e
                raise

    def close(self) -> None:
        if self._f.closed:
            return
        try:
            self._f.close()  # flushes: a full disk may show only here
        except OSError as e:
            self.error = self.error or e
            raise
        finally:
            super().close()


@contextmanager
def output(path: PathLike, *, digest: bool = False) -> Iterator[Sink]:
    """A :class:`Sink` on a temporary file beside ``path``, renamed to ``path`` at the end.

    On any exception (Ctrl-C included) the temporary file is removed and
    ``path`` is left as it was; an error of the operating system while
    opening, writing, closing or renaming is a :class:`WriteError` naming ``path``.
    """
    target = Path(path)
    # a unique name (not mkstemp, whose 0600 mode the renamed file would keep)
    tmp = str(target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        sink = Sink(_open(tmp, "wb"), digest=digest)
    except OSError as e:
        raise cannot_write(target, e) from None
    try:
        yield sink
        sink.close()
        os.replace(tmp, target)
    except BaseException as e:
        with suppress(OSError):
            sink.close()
        with suppress(OSError):
            Path(tmp).unlink(missing_ok=True)
        err = sink.error or (e if isinstance(e, OSError) and e.filename == tmp else None)
        if err is not None and not isinstance(e, GeneratorExit):
            raise cannot_write(target, err) from None
        raise


def make_folder(path: PathLike) -> Path:
    """Create the output folder ``path`` (and its parents) if needed; a
    :class:`WriteError` when the system refuses."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise cannot_write(folder, e) from None
    return folder


def write_bytes(data: bytes, path: PathLike) -> None:
    """Write ``data`` to ``path`` (atomically)."""
    with output(path) as f:
        f.write(data)


def write_text(text: str, path: PathLike) -> None:
    """Write ``text`` to ``path`` (UTF-8, atomically)."""
    write_bytes(text.encode(), path)


class ParquetOut:
    """A Parquet file being written table by table (:func:`parquet_output`), with page
    checksums."""

    def __init__(self, sink: Sink, schema: pa.Schema, **options: Any) -> None:
        import pyarrow.parquet as pq  # noqa: PLC0415 (loaded where Parquet is written)

        self.writer = pq.ParquetWriter(sink, schema, write_page_checksum=True, **options)

    def write(self, table: pa.Table, row_group_size: int | None = None) -> None:
        """Append ``table`` (as row groups of ``row_group_size`` rows)."""
        self.writer.write_table(table, row_group_size=row_group_size)


@contextmanager
def parquet_output(
    path: PathLike,
    schema: pa.Schema,
    metadata: dict[bytes, bytes] | None = None,
    **options: Any,
) -> Iterator[ParquetOut]:
    """A :class:`ParquetOut` on :func:`output`: when the block ends, the footer gets the
    provenance, ``metadata`` and the digest of every byte before it
    (:data:`~fasteval.io.stored.DIGEST_KEY`, taken as they pass through the sink);
    ``options`` go to :class:`pyarrow.parquet.ParquetWriter`."""
    with output(path, digest=True) as sink:
        out = ParquetOut(sink, schema, **options)
        try:
            yield out
        except BaseException:
            with suppress(Exception):  # its footer goes nowhere useful
                out.writer.close()
            raise
        entry = {provenance.DIGEST: sink.hexdigest(), "bytes": sink.count}
        extra: dict[bytes, Any] = provenance.stamp()
        out.writer.add_key_value_metadata(
            {**extra, **(metadata or {}), DIGEST_KEY: json.dumps(entry)}
        )
        out.writer.close()


def write_parquet_table(
    table: pa.Table,
    path: PathLike,
    *,
    row_group_size: int | None = None,
    metadata: dict[bytes, bytes] | None = None,
    **options: Any,
) -> None:
    """Write an Arrow table to ``path`` as Parquet with checksums (atomically).

    ``metadata``: footer key-value pairs besides the digest; ``options`` go to
    :class:`pyarrow.parquet.ParquetWriter` (zstd unless ``compression`` says otherwise).
    """
    options.setdefault("compression", "zstd")
    with parquet_output(path, table.schema, metadata, **options) as out:
        out.write(table, row_group_size)


def write_parquet(
    df: pl.DataFrame, path: PathLike, *, metadata: dict[bytes, bytes] | None = None
) -> None:
    """Write a polars frame to ``path`` as Parquet (zstd, checksums; atomically)."""
    import polars as pl  # noqa: PLC0415 (loaded where a frame is written)

    table = df.to_arrow(compat_level=pl.CompatLevel.oldest())
    write_parquet_table(table, path, metadata=metadata)


def write_arrow(table: pa.Table, path: PathLike) -> None:
    """Write a qrels or run Arrow table to Parquet (zstd, dictionary-encoded ids), atomically."""
    dictionary = ["run_id", "query_id", "doc_id"] if "run_id" in table.column_names else True
    write_parquet_table(table, path, use_dictionary=dictionary)


def write_qrels(df: pl.DataFrame, path: PathLike) -> None:
    """Write qrels as TREC text: ``qid 0 docno rel`` (or ``qid subtopic docno rel``).

    Parameters
    ----------
    df
        ``query_id, doc_id, relevance`` and, for diversity qrels, ``subtopic``;
        one line per row, in the frame's order.
    path
        The file to write (atomically, through :func:`fasteval.io.writers.write_text`).
    """
    import polars as pl  # noqa: PLC0415 (loaded where a frame is written)

    second = pl.col("subtopic").cast(pl.String) if "subtopic" in df.columns else pl.lit("0")
    cols = [pl.col("query_id"), second, pl.col("doc_id"), pl.col("relevance").cast(pl.String)]
    text = "\n".join(df.select(pl.concat_str(cols, separator=" ")).to_series().to_list())
    write_text(text + ("\n" if text else ""), path)


def write_figure(fig: Any, path: PathLike, **options: Any) -> None:
    """Save a matplotlib figure to ``path`` in the format its suffix names (atomically)."""
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    with output(path) as sink:
        fig.savefig(sink, format=fmt, **options)


def emit(text: str, path: PathLike | None) -> str | None:
    """Write ``text`` to ``path``; with no path, return it (for the caller to print)."""
    if path is None:
        return text
    write_text(text, path)
    return None


def require_path(fmt: str, path: PathLike | None) -> PathLike:
    """The output path of a binary format; a :class:`ParameterError` when there is none."""
    if path is None:
        msg = f"--format {fmt} needs an output path (-o FILE.{fmt})"
        raise ParameterError(msg)
    return path


def format_trec(
    df: pl.DataFrame | Rows,
    measures: MeasureSet,
    *,
    zscore: bool = False,
    in_order: bool = False,
    run_labels: bool = False,
) -> str:
    """Render a long result table exactly as trec_eval prints it.

    One block per run: per-query lines (when present), then the ``all``
    lines, led by ``runid`` when the measure set includes it. Each query's
    lines in trec_eval's order, whatever order the table's rows are in
    (:func:`fasteval.evaluate` returns the order asked); ``in_order``: the
    caller knows they already are (the command line), nothing is checked. Integer
    measures print as integers, the rest with four decimals
    (``"%-22s\\t%s\\t%6.4f"``); string measures (``relstring``, from the
    ``text`` column) quoted, ``'...'``. With ``zscore`` (trec_eval ``-Z``)
    every numeric name is prefixed with ``Z`` and printed with four decimals.
    With ``run_labels`` and several runs, each run's block is led by trec_eval's
    own label line (``runid  all  X``, what ``-m runid`` prints) unless ``runid``
    is among the measures.

    ``df`` is a polars frame or :class:`Rows` (the evaluation's own table, which
    the command line renders without loading polars).
    """
    if not in_order:
        rank = {m.name: i for i, m in enumerate(measures)}
        df = in_measure_order(_runs_together(as_frame(df)), rank)
    integer = set() if zscore else {m.name for m in measures if m.info.integer}
    prefix = "Z" if zscore else ""
    first = next((m.name for m in measures if not m.info.text), None)  # first 'all' row
    rows = _rows(df)
    label = run_labels and not measures.runid and len({r[0] for r in rows}) > 1
    out: list[str] = []  # (joined once: cheaper than a StringIO written line by line)
    run = None
    for run_id, qid, name, value, text in rows:
        if label and run_id != run:
            out.append(f"{'runid':<22}\tall\t{run_id}\n")
        run = run_id
        if qid == "all" and measures.runid and name == first:
            out.append(f"{'runid':<22}\tall\t{run_id}\n")
        if text is not None:
            out.append(f"{name:<22}\t{qid}\t'{text}'\n")
        elif name in integer:
            out.append(f"{name:<22}\t{qid}\t{round(value)}\n")
        else:
            out.append(f"{prefix}{name:<22}\t{qid}\t{value:6.4f}\n")
    return "".join(out)


def _rows(df: pl.DataFrame | Rows) -> list[tuple[Any, ...]]:
    """The rows ``(run_id, query_id, measure, value, text)`` of a result table."""
    if isinstance(df, Rows):
        return list(df.rows())
    cols = ["run_id", "query_id", "measure", "value"]
    if "text" in df.columns:
        return list(df.select([*cols, "text"]).iter_rows())
    return [(*row, None) for row in df.select(cols).iter_rows()]


def _runs_together(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with each run's rows together (runs in order of first appearance; stable)."""
    seen: dict[str, int] = {}
    runs = df["run_id"].to_list()
    place = np.fromiter((seen.setdefault(r, len(seen)) for r in runs), np.int64, len(runs))
    return df if (place[1:] >= place[:-1]).all() else df[np.argsort(place, kind="stable")]


def as_frame(df: pl.DataFrame | Rows) -> pl.DataFrame:
    """``df`` as a polars DataFrame (:class:`Rows` converted, a frame as it is)."""
    return df.to_polars() if isinstance(df, Rows) else df


def in_measure_order(df: pl.DataFrame, rank: dict[str, int]) -> pl.DataFrame:
    """``df`` (a long result table) with each (run, query)'s rows in the order ``rank`` gives
    their measures (stable; unknown ones after); ``df`` itself when nothing moves."""
    n = df.height
    if n < 2:
        return df
    # numpy and a dict, not polars expressions: a warm call pays this on every call
    # (figures: benchmarks/RESULTS.md, "Fresh install: what changed")
    last = len(rank)
    key = np.fromiter((rank.get(m, last) for m in df["measure"].to_list()), np.int64, n)
    q, r = df["query_id"].to_numpy(), df["run_id"].to_numpy()
    block = np.empty(n, np.int64)
    block[0] = 0
    np.cumsum((q[1:] != q[:-1]) | (r[1:] != r[:-1]), out=block[1:])
    same = block[1:] == block[:-1]
    if not (key[1:][same] < key[:-1][same]).any():
        return df
    return df[np.lexsort((key, block))]


def _topic_key(q: str) -> tuple[int, int | str]:
    return (0, int(q)) if q.isdigit() else (1, q)


def format_ndeval(df: pl.DataFrame) -> str:
    """ndeval's CSV layout: one header line, then per run ``runid,topic,<measures>`` per topic
    (numeric order when numbers), then ``amean``; ndeval's names, six decimals."""
    names = list(dict.fromkeys(df["measure"].to_list()))
    col = {n: parse_diversity_measures(n)[0].ndeval_name for n in names}
    buf = io.StringIO()
    buf.write("runid,topic," + ",".join(col[n] for n in names) + "\n")
    for (run_id,), block in df.group_by("run_id", maintain_order=True):
        wide: dict[str, dict[str, float]] = {}
        for qid, name, value in block.select("query_id", "measure", "value").iter_rows():
            wide.setdefault(qid, {})[name] = value
        topics = sorted((q for q in wide if q != "all"), key=_topic_key)
        for q in [*topics, "all"]:
            if q not in wide:
                continue
            vals = ",".join(f"{wide[q].get(n, float('nan')):.6f}" for n in names)
            buf.write(f"{run_id},{'amean' if q == 'all' else q},{vals}\n")
    return buf.getvalue()


def format_trec_diversity(df: pl.DataFrame) -> str:
    """trec_eval's layout, ``measure <tab> query <tab> value`` (four decimals), a ``runid``
    line heading each run's ``all`` block."""
    buf = io.StringIO()
    last = None
    for run, name, qid, value in df.select("run_id", "measure", "query_id", "value").iter_rows():
        if qid == "all" and run != last:
            buf.write(f"{'runid':<22}\tall\t{run}\n")
            last = run
        buf.write(f"{name:<22}\t{qid}\t{value:6.4f}\n")
    return buf.getvalue()


def write_table(
    df: pl.DataFrame | Rows,
    fmt: str,
    path: PathLike | None,
    *,
    measures: MeasureSet | None = None,
    zscore: bool = False,
    formats: Sequence[str] = FORMATS,
    tsv_digits: int | None = None,
    float_precision: int | None = None,
) -> str | None:
    """Write a long result table in ``fmt``; with no path, return the text to print.

    Parameters
    ----------
    df
        The table (``run_id, query_id, measure, value`` for ``trec`` and ``ndeval``): a
        polars frame, or the evaluation's own :class:`Rows` (text and Parquet written
        without polars).
    fmt
        One of ``formats``: ``trec`` (trec_eval's layout for ``measures``;
        ndeval's trec layout when ``measures`` is None), ``ndeval`` (ndeval's
        CSV), ``csv``, ``tsv``, ``json`` or ``parquet`` (needs ``path``).
    path
        Where to write; None returns the text.
    measures, zscore
        For ``trec``: the measure set (integer measures, ``runid`` line) and
        trec_eval ``-Z``'s ``Z`` prefix.
    formats
        The formats the caller accepts.
    tsv_digits
        For ``tsv``: round float columns to this many digits first.
    float_precision
        For ``csv`` / ``tsv``: digits printed after the point.
    """
    if fmt not in formats:
        msg = f"unknown format {fmt!r}; choose one of {', '.join(formats)}"
        raise ParameterError(msg)
    if fmt == "parquet":
        if isinstance(df, Rows):  # the evaluation's own table: no polars
            write_parquet_table(df.to_arrow(), require_path(fmt, path))
        else:
            write_parquet(df, require_path(fmt, path))
        return None
    df = as_frame(df)
    if fmt == "trec" and measures is not None:
        text = format_trec(df, measures, zscore=zscore)
    elif fmt == "trec":
        text = format_trec_diversity(df)
    elif fmt == "ndeval":
        text = format_ndeval(df)
    elif fmt in ("csv", "tsv"):
        if fmt == "tsv" and tsv_digits is not None:
            import polars as pl  # noqa: PLC0415 (loaded where a frame is written)

            df = df.with_columns(pl.col(pl.Float64).round(tsv_digits))
        text = df.write_csv(
            separator="\t" if fmt == "tsv" else ",", float_precision=float_precision
        )
    elif fmt == "jsonl":
        text = format_jsonl(df)
    else:
        text = df.write_json()
        text += "" if text.endswith("\n") else "\n"
    return emit(text, path)


def format_jsonl(df: pl.DataFrame) -> str:
    """JSON lines in ir_measures' ``Metric`` shape plus the run, one per row in order:
    ``{"query_id", "measure", "value", "run_id"}`` (aggregates: ``query_id == "all"``;
    NaN as ``null``; string measures as their text)."""
    lines = []
    for run, q, m, v, text in _rows(df):
        value = text if text is not None else None if v is None or math.isnan(v) else v
        lines.append(
            json.dumps({"query_id": q, "measure": m, "value": value, "run_id": run}) + "\n"
        )
    return "".join(lines)


def write_frame(df: pl.DataFrame, path: PathLike) -> None:
    """Write a table by its file name: Parquet (``.parquet``/``.pq``), TSV (``.tsv``) or CSV."""
    fmt = named_format(path)
    write_table(df, fmt if fmt in ("parquet", "tsv") else "csv", path, formats=TABLE_FORMATS)


def write_run(df: pl.DataFrame, path: PathLike) -> None:
    """Write a run-schema frame as TREC text (``qid Q0 doc rank score tag``) or Parquet."""
    import polars as pl  # noqa: PLC0415 (loaded where a frame is written)

    if named_format(path) == "parquet":
        write_arrow(df.to_arrow(compat_level=pl.CompatLevel.oldest()), path)
        return
    lines = df.select(
        pl.format(
            "{} Q0 {} {} {} {}",
            "query_id",
            "doc_id",
            "rank",
            pl.col("score").cast(pl.String),
            "run_id",
        )
    ).to_series()
    text = "\n".join(lines.to_list())
    write_text(text + "\n" if text else "", path)
