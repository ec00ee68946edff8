"""Robustness studies on a Dask cluster, in blocks of repetitions.

A task runs repetitions ``[lo, hi)`` of one setting on a worker that prepared
the study's inputs once (:func:`fasteval.distributed.cluster.cached`); the
client saves each finished block and each finished setting as it arrives, so
an interrupted study resumes, from the cluster or locally.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
        h = data_hash(ctx.enc.qr_rel, ctx.enc.qr_off, ctx.full, names=ctx.enc.run_names)
        return ctx, settings, extra, h

    with parallel.kernel_threads(spec.kernel_threads):
        return cached(token, build)  # type: ignore[no-any-return]


def _study_plan(token: str, spec: StudySpec, seed: int) -> tuple[Any, ...]:
    from fasteval.analysis import studies as st

    ctx, settings, extra, h = _study_context(token, spec)
    return settings, ctx.fingerprint(seed, extra), st.full_frame(ctx), h


def _study_block(
    token: str, spec: StudySpec, seed: int, data: str, si: int, lo: int, hi: int
) -> pl.DataFrame:
    from fasteval.analysis import studies as st
    from fasteval.analysis.study_store import UNIT_SCHEMA

    ctx, settings, _, h = _study_context(token, spec)
    check_same_data(data, h)
    rows: list[dict[str, Any]] = []
    with parallel.kernel_threads(spec.kernel_threads):
        for rep in range(lo, hi):
            rows.extend(st.run_unit(ctx, settings[si], rep, seed))
    return pl.DataFrame(rows, schema=UNIT_SCHEMA)


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
        from fasteval.analysis.study_store import read_units

        df = read_units(f)  # checksums verified
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


@dataclass
class _Blocks:
    """The client's record of a study's units: settings finished, blocks saved, blocks to run."""

    settings: list[Any]
    out: Path | None
    finished: list[pl.DataFrame] = field(default_factory=list)
    parts: dict[int, list[pl.DataFrame]] = field(default_factory=dict)  # per unfinished setting
    covered: dict[int, set[int]] = field(default_factory=dict)  # its reps saved or done
    todo: list[tuple[int, int, int]] = field(default_factory=list)  # (setting, lo, hi)

    @classmethod
    def resume(cls, settings: list[Any], out: Path | None, fp: dict[str, Any]) -> _Blocks:
        """What ``out`` already holds: whole settings, and blocks of an interrupted run."""
        from fasteval.analysis.study_store import check_out_dir, read_units, setting_file

        done = cls(settings, out)
        if out is not None:
            check_out_dir(out, fp)
        for si, s in enumerate(settings):
            f = setting_file(out, s) if out is not None else None
            if f is not None and f.exists():
                done.finished.append(read_units(f, fp))
                shutil.rmtree(_part_dir(f.parent, s.label), ignore_errors=True)
                continue
            parts, cov = _load_parts(out, s.label) if out is not None else ([], set())
            done.parts[si] = parts
            done.covered[si] = cov
        return done

    def missing(self) -> int:
        """Repetitions still to run."""
        return sum(self.settings[si].reps - len(cov) for si, cov in self.covered.items())

    def plan(self, size: int) -> None:
        """Split the missing repetitions into blocks of at most ``size``."""
        self.todo = [
            (si, lo, hi)
            for si, cov in self.covered.items()
            for lo, hi in _missing_blocks(self.settings[si].reps, cov, size)
        ]

    def add(self, i: int, df: pl.DataFrame) -> None:
        """Keep (and save) the units of block ``i``; a setting complete is saved whole."""
        from fasteval.analysis.study_store import setting_file

        si, lo, hi = self.todo[i]
        s, out = self.settings[si], self.out
        if out is not None:
            _write_atomic(df, _part_dir(out, s.label) / f"reps={lo:06d}-{hi:06d}.parquet")
        self.parts[si].append(df)
        self.covered[si].update(range(lo, hi))
        if len(self.covered[si]) == s.reps:
            whole = pl.concat(self.parts.pop(si)).sort("rep", maintain_order=True)
            if out is not None:
                _write_atomic(whole, setting_file(out, s))
                shutil.rmtree(_part_dir(out, s.label), ignore_errors=True)
            self.finished.append(whole)


def _study_spec(  # noqa: PLR0913 (the options of study())
    kind: str,
    qrels: Any,
    runs: Any,
    run_id_from: str,
    measures: Sequence[str] | str | None,
    scorer: Any,
    params: dict[str, Any],
    relevance_level: int,
    compat: int,
    kernel_threads: int | None,
) -> StudySpec:
    """The checked, canonical spec of a study (its token keys the workers' caches)."""
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
    return StudySpec(
        kind,
        Source.of(qrels, runs, run_id_from),
        ms,
        scorer,
        tuple(sorted(ps.items())),
        relevance_level,
        compat,
        kernel_threads,
    )


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

    spec = _study_spec(
        kind,
        qrels,
        runs,
        run_id_from,
        measures,
        scorer,
        params,
        relevance_level,
        compat,
        kernel_threads,
    )
    token = spec_token(spec)
    out = Path(out_dir) if out_dir is not None else None
    with connect(client) as c:
        settings, fp, full, data = plan_on_worker(
            c, _study_plan, token, spec, seed, retries=retries
        )
        units = _Blocks.resume(settings, out, fp)
        todo = units.missing()
        units.plan(block_size(todo, c, block))
        done_units = sum(s.reps for s in settings) - todo
        with progress_bar(
            todo + done_units, done_units, "variant", f"{kind} study (cluster)", progress
        ) as bar:
            run_blocks(
                c,
                _study_block,
                [(token, spec, seed, data, si, lo, hi) for si, lo, hi in units.todo],
                [hi - lo for _, lo, hi in units.todo],
                retries=retries,
                name=f"study-{kind}",
                bar=bar,
                on_done=units.add,
            )
    if out is not None and (out / "parts").is_dir() and not any((out / "parts").iterdir()):
        (out / "parts").rmdir()
    return st.finish_study(settings, units.finished, full, out)
