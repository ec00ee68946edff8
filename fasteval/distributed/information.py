"""All-pairs information difference on a Dask cluster, in blocks of run pairs.

Each pair's value depends on the two runs only; every worker prepares the pair
data once (:func:`fasteval.analysis.information.pair_data`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.distributed.cluster import (
    DEFAULT_RETRIES,
    Source,
    block_size,
    cached,
    check_same_data,
    connect,
    data_hash,
    fetch_inputs,
    plan_on_worker,
    progress_bar,
    run_blocks,
    spec_token,
)
from fasteval.errors import ParameterError


@dataclass(frozen=True)
class PairSpec:
    """What a worker needs to rebuild :func:`fasteval.analysis.information.pair_data`."""

    source: Source
    relevance_level: int = 1
    kernel_threads: int | None = field(default=None, compare=False)


def _pair_data(token: str, spec: PairSpec) -> tuple[Any, str]:
    def build() -> tuple[Any, str]:
        from fasteval.analysis.information import pair_data

        qrels, runs = fetch_inputs(spec.source)
        data = pair_data(
            qrels,
            runs,
            relevance_level=spec.relevance_level,
            lenient=spec.source.lenient,
            run_id_from=spec.source.run_id_from,
        )
        enc = data.prep.enc
        return data, data_hash(enc.qr_rel, enc.qr_off, data.cdz, names=enc.run_names)

    with parallel.kernel_threads(spec.kernel_threads):
        return cached(token, build)  # type: ignore[no-any-return]


def _infodiff_plan(
    token: str,
    spec: PairSpec,
    pairs: list[tuple[str, str]] | None,
    bin_by: str | None,
    bins: int,
) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, Any], str]:
    from fasteval.analysis.information import resolve_pairs

    data, h = _pair_data(token, spec)
    cols: dict[str, Any] = {}
    if bin_by is None:
        a, b = resolve_pairs(data, pairs)
        return data.run_names, a, b, cols, h
    from fasteval.analysis.information import binned_pairs

    if pairs is not None:
        msg = "give pairs or bin_by, not both"
        raise ParameterError(msg)
    with parallel.kernel_threads(spec.kernel_threads):
        a, b, cols = binned_pairs(data, bin_by, bins, relevance_level=spec.relevance_level)
    return data.run_names, a, b, cols, h


def _infodiff_block(
    token: str, spec: PairSpec, data_hash: str, a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    data, h = _pair_data(token, spec)
    check_same_data(data_hash, h)
    with parallel.kernel_threads(spec.kernel_threads):
        mean, _ = data.information_difference(a, b)
    return np.asarray(mean)


def information_difference(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    client: Any,
    relevance_level: int = 1,
    run_id_from: str = "tag",
    bin_by: str | None = None,
    bins: int = 20,
    block: int | None = None,
    retries: int = DEFAULT_RETRIES,
    progress: bool | None = False,
    kernel_threads: int | None = None,
) -> pl.DataFrame:
    """Information difference of run pairs on a Dask cluster, in blocks of pairs.

    Same values as :func:`fasteval.information_difference` (and ``fasteval
    infodiff``), bit for bit. ``bin_by``/``bins`` compare only runs in the same
    equal-width bin of that measure, as ``fasteval infodiff --bin-by`` does
    (the table then has ``bin, <measure>_a, <measure>_b`` too).

    Returns
    -------
    polars.DataFrame
        ``run_a, run_b, id`` (+ bin columns), one row per pair in the order given
        (all pairs ``i < j`` by default); not sorted.
    """
    spec = PairSpec(Source.of(qrels, runs, run_id_from), relevance_level, kernel_threads)
    token = spec_token(spec)
    plist = None if pairs is None else [tuple(p) for p in pairs]
    with connect(client) as c:
        names, a, b, cols, h = plan_on_worker(
            c, _infodiff_plan, token, spec, plist, bin_by, bins, retries=retries
        )
        n = int(a.shape[0])
        size = block_size(n, c, block)
        bounds = [(lo, min(lo + size, n)) for lo in range(0, n, size)]
        mean = np.full(n, np.nan)

        def on_done(i: int, m: np.ndarray) -> None:
            lo, hi = bounds[i]
            mean[lo:hi] = m

        with progress_bar(n, 0, "pair", "information difference (cluster)", progress) as bar:
            run_blocks(
                c,
                _infodiff_block,
                [(token, spec, h, a[lo:hi], b[lo:hi]) for lo, hi in bounds],
                [hi - lo for lo, hi in bounds],
                retries=retries,
                name="infodiff",
                bar=bar,
                on_done=on_done,
            )
    s = pl.Series(names, dtype=pl.String)
    return pl.DataFrame({"run_a": s.gather(a), "run_b": s.gather(b), "id": mean, **cols})
