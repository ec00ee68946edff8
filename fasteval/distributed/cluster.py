"""Connecting to a Dask cluster, reading inputs on workers, and driving blocks of tasks.

The shared machinery of :mod:`fasteval.distributed`: the cluster address and
client, the inputs as every worker reads them (:class:`Source`), a small
per-worker cache of prepared inputs, and the loop that submits blocks and hands
their results back as they finish.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

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


def require_dask() -> Any:
    """The ``distributed`` module.

    Returns
    -------
    module
        Dask's ``distributed``.

    Raises
    ------
    ParameterError
        When Dask distributed is not installed (with how to install it).
    """
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
    distributed = require_dask()
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


def n_workers(client: Any) -> int:
    """The number of workers ``client``'s scheduler knows (at least 1).

    Parameters
    ----------
    client
        A ``distributed.Client``.

    Returns
    -------
    int
    """
    return max(1, len(client.scheduler_info().get("workers", {})))


def block_size(total: int, client: Any, block: int | None) -> int:
    """Units per task: ``block`` if given, else about :data:`TASKS_PER_WORKER` tasks per worker.

    Parameters
    ----------
    total
        Units to split (repetitions, pairs, runs).
    client
        A ``distributed.Client`` (its workers are counted).
    block
        The caller's choice, or None.

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ParameterError
        For ``block < 1``.
    """
    if block is not None:
        if int(block) < 1:
            msg = f"block must be >= 1, got {block}"
            raise ParameterError(msg)
        return int(block)
    return max(1, math.ceil(total / (TASKS_PER_WORKER * n_workers(client))))


# --------------------------------------------------------------------------- inputs


def is_url(x: str) -> bool:
    """Whether ``x`` is a URL (``scheme://...``) rather than a path."""
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
            return s if is_url(s) else os.path.abspath(s)

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


def fetch_one(x: str) -> list[Any]:
    """Worker side: one input as the readers take it.

    Parameters
    ----------
    x
        A path or URL (a file or a folder of run files).

    Returns
    -------
    list
        A path unchanged (one item); a URL as local copies (text) or polars
        frames (Parquet), one per file.

    Raises
    ------
    InputFormatError
        When the URL cannot be read, does not exist, or is an empty folder.
    """
    if not is_url(x):
        return [x]
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from fasteval.io import formats

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
            if formats.is_parquet(p):
                out.append(pl.from_arrow(pq.read_table(p, filesystem=fs)))
            else:
                out.append(_local_copy(fs, p, f"{x}#{p}"))
        return out
    except (OSError, ValueError) as e:
        msg = f"cannot read {x}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        raise InputFormatError(msg) from None


def fetch_inputs(src: Source) -> tuple[Any, list[Any]]:
    """Worker side: qrels and runs in a form :func:`fasteval.engine.prepare` reads."""
    q = fetch_one(src.qrels)
    if len(q) != 1:
        msg = f"qrels must be one file, got a folder: {src.qrels}"
        raise InputFormatError(msg)
    runs = [item for r in src.runs for item in fetch_one(r)]
    return q[0], runs


# --------------------------------------------------------------------------- worker cache

_CACHE: OrderedDict[str, Any] = OrderedDict()
_LOCK = threading.Lock()


def cached(token: str, build: Callable[[], Any]) -> Any:
    """Per-process memo of prepared inputs (a worker prepares each input once).

    Parameters
    ----------
    token
        The input's key (:func:`spec_token`).
    build
        Makes the value on a miss; the last few values are kept.

    Returns
    -------
    Any
        The value kept for ``token``.
    """
    with _LOCK:
        if token in _CACHE:
            _CACHE.move_to_end(token)
            return _CACHE[token]
        value = build()
        _CACHE[token] = value
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return value


def spec_token(obj: Any) -> str:
    """Cache key of a spec (the kernel thread count does not change the prepared data).

    Parameters
    ----------
    obj
        A picklable spec (a dataclass; its ``kernel_threads`` is ignored).

    Returns
    -------
    str
        24 hex digits of the SHA-256 of its pickle.
    """
    import cloudpickle

    if hasattr(obj, "kernel_threads"):
        obj = dataclasses.replace(obj, kernel_threads=None)
    return hashlib.sha256(cloudpickle.dumps(obj)).hexdigest()[:24]


def data_hash(*arrays: np.ndarray, names: Sequence[str] = ()) -> str:
    """A short fingerprint of the data a worker prepared, to check all workers agree.

    Parameters
    ----------
    *arrays
        Arrays hashed by their bytes.
    names
        Names hashed first (the run names).

    Returns
    -------
    str
        16 hex digits.
    """
    h = hashlib.sha256("\n".join(names).encode())
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def check_same_data(expected: str, got: str) -> None:
    """Refuse a worker whose data differ from the plan's (:func:`data_hash`).

    Raises
    ------
    DataMismatchError
        When ``got`` differs from ``expected``.
    """
    if expected != got:
        msg = (
            f"workers read different data (fingerprint {got} vs {expected})\n"
            "  hint: every worker must see the same files at the same path or URL"
        )
        raise DataMismatchError(msg)


# --------------------------------------------------------------------------- driving tasks


def progress_bar(total: int, initial: int, unit: str, desc: str, progress: bool | None) -> Any:
    """A tqdm bar (``progress=None``: shown only on a terminal).

    Parameters
    ----------
    total, initial
        Units in all, and already done.
    unit, desc
        tqdm's unit and description.
    progress
        Show it (True), hide it (False), or let tqdm decide (None).

    Returns
    -------
    tqdm.tqdm
    """
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        disable=None if progress is None else not progress,
    )


def run_blocks(
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

    Parameters
    ----------
    client
        A ``distributed.Client``.
    fn, blocks
        The task function and the arguments of each task.
    sizes
        Units per block (for the progress bar).
    retries
        Times a task that raised is retried.
    name
        Part of the task keys.
    bar
        A progress bar (:func:`progress_bar`).
    on_done
        Called with the block's index and its result, as blocks finish.
    """
    distributed = require_dask()
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


def plan_on_worker(client: Any, fn: Callable[..., Any], *args: Any, retries: int) -> Any:
    """``fn(*args)`` run as one task on a worker (the client never reads the inputs).

    Parameters
    ----------
    client
        A ``distributed.Client``.
    fn, args
        The planning function and its arguments.
    retries
        Times the task is retried if it raises.

    Returns
    -------
    Any
        What ``fn`` returns.
    """
    key = f"fasteval-plan-{uuid.uuid4().hex[:8]}"
    return client.submit(fn, *args, retries=retries, pure=False, key=key).result()
