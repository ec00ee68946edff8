"""Run fasteval's work units on a Dask distributed cluster.

Robustness studies, all-pairs information difference and whole-archive
evaluation split into independent units whose results merge into exactly the
table the single-machine path gives, whatever the split or the number of
workers:

- a study unit is a block of repetitions ``[lo, hi)`` of one setting; the
  random generator of repetition ``rep`` is
  ``SeedSequence(seed, spawn_key=(kind, setting key, rep))``
  (:func:`fasteval.analysis.studies.unit_rng`), so it does not depend on which
  block, worker or order it runs in;
- an information-difference unit is a block of run pairs (each pair's value
  depends on the two runs only);
- an evaluation unit is a block of runs (each run's rows depend on that run
  and the qrels only).

Workers read the inputs themselves, from a path every worker can reach: a
local or shared-filesystem path (made absolute on the client), or any URL
:func:`pyarrow.fs.FileSystem.from_uri` understands (``s3://``, ``gs://``,
``hdfs://``, ``file://``...). Parquet archives are read through the pyarrow
filesystem; text files are copied to a worker-local temporary folder under
their own name. For studies and information difference each worker prepares
an input once and keeps it (a small per-process cache; a study worker holds the
compact form of :mod:`fasteval.engine.compact`, about 33 MB for TREC-8), so a
unit ships only its parameters and returns only its rows. An evaluation task
reads only the files of its own block of runs (the qrels once per worker). The
client never reads the archive: a first task plans the work on a worker.

Failure behaviour: the scheduler re-runs the tasks of a worker that is lost
(up to Dask's ``distributed.scheduler.allowed-failures``); a task that raises
is retried ``retries`` times (transient read errors); a study with an output
folder writes each finished block as it arrives
(``parts/setting=<label>/reps=<lo>-<hi>.parquet``) and each finished setting
as the local path does (``setting=<label>.parquet``), so an interrupted study
resumes, from the cluster or locally, without recomputing finished work.

Without a cluster address nothing here is used: the commands run locally as
before. The address comes from ``--cluster`` or the ``FASTEVAL_CLUSTER``
environment variable: a scheduler address (``tcp://host:8786``), or
``local`` / ``local:N`` for a :class:`distributed.LocalCluster` of ``N``
single-threaded worker processes on this machine (loopback only).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import shutil
import tempfile
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval import parallel
from fasteval.errors import DataMismatchError, InputFormatError, ParameterError

ENV_VAR = "FASTEVAL_CLUSTER"
DEFAULT_RETRIES = 3
TASKS_PER_WORKER = 4  # default split: about this many tasks per worker
_CACHE_SIZE = 2  # prepared inputs kept per worker process

# --------------------------------------------------------------------------- connecting


def cluster_address(option: str | None = None) -> str | None:
    """The cluster address from ``option`` or ``$FASTEVAL_CLUSTER`` (``None``: run locally)."""
    addr = option if option is not None else os.environ.get(ENV_VAR)
    if addr is None or not addr.strip():
        return None
    return addr.strip()


def _require_dask() -> Any:
    try:
        import distributed
    except ImportError:
        from fasteval.errors import install_hint

        msg = (
            "running on a cluster needs Dask distributed, which is not installed: "
            + install_hint("cluster")
        )
        raise ParameterError(msg) from None
    return distributed


@contextmanager
def connect(cluster: Any) -> Iterator[Any]:
    """A :class:`distributed.Client` for ``cluster``.

    ``cluster`` is a ``Client`` (used as is), a scheduler address
    (``tcp://host:8786``), or ``local`` / ``local:N`` (a LocalCluster of ``N``
    single-threaded worker processes on 127.0.0.1, closed afterwards; ``N``
    defaults to the number of CPUs).
    """
    distributed = _require_dask()
    if isinstance(cluster, distributed.Client):
        yield cluster
        return
    if not isinstance(cluster, str) or not cluster.strip():
        msg = f"cluster must be a scheduler address or a dask Client, got {cluster!r}"
        raise ParameterError(msg)
    addr = cluster.strip()
    if addr == "local" or addr.startswith("local:"):
        n_text = addr.partition(":")[2]
        try:
            n = int(n_text) if n_text else (os.cpu_count() or 1)
        except ValueError:
            n = 0
        if n < 1:
            msg = f"local cluster size must be a positive integer, got {addr!r}"
            raise ParameterError(msg)
        with (
            distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            ) as lc,
            distributed.Client(lc) as client,
        ):
            yield client
        return
    try:
        client = distributed.Client(addr, timeout="20s")
    except (OSError, TimeoutError, ValueError) as e:
        msg = f"cannot connect to the Dask scheduler at {addr!r}: {e}"
        raise ParameterError(msg) from None
    try:
        yield client
    finally:
        client.close()


def _n_workers(client: Any) -> int:
    return max(1, len(client.scheduler_info().get("workers", {})))


def _block_size(total: int, client: Any, block: int | None) -> int:
    if block is not None:
        if int(block) < 1:
            msg = f"block must be >= 1, got {block}"
            raise ParameterError(msg)
        return int(block)
    return max(1, math.ceil(total / (TASKS_PER_WORKER * _n_workers(client))))


# --------------------------------------------------------------------------- inputs


def _is_url(x: str) -> bool:
    return "://" in x


@dataclass(frozen=True)
class Source:
    """Qrels and runs as every worker can read them: absolute paths or URLs."""

    qrels: str
    runs: tuple[str, ...]
    run_id_from: str = "tag"
    lenient: bool = False

    @classmethod
    def of(cls, qrels: Any, runs: Any, run_id_from: str = "tag", lenient: bool = False) -> Source:
        """Normalise the client's arguments (paths made absolute, URLs kept)."""
        items = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)

        def norm(x: Any, what: str) -> str:
            if not isinstance(x, (str, os.PathLike)):
                msg = (
                    f"on a cluster, {what} must be paths or URLs every worker can read, "
                    f"got a {type(x).__name__}"
                )
                raise ParameterError(msg)
            s = os.fspath(x)
            return s if _is_url(s) else os.path.abspath(s)

        if not items:
            msg = "no runs given"
            raise InputFormatError(msg)
        return cls(
            norm(qrels, "qrels"), tuple(norm(r, "runs") for r in items), run_id_from, lenient
        )


_TMP: dict[str, str] = {}


def _local_copy(fs: Any, path: str, url: str) -> str:
    """Copy a remote file into a per-process temporary folder, keeping its name."""
    if url in _TMP:
        return _TMP[url]
    root = Path(tempfile.mkdtemp(prefix="fasteval-fetch-"))
    dest = root / Path(path).name
    with fs.open_input_stream(path) as src, open(dest, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    _TMP[url] = str(dest)
    return str(dest)


def _fetch_one(x: str) -> list[Any]:
    """A path unchanged; a URL as local copies (text) or polars frames (Parquet)."""
    if not _is_url(x):
        return [x]
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from fasteval.io.tables import PARQUET_SUFFIXES

    try:
        fs, path = pafs.FileSystem.from_uri(x)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            msg = f"no such file: {x}"
            raise InputFormatError(msg)
        if info.type == pafs.FileType.Directory:
            files = sorted(
                (
                    f
                    for f in fs.get_file_info(pafs.FileSelector(path))
                    if f.type == pafs.FileType.File and not f.base_name.startswith(".")
                ),
                key=lambda f: f.path,
            )
            if not files:
                msg = f"{x}: the directory holds no run files"
                raise InputFormatError(msg)
            paths = [f.path for f in files]
        else:
            paths = [path]
        out: list[Any] = []
        for p in paths:
            if Path(p).suffix.lower() in PARQUET_SUFFIXES:
                out.append(pl.from_arrow(pq.read_table(p, filesystem=fs)))
            else:
                out.append(_local_copy(fs, p, f"{x}#{p}"))
        return out
    except (OSError, ValueError) as e:
        msg = f"cannot read {x}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        raise InputFormatError(msg) from None


def fetch_inputs(src: Source) -> tuple[Any, list[Any]]:
    """Worker side: qrels and runs in a form :func:`fasteval.engine.prepare` reads."""
    q = _fetch_one(src.qrels)
    if len(q) != 1:
        msg = f"qrels must be one file, got a folder: {src.qrels}"
        raise InputFormatError(msg)
    runs = [item for r in src.runs for item in _fetch_one(r)]
    return q[0], runs


# --------------------------------------------------------------------------- worker cache

_CACHE: OrderedDict[str, Any] = OrderedDict()
_LOCK = threading.Lock()


def _cached(token: str, build: Callable[[], Any]) -> Any:
    """Per-process memo of prepared inputs (a worker prepares each input once)."""
    with _LOCK:
        if token in _CACHE:
            _CACHE.move_to_end(token)
            return _CACHE[token]
        value = build()
        _CACHE[token] = value
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return value


def _token(obj: Any) -> str:
    """Cache key of a spec (the kernel thread count does not change the prepared data)."""
    import cloudpickle

    if hasattr(obj, "kernel_threads"):
        obj = dataclasses.replace(obj, kernel_threads=None)
    return hashlib.sha256(cloudpickle.dumps(obj)).hexdigest()[:24]


def _data_hash(*arrays: np.ndarray, names: Sequence[str] = ()) -> str:
    h = hashlib.sha256("\n".join(names).encode())
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _check_same_data(expected: str, got: str) -> None:
    if expected != got:
        msg = (
            f"workers read different data (fingerprint {got} vs {expected})\n"
            "  hint: every worker must see the same files at the same path or URL"
        )
        raise DataMismatchError(msg)


# --------------------------------------------------------------------------- driving tasks


def _progress_bar(total: int, initial: int, unit: str, desc: str, progress: bool | None) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        disable=None if progress is None else not progress,
    )


def _run_blocks(
    client: Any,
    fn: Callable[..., Any],
    blocks: Sequence[tuple[Any, ...]],
    sizes: Sequence[int],
    *,
    retries: int,
    name: str,
    bar: Any,
    on_done: Callable[[int, Any], None],
) -> None:
    """Submit ``fn(*block)`` for every block; call ``on_done(i, result)`` as they finish.

    A block that fails (after its retries) does not stop the others: every
    other block still finishes and is handed to ``on_done`` (so a study keeps
    it), then the first error is raised. An interrupt cancels what is left.
    """
    distributed = _require_dask()
    tag = uuid.uuid4().hex[:8]
    futures = [
        client.submit(fn, *b, retries=retries, pure=False, key=f"fasteval-{name}-{tag}-{i}")
        for i, b in enumerate(blocks)
    ]
    index = {f.key: i for i, f in enumerate(futures)}
    error: BaseException | None = None
    try:
        for fut in distributed.as_completed(futures):
            i = index[fut.key]
            if fut.status == "error":
                error = error or fut.exception()
            else:
                on_done(i, fut.result())
                bar.update(sizes[i])
            fut.release()
    finally:
        client.cancel([f for f in futures if not f.done()])
    if error is not None:
        raise error


def _plan_on_worker(client: Any, fn: Callable[..., Any], *args: Any, retries: int) -> Any:
    key = f"fasteval-plan-{uuid.uuid4().hex[:8]}"
    return client.submit(fn, *args, retries=retries, pure=False, key=key).result()


# --------------------------------------------------------------------------- studies


@dataclass(frozen=True)
class StudySpec:
    """Everything a worker needs to rebuild a study's context."""

    kind: str
    source: Source
    measures: tuple[str, ...] | None
    scorer: Any  # a picklable Scorer, or None
    params: tuple[tuple[str, Any], ...]
    relevance_level: int = 1
    compat: int = 9
    kernel_threads: int | None = field(default=None, compare=False)


def _study_context(token: str, spec: StudySpec) -> tuple[Any, list[Any], dict[str, Any], str]:
    def build() -> tuple[Any, list[Any], dict[str, Any], str]:
        from fasteval.analysis import studies as st
        from fasteval.engine.compact import prepare_compact

        qrels, runs = fetch_inputs(spec.source)
        # the compact form, read batch by batch: what a worker holds for the whole study
        prep = prepare_compact(
            qrels,
            runs,
            compat=spec.compat,
            lenient=spec.source.lenient,
            run_id_from=spec.source.run_id_from,
        )
        params = dict(spec.params)
        ctx, settings, extra = st.PLANNERS[spec.kind](
            None,
            None,
            list(spec.measures) if spec.measures is not None else None,
            prepared=prep,
            scorer=spec.scorer,
            relevance_level=spec.relevance_level,
            compat=spec.compat,
            **params,
        )
        h = _data_hash(ctx.enc.qr_rel, ctx.enc.qr_off, ctx.full, names=ctx.enc.run_names)
        return ctx, settings, extra, h

    with parallel.kernel_threads(spec.kernel_threads):
        return _cached(token, build)  # type: ignore[no-any-return]


def _study_plan(token: str, spec: StudySpec, seed: int) -> tuple[Any, ...]:
    from fasteval.analysis import studies as st

    ctx, settings, extra, h = _study_context(token, spec)
    return settings, st._fingerprint(ctx, seed, extra), st.full_frame(ctx), h


def _study_block(
    token: str, spec: StudySpec, seed: int, data: str, si: int, lo: int, hi: int
) -> pl.DataFrame:
    from fasteval.analysis import studies as st

    ctx, settings, _, h = _study_context(token, spec)
    _check_same_data(data, h)
    rows: list[dict[str, Any]] = []
    with parallel.kernel_threads(spec.kernel_threads):
        for rep in range(lo, hi):
            rows.extend(st.run_unit(ctx, settings[si], rep, seed))
    return pl.DataFrame(rows, schema=st.UNIT_SCHEMA)


def _part_dir(out: Path, label: str) -> Path:
    return out / "parts" / f"setting={label}"


def _write_atomic(df: pl.DataFrame, f: Path) -> None:
    from fasteval.io.writers import write_parquet

    f.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(df, f)


def _load_parts(out: Path, label: str) -> tuple[list[pl.DataFrame], set[int]]:
    """Finished blocks of one setting saved by an earlier (interrupted) run."""
    parts: list[pl.DataFrame] = []
    covered: set[int] = set()
    d = _part_dir(out, label)
    if not d.is_dir():
        return parts, covered
    for f in sorted(d.glob("reps=*.parquet")):
        from fasteval.analysis import studies as st

        df = st.read_units(f)  # checksums verified
        reps = set(df["rep"].unique().to_list()) - covered
        if reps:
            parts.append(df.filter(pl.col("rep").is_in(sorted(reps))))
            covered |= reps
    return parts, covered


def _missing_blocks(reps: int, covered: set[int], size: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    rep = 0
    while rep < reps:
        if rep in covered:
            rep += 1
            continue
        hi = rep
        while hi < reps and hi not in covered and hi - rep < size:
            hi += 1
        out.append((rep, hi))
        rep = hi
    return out


def study(  # noqa: PLR0913 (keyword-only options)
    kind: str,
    qrels: Any,
    runs: Any,
    measures: Sequence[str] | str | None = None,
    *,
    client: Any,
    seed: int = 0,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = False,
    scorer: Any = None,
    relevance_level: int = 1,
    compat: int = 9,
    run_id_from: str = "tag",
    block: int | None = None,
    retries: int = DEFAULT_RETRIES,
    kernel_threads: int | None = None,
    **params: Any,
) -> Any:
    """A robustness study (``subsample``, ``pool-depth``, ``leave-out``) on a Dask cluster.

    The result, and the files in ``out_dir``, are those of
    :func:`fasteval.studies.subsample` / ``pool_depth`` / ``leave_out``
    with the same arguments, bit for bit, whatever ``block`` and the number
    of workers.

    Parameters
    ----------
    kind
        ``"subsample"``, ``"pool-depth"`` or ``"leave-out"``.
    qrels, runs
        Paths or URLs every worker can read (see the module docstring).
    measures, scorer, seed, out_dir, relevance_level, compat, **params
        As for the local study functions (``rates``, ``reps``, ``depths``,
        ``pool_runs``, ``groups``, ``depth``). A ``scorer`` must be picklable.
    client
        A ``distributed.Client`` or an address (see :func:`connect`).
    progress
        tqdm bar over finished repetitions (``None``: only on a terminal).
    block
        Repetitions per task (default: about 4 tasks per worker).
    retries
        Times a task that raised is retried (lost workers are handled by the
        scheduler regardless).
    kernel_threads
        numba threads per task on the workers (default: numba's, i.e. the
        worker machine's cores).

    Returns
    -------
    fasteval.studies.StudyResult
    """
    from fasteval.analysis import studies as st

    if kind not in st.PLANNERS:
        msg = f"unknown study {kind!r}; one of {', '.join(st.PLANNERS)}"
        raise ParameterError(msg)
    if scorer is not None and measures is not None:
        msg = "give measures or a scorer, not both"
        raise ParameterError(msg)
    ms = (
        None
        if measures is None
        else ((measures,) if isinstance(measures, str) else tuple(measures))
    )
    ps = dict(params)
    if isinstance(ps.get("groups"), dict):
        ps["groups"] = dict(sorted(ps["groups"].items()))
    spec = StudySpec(
        kind,
        Source.of(qrels, runs, run_id_from),
        ms,
        scorer,
        tuple(sorted(ps.items())),
        relevance_level,
        compat,
        kernel_threads,
    )
    token = _token(spec)
    out = Path(out_dir) if out_dir is not None else None
    with connect(client) as c:
        settings, fp, full, data = _plan_on_worker(
            c, _study_plan, token, spec, seed, retries=retries
        )
        settings_parts: dict[int, list[pl.DataFrame]] = {}
        covered: dict[int, set[int]] = {}
        finished: list[pl.DataFrame] = []
        if out is not None:
            st.check_out_dir(out, fp)
        for si, s in enumerate(settings):
            f = st.setting_file(out, s) if out is not None else None
            if f is not None and f.exists():
                finished.append(st.read_units(f, fp))
                shutil.rmtree(_part_dir(f.parent, s.label), ignore_errors=True)
                continue
            parts, cov = _load_parts(out, s.label) if out is not None else ([], set())
            settings_parts[si] = parts
            covered[si] = cov
        todo = sum(settings[si].reps - len(cov) for si, cov in covered.items())
        size = _block_size(todo, c, block)
        blocks = [
            (si, lo, hi)
            for si, cov in covered.items()
            for lo, hi in _missing_blocks(settings[si].reps, cov, size)
        ]
        done_units = sum(s.reps for s in settings) - todo

        def on_done(i: int, df: pl.DataFrame) -> None:
            si, lo, hi = blocks[i]
            s = settings[si]
            if out is not None:
                _write_atomic(df, _part_dir(out, s.label) / f"reps={lo:06d}-{hi:06d}.parquet")
            settings_parts[si].append(df)
            covered[si].update(range(lo, hi))
            if len(covered[si]) == s.reps:
                whole = pl.concat(settings_parts.pop(si)).sort("rep", maintain_order=True)
                if out is not None:
                    _write_atomic(whole, st.setting_file(out, s))
                    shutil.rmtree(_part_dir(out, s.label), ignore_errors=True)
                finished.append(whole)

        with _progress_bar(
            todo + done_units, done_units, "variant", f"{kind} study (cluster)", progress
        ) as bar:
            _run_blocks(
                c,
                _study_block,
                [(token, spec, seed, data, si, lo, hi) for si, lo, hi in blocks],
                [hi - lo for _, lo, hi in blocks],
                retries=retries,
                name=f"study-{kind}",
                bar=bar,
                on_done=on_done,
            )
    if out is not None and (out / "parts").is_dir() and not any((out / "parts").iterdir()):
        (out / "parts").rmdir()
    return st.finish_study(settings, finished, full, out)


_STUDY_KIND = {"subsample": "subsample", "pool_depth": "pool-depth", "leave_out": "leave-out"}


def with_cluster(fn: Callable[..., Any], cluster: str | None) -> Callable[..., Any]:
    """``fn`` itself without a cluster; else its cluster counterpart bound to ``cluster``.

    ``fn`` is :func:`fasteval.studies.subsample` / ``pool_depth`` /
    ``leave_out`` or :func:`fasteval.evaluate`.
    """
    address = cluster_address(cluster)
    if address is None:
        return fn
    if fn.__name__ in _STUDY_KIND:
        return partial(study, _STUDY_KIND[fn.__name__], client=address)
    if fn.__name__ == "evaluate":
        return partial(evaluate, client=address)
    msg = f"no cluster version of {fn.__name__}"
    raise ParameterError(msg)


# --------------------------------------------------------------------------- information difference


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
        return data, _data_hash(enc.qr_rel, enc.qr_off, data.cdz, names=enc.run_names)

    with parallel.kernel_threads(spec.kernel_threads):
        return _cached(token, build)  # type: ignore[no-any-return]


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
    _check_same_data(data_hash, h)
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
    token = _token(spec)
    plist = None if pairs is None else [tuple(p) for p in pairs]
    with connect(client) as c:
        names, a, b, cols, h = _plan_on_worker(
            c, _infodiff_plan, token, spec, plist, bin_by, bins, retries=retries
        )
        n = int(a.shape[0])
        size = _block_size(n, c, block)
        bounds = [(lo, min(lo + size, n)) for lo in range(0, n, size)]
        mean = np.full(n, np.nan)

        def on_done(i: int, m: np.ndarray) -> None:
            lo, hi = bounds[i]
            mean[lo:hi] = m

        with _progress_bar(n, 0, "pair", "information difference (cluster)", progress) as bar:
            _run_blocks(
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


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class EvalSpec:
    """What a worker needs to read the qrels and its own runs."""

    source: Source


def _eval_qrels(token: str, spec: EvalSpec) -> Any:
    """The qrels as a table, read once per worker (the runs are read per block)."""

    def build() -> Any:
        from fasteval.io.tables import qrels_columns, qrels_to_table

        q = _fetch_one(spec.source.qrels)
        if len(q) != 1:
            msg = f"qrels must be one file, got a folder: {spec.source.qrels}"
            raise InputFormatError(msg)
        return qrels_to_table(qrels_columns(q[0], lenient=spec.source.lenient))

    return _cached(token, build)


def _eval_plan(spec: EvalSpec) -> list[list[str]]:
    """The run inputs, one list per run in the readers' order (text files, then tables).

    Local paths are expanded to their files (a folder's files), and the text
    files naming the same run (by their first line) are listed together, so a
    block of these lists holds whole runs. A URL stays one input (a remote
    folder or Parquet archive is read by the one task that holds it).
    """
    from fasteval.io.batches import plan_batches
    from fasteval.io.tables import expand_paths

    items: list[str] = []
    for r in spec.source.runs:
        items.extend([r] if _is_url(r) else [os.fspath(p) for p in expand_paths([r])])
    # a budget of one row: every run (or table) its own batch, in the readers' order
    batches = plan_batches(items, 1, spec.source.run_id_from, split=False)
    return [[os.fspath(u.item) for u in b.units] for b in batches]


def _eval_block(
    token: str,
    spec: EvalSpec,
    items: list[str],
    measures: Any,
    kwargs: dict[str, Any],
    kernel_threads: int | None,
) -> pl.DataFrame:
    """Evaluate the runs of one block, reading only their files."""
    from fasteval.api import evaluate as local_evaluate

    q = _eval_qrels(token, spec)
    runs = [x for item in items for x in _fetch_one(item)]
    with parallel.kernel_threads(kernel_threads):
        return local_evaluate(
            q,
            runs,
            measures,
            lenient=spec.source.lenient,
            run_id_from=spec.source.run_id_from,
            **kwargs,
        )


def refuse_diversity(measures: Sequence[str], fmt: str) -> None:
    """``fasteval eval --cluster`` evaluates ad-hoc measures (and RIC) only."""
    from fasteval.measures.catalog import split

    if fmt == "ndeval" or "diversity" in split(measures):
        msg = "--cluster evaluates ad-hoc measures only; run diversity measures without --cluster"
        raise ParameterError(msg)


def evaluate(  # noqa: PLR0913 (keyword-only options)
    qrels: Any,
    runs: Any,
    measures: str | Sequence[str] | None = None,
    *,
    client: Any,
    block: int | None = None,
    retries: int = DEFAULT_RETRIES,
    progress: bool | None = None,
    kernel_threads: int | None = None,
    lenient: bool = False,
    run_id_from: str = "tag",
    **kwargs: Any,
) -> pl.DataFrame:
    """:func:`fasteval.evaluate` on a Dask cluster, in blocks of runs.

    A task evaluates a block of whole runs and reads only their files (each
    worker reads the qrels once). The table equals :func:`fasteval.evaluate`'s
    with the same arguments (same rows, same order, same bits). ``block`` is
    the number of runs per task (a Parquet archive or a URL folder counts as
    one: it is read whole by one task). ``**kwargs`` are ``evaluate``'s
    (``per_query``, ``compat``, ``relevance_level``, ``complete``...).
    """
    refuse_diversity([measures] if isinstance(measures, str) else list(measures or []), "")
    spec = EvalSpec(Source.of(qrels, runs, run_id_from, lenient))
    token = _token(spec)
    with connect(client) as c:
        groups = _plan_on_worker(c, _eval_plan, spec, retries=retries)
        size = _block_size(len(groups), c, block)
        bounds = [(lo, min(lo + size, len(groups))) for lo in range(0, len(groups), size)]
        parts: list[pl.DataFrame | None] = [None] * len(bounds)

        def on_done(i: int, df: pl.DataFrame) -> None:
            parts[i] = df

        with _progress_bar(len(groups), 0, "run", "evaluating (cluster)", progress) as bar:
            _run_blocks(
                c,
                _eval_block,
                [
                    (
                        token,
                        spec,
                        [item for g in groups[lo:hi] for item in g],
                        measures,
                        kwargs,
                        kernel_threads,
                    )
                    for lo, hi in bounds
                ],
                [hi - lo for lo, hi in bounds],
                retries=retries,
                name="eval",
                bar=bar,
                on_done=on_done,
            )
    return pl.concat([p for p in parts if p is not None])
