"""Qrels written as TREC text (the content layer's completed and selected judgments)."""

from __future__ import annotations

import os

import polars as pl

from fasteval.io import writers


def write_qrels(df: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write qrels as TREC text: ``qid 0 docno rel`` (or ``qid subtopic docno rel``).

    Parameters
    ----------
    df
        ``query_id, doc_id, relevance`` and, for diversity qrels, ``subtopic``;
        one line per row, in the frame's order.
    path
        The file to write (atomically, through :func:`fasteval.io.writers.write_text`).
    """
    second = pl.col("subtopic").cast(pl.String) if "subtopic" in df.columns else pl.lit("0")
    cols = [pl.col("query_id"), second, pl.col("doc_id"), pl.col("relevance").cast(pl.String)]
    text = "\n".join(df.select(pl.concat_str(cols, separator=" ")).to_series().to_list())
    writers.write_text(text + ("\n" if text else ""), path)
