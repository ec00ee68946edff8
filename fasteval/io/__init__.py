"""Readers and writers: TREC text, Parquet, polars and Arrow tables."""
