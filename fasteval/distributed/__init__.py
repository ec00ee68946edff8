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

The work is split along its kinds: :mod:`.cluster` (connecting, inputs, the
worker cache, driving tasks), :mod:`.studies`, :mod:`.information` and
:mod:`.evaluation`; the public names are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from fasteval.distributed.cluster import (
    DEFAULT_RETRIES,
    ENV_VAR,
    TASKS_PER_WORKER,
    Source,
    block_size,
    cluster_address,
    connect,
    fetch_inputs,
)
from fasteval.distributed.evaluation import EvalSpec, evaluate, refuse_diversity
from fasteval.distributed.information import PairSpec, information_difference
from fasteval.distributed.studies import StudySpec, study
from fasteval.errors import ParameterError

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


__all__ = [
    "DEFAULT_RETRIES",
    "ENV_VAR",
    "TASKS_PER_WORKER",
    "EvalSpec",
    "PairSpec",
    "Source",
    "StudySpec",
    "block_size",
    "cluster_address",
    "connect",
    "evaluate",
    "fetch_inputs",
    "information_difference",
    "refuse_diversity",
    "study",
    "with_cluster",
]
