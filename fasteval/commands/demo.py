"""``fasteval demo --workspace DIR``: the files the documentation's examples use."""

from __future__ import annotations

import os
from pathlib import Path

#: The sample shipped in the package (25 queries, 8 runs).
SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data"


def write_workspace(where: str | os.PathLike[str]) -> Path:
    """Write the shipped sample into ``where`` under the names the pages use.

    * ``qrels.txt``: the sample qrels (25 queries, grades 0-2);
    * ``runs/``: the 8 sample runs as TREC text files, ``sample1.txt`` .. ``sample8.txt``;
    * ``runs.parquet``: the same runs as one Parquet archive.

    Every example of the README and the documentation runs as written in that
    folder. Files already there are replaced (each written atomically); the
    folder is created, its parent must exist.

    Parameters
    ----------
    where
        The folder.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    import polars as pl

    from fasteval.io.writers import make_folder, write_bytes, write_run

    folder = Path(where)
    if not folder.parent.is_dir():
        from fasteval.errors import ParameterError

        msg = f"--workspace {where}: folder '{folder.parent}' does not exist (create it first)"
        raise ParameterError(msg)
    make_folder(folder / "runs")
    write_bytes((SAMPLE_DIR / "sample.qrels").read_bytes(), folder / "qrels.txt")
    write_bytes((SAMPLE_DIR / "sample_runs.parquet").read_bytes(), folder / "runs.parquet")
    runs = pl.read_parquet(SAMPLE_DIR / "sample_runs.parquet")
    for (run_id,), block in runs.group_by("run_id", maintain_order=True):
        write_run(block, folder / "runs" / f"{run_id}.txt")
    return folder
