"""Robustness of system rankings to missing judgments (SPEC 7), at scale.

A study re-scores every run under many qrels variants (keep-masks over the
judgments of runs joined once, :mod:`fasteval.analysis.variants`) and compares
each variant's system ranking with the full-qrels ranking.

The work is split into *units*, one per (setting, repetition). A unit is a pure
function of the prepared inputs, the setting, the repetition and the study
seed (:func:`run_unit`): its random generator is
``SeedSequence(seed, spawn_key=(kind, setting key, rep))``, so results do not
depend on the order units run in, and units can be farmed out. A study
writes one Parquet file per finished setting into its output folder and, when
run again with the same parameters, skips the settings already there.

Per unit and measure, the statistics compare the variant's system scores
with the full-qrels scores: Kendall's tau (b), tau_AP, Spearman's rho and the
RMSE of the scores (plus information tau when available). Per setting, the
summary gives the mean, a 95% confidence interval of the mean (Student t),
the min and the max over repetitions.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import polars as pl
from tqdm import tqdm

from fasteval.analysis import correlation as corr
from fasteval.analysis import study_scorers as ss
from fasteval.analysis import variants as var
from fasteval.analysis.statistics import student_t_ppf
from fasteval.analysis.study_scorers import higher_is_better
from fasteval.analysis.study_store import (
    UNIT_SCHEMA,
    check_out_dir,
    read_part,
    record_files,
    setting_file,
    write_part,
)
from fasteval.engine import Prepared, QrelsLike, RunsLike
from fasteval.engine.compact import Compact, prepare_compact
from fasteval.engine.encode import Encoded
from fasteval.errors import ParameterError
from fasteval.io import writers
from fasteval.measures.parser import parse_measures

KINDS = {"subsample": 1, "pool-depth": 2, "leave-out": 3}
DEFAULT_RATES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DEFAULT_DEPTHS = (1, 2, 3, 5, 10, 20, 30, 50, 75, 100)
DEFAULT_MEASURES = ("map", "ndcg", "P_10")


def fast_tau_ap(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`fasteval.analysis.correlation.tau_ap` without its Python loop (for many calls).

    Parameters
    ----------
    a, b
        Scores of the same systems (``a`` the reference, e.g. full-qrels scores).

    Returns
    -------
    float
        tau_AP of ``b`` against ``a``; inputs the vectorized form cannot take
        (fewer than 2 systems, NaN, unequal shapes) go to the loop, for its
        checks and messages.
    """
    x = np.asarray(a, np.float64)
    y = np.asarray(b, np.float64)
    n = x.shape[0]
    if n < 2 or x.shape != y.shape or np.isnan(x).any() or np.isnan(y).any():
        return corr.tau_ap(x, y)  # its checks and messages
    xa = x[np.lexsort((-x, -y))]
    above = np.tri(n, k=-1, dtype=bool)  # above[i, j]: j is listed before i
    gt = ((xa[None, :] > xa[:, None]) & above).sum(axis=1)
    eq = ((xa[None, :] == xa[:, None]) & above).sum(axis=1)
    correct = gt[1:] + 0.5 * eq[1:]
    return float(2.0 * (correct / np.arange(1, n)).sum() / (n - 1) - 1.0)


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (:func:`fasteval.analysis.correlation.kendall_tau`)."""
    return corr.kendall_tau(a, b, "b")


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    """Root mean squared difference of two score vectors."""
    return float(np.sqrt(np.mean((a - b) ** 2)))


def information_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Information tau of two score vectors (:func:`.correlation.information_tau`)."""
    return float(corr.information_tau(a, b))


#: The statistics a study reports per unit and measure: name -> ``f(full, variant) -> float``.
STATISTICS: Mapping[str, Callable[[np.ndarray, np.ndarray], float]] = MappingProxyType(
    {
        "tau": kendall_tau_b,
        "tau_ap": fast_tau_ap,
        "spearman": corr.spearman,
        "rmse": rmse,
        "information_tau": information_tau,
    }
)


@dataclass
class Setting:
    """One setting of a study: a subsampling rate, a pool depth, or a left-out set."""

    label: str  # file-name-safe, unique within the study
    x: float  # position on the plot's x axis (NaN for group names)
    key: int  # stable integer for seeding
    value: Any  # rate (float), depth (int), share of runs (float) or group name (str)
    reps: int

    @classmethod
    def for_rates(cls, rates: Sequence[float], reps: int, what: str) -> list[Setting]:
        """One setting per rate in (0, 1], each repeated ``reps`` times.

        Parameters
        ----------
        rates
            Sampling rates or shares, each in (0, 1] and distinct.
        reps
            Repetitions per rate (>= 1).
        what
            What a rate is, for messages (``"rate"``, ``"leave-out share"``).

        Returns
        -------
        list of Setting
            Labelled ``f"{rate:g}"``, keyed by ``round(rate * 1e6)`` for seeding.

        Raises
        ------
        ParameterError
            For ``reps < 1``, a rate outside (0, 1], or a repeated rate.
        """
        if reps < 1:
            msg = f"reps must be >= 1, got {reps}"
            raise ParameterError(msg)
        out = []
        for rate in rates:
            r = float(rate)
            if not 0.0 < r <= 1.0:
                msg = f"{what} must be in (0, 1], got {r!r}"
                raise ParameterError(msg)
            out.append(cls(f"{r:g}", r, round(r * 1_000_000), r, reps))
        if len({s.label for s in out}) != len(out):
            msg = f"repeated {what}s in {list(rates)}"
            raise ParameterError(msg)
        return out


@dataclass
class Context:
    """What every unit of one study shares: the data, the scorer, the full-qrels scores."""

    enc: Encoded
    scorer: var.Scorer
    names: list[str]
    full: np.ndarray  # (n_runs, n_names)
    kind: str
    relevance_level: int = 1
    depth: int = 100  # pool depth for leave-out
    groups: np.ndarray | None = None  # group index per run (leave-out by group)
    group_names: list[str] = field(default_factory=list)
    pool_rank: np.ndarray | None = None
    pairs: tuple[np.ndarray, np.ndarray] | None = None
    statistics: tuple[str, ...] = tuple(STATISTICS)
    higher_is_better: list[bool] | None = None  # per name (default: all)
    masker: var.Masker | None = None  # built by _context (or on first use)
    # the masker's buffers are reused: units of one context take turns (threads
    # of one Dask worker share its cached context)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def fingerprint(self, seed: int, extra: dict[str, Any]) -> dict[str, Any]:
        """What makes two studies the same: data, measures and their scores, seed, kind, plan.

        ``data`` hashes the runs and qrels only, ``scores`` the full-qrels scores, so a
        study with other measures differs in ``measures`` (and scores), not in its data.

        Parameters
        ----------
        seed
            The study seed.
        extra
            The plan and options of the study kind (rates, reps, depths, groups...).

        Returns
        -------
        dict
            JSON-able; written to ``study.json`` and hashed into each part file.
        """
        h = hashlib.sha256()
        h.update("\n".join(self.enc.run_names).encode())
        h.update(self.enc.qr_rel.tobytes())
        h.update(self.enc.qr_off.tobytes())
        scores = hashlib.sha256(np.ascontiguousarray(self.full).tobytes())
        return {
            "kind": self.kind,
            "seed": seed,
            "measures": list(self.names),
            "statistics": list(self.statistics),
            "data": h.hexdigest()[:16],
            "scores": scores.hexdigest()[:16],
            **extra,
        }


def unit_rng(seed: int, kind: str, setting_key: int, rep: int) -> np.random.Generator:
    """The generator of unit (setting, rep): independent of every other unit."""
    ss = np.random.SeedSequence(seed, spawn_key=(KINDS[kind], setting_key, rep))
    return np.random.default_rng(ss)


def unit_mask(ctx: Context, setting: Setting, rep: int, seed: int) -> np.ndarray:
    """The keep-mask of one unit."""
    rng = unit_rng(seed, ctx.kind, setting.key, rep)
    if ctx.kind == "subsample":
        return var.subsample_mask(
            ctx.enc, float(setting.value), rng, relevance_level=ctx.relevance_level
        )
    if ctx.kind == "pool-depth":
        assert ctx.pool_rank is not None
        return ctx.pool_rank <= int(setting.value)
    assert ctx.pairs is not None
    n_runs = len(ctx.enc.run_names)
    if ctx.groups is not None and isinstance(setting.value, str):
        left = ctx.groups == ctx.group_names.index(setting.value)
    elif ctx.groups is not None:
        n_g = len(ctx.group_names)
        pick = rng.permutation(n_g)[: max(1, round(float(setting.value) * n_g))]
        left = np.isin(ctx.groups, pick)
    else:
        pick = rng.permutation(n_runs)[: max(1, round(float(setting.value) * n_runs))]
        left = np.zeros(n_runs, bool)
        left[pick] = True
    run, j = ctx.pairs
    return var.leave_out_from_pairs(run, j, left, ctx.enc.qr_rel.shape[0])


def run_unit(ctx: Context, setting: Setting, rep: int, seed: int) -> list[dict[str, Any]]:
    """Score every run under the variant of (setting, rep) and compare with the full qrels.

    Runs whose score is NaN under the full qrels or the variant (e.g. an
    undefined HSA) are left out of that measure's comparison; a statistic
    over fewer than 2 runs is NaN. Scores of lower-is-better measures (DO)
    are negated for the rank correlations.

    The variant is built by ``ctx.masker`` (:class:`~fasteval.analysis.variants.Masker`),
    which reuses its buffers: units of one context sharing it from several
    threads take turns (``ctx.lock``).
    """
    keep = unit_mask(ctx, setting, rep, seed)
    with ctx.lock:
        if ctx.masker is None:
            uses_jdx = bool(getattr(ctx.scorer, "uses_jdx", True))
            ctx.masker = var.Masker(ctx.enc, with_jdx=uses_jdx)
        enc_v = ctx.masker(keep)
        scores = var.check_scores(ctx.scorer(enc_v), enc_v, ctx.names)
    n_kept = int(keep.sum())
    hib = ctx.higher_is_better or [True] * len(ctx.names)
    rows = []
    for j, name in enumerate(ctx.names):
        full, v = ctx.full[:, j], scores[:, j]
        ok = np.isfinite(full) & np.isfinite(v)
        if not ok.all():
            full, v = full[ok], v[ok]
        if not hib[j]:
            full, v = -full, -v
        for st in ctx.statistics:
            value = float(STATISTICS[st](full, v)) if full.shape[0] >= 2 else math.nan
            rows.append(
                {
                    "setting": setting.label,
                    "x": setting.x,
                    "rep": rep,
                    "measure": name,
                    "statistic": st,
                    "value": value,
                    "judgments": n_kept,
                }
            )
    return rows


def summarize(units: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Per setting, measure and statistic: n, mean, CI of the mean, min, max.

    The interval is ``mean +- t_{(1+confidence)/2, n-1} * sd / sqrt(n)``
    (sd with ``n - 1``); a single repetition gives a zero-width interval.
    """
    g = (
        units.group_by(["setting", "x", "measure", "statistic"], maintain_order=True)
        .agg(
            pl.len().alias("n"),
            pl.col("value").mean().alias("mean"),
            pl.col("value").std(ddof=1).alias("sd"),
            pl.col("value").min().alias("min"),
            pl.col("value").max().alias("max"),
            pl.col("judgments").mean().alias("judgments"),
        )
        .sort(["statistic", "measure", "x", "setting"], maintain_order=True)
    )
    tq = {n: student_t_ppf((1 + confidence) / 2, n - 1) for n in set(g["n"].to_list()) if n > 1}
    half = [
        tq[n] * sd / math.sqrt(n) if n > 1 and sd is not None else 0.0
        for n, sd in zip(g["n"].to_list(), g["sd"].to_list(), strict=True)
    ]
    h = pl.Series("half", half, dtype=pl.Float64)
    return g.with_columns(
        (pl.col("mean") - h).alias("ci_low"), (pl.col("mean") + h).alias("ci_high")
    ).select(
        "setting",
        "x",
        "measure",
        "statistic",
        "n",
        "mean",
        "ci_low",
        "ci_high",
        "min",
        "max",
        "sd",
        "judgments",
    )


class _StudyTables(NamedTuple):
    units: pl.DataFrame
    summary: pl.DataFrame
    full: pl.DataFrame


class StudyResult(_StudyTables):
    """A study's tables: every unit's statistics, the per-setting summary, full-qrels scores.

    Unpacks as the three tables; ``resumed`` counts the units (setting,
    repetition) read back from the output folder instead of computed.
    """

    resumed: int = 0


def run_study(
    ctx: Context,
    settings: Sequence[Setting],
    *,
    seed: int,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    extra: dict[str, Any] | None = None,
) -> StudyResult:
    """Run every unit of ``settings``, reusing the units already saved in ``out_dir``.

    Units are pure functions of (setting, repetition) and the seed, so a folder
    of the same study with fewer settings or repetitions is extended: its units
    are read back, the missing ones computed, and the result is the one a fresh
    run of the larger plan gives. Damaged part files are recomputed (with a
    warning naming them).
    """
    out = Path(out_dir) if out_dir is not None else None
    fp = ctx.fingerprint(seed, extra or {})
    trusted = out is not None and check_out_dir(out, fp, extend=True)
    parts: list[pl.DataFrame] = []
    plan: list[tuple[Setting, pl.DataFrame | None, list[int]]] = []
    resumed = 0
    for s in settings:
        saved = read_part(setting_file(out, s), s, fp) if out is not None and trusted else None
        done = set() if saved is None else set(saved["rep"].to_list())
        missing = [rep for rep in range(s.reps) if rep not in done]
        resumed += s.reps - len(missing)
        plan.append((s, saved, missing))

    with tqdm(
        total=sum(len(m) for _, _, m in plan),
        unit="variant",
        desc=f"{ctx.kind} study",
        disable=not progress,
    ) as bar:
        for s, saved, missing in plan:
            if missing:
                rows: list[dict[str, Any]] = []
                for rep in missing:
                    rows.extend(run_unit(ctx, s, rep, seed))
                    bar.update(1)
                df = pl.DataFrame(rows, schema=UNIT_SCHEMA)
                if saved is not None:  # every saved rep is kept in the file
                    df = pl.concat([saved, df]).sort("rep", maintain_order=True)
                if out is not None:
                    write_part(df, setting_file(out, s), fp)
            else:
                assert saved is not None  # nothing missing: all reps were saved
                df = saved
            parts.append(df.filter(pl.col("rep") < s.reps))
    return finish_study(settings, parts, full_frame(ctx), out, resumed=resumed)


def full_frame(ctx: Context) -> pl.DataFrame:
    """The full-qrels scores of a study: ``run_id, measure, value``."""
    return pl.DataFrame(
        {
            "run_id": np.repeat(np.array(ctx.enc.run_names, dtype=object), len(ctx.names)),
            "measure": np.tile(np.array(ctx.names, dtype=object), len(ctx.enc.run_names)),
            "value": ctx.full.reshape(-1),
        },
        schema={"run_id": pl.String, "measure": pl.String, "value": pl.Float64},
    )


def finish_study(
    settings: Sequence[Setting],
    parts: list[pl.DataFrame],
    full: pl.DataFrame,
    out: Path | None,
    *,
    resumed: int = 0,
) -> StudyResult:
    """Merge per-setting unit tables in study order, summarize, and save to ``out``.

    ``resumed``: how many of the units were read back from ``out`` (reported).
    """
    order = {s.label: i for i, s in enumerate(settings)}
    units = (
        pl.concat(parts)
        .with_columns(pl.col("setting").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort(["_o", "rep"], maintain_order=True)
        .drop("_o")
    )
    summary = summarize(units)
    if out is not None:
        writers.write_parquet(summary, out / "summary.parquet")
        writers.write_frame(summary, out / "summary.csv")
        writers.write_parquet(full, out / "full.parquet")
        record_files(out, out / "summary.parquet", out / "full.parquet")
    result = StudyResult(units, summary, full)
    result.resumed = resumed
    return result


# --------------------------------------------------------------------------- the three studies


def _context(
    kind: str,
    qrels: QrelsLike | None,
    runs: RunsLike | None,
    measures: Sequence[str] | str | None,
    prepared: Prepared | Compact | None,
    scorer: var.Scorer | None,
    relevance_level: int,
    compat: int,
) -> Context:
    """The data, scorer and full-qrels scores of a study.

    Inputs given as ``qrels`` and ``runs`` are read into the compact form
    (:func:`fasteval.engine.compact.prepare_compact`): batch by batch, keeping
    only the grades and judgment indices of the evaluated positions. The
    full-qrels scores are those of the variant that keeps every judgment.
    """
    if scorer is not None and measures is not None:
        msg = "give measures or a scorer, not both"
        raise ParameterError(msg)

    def _prepared() -> Prepared | Compact:
        if prepared is not None:
            return prepared
        if qrels is None or runs is None:
            msg = "give qrels and runs, or prepared=fasteval.engine.prepare(qrels, runs)"
            raise ParameterError(msg)
        return prepare_compact(qrels, runs, compat=compat)

    if scorer is None:
        ms = [measures] if isinstance(measures, str) else list(measures or DEFAULT_MEASURES)
        adhoc = ss.split_names(ms)[0]
        if adhoc:  # unknown names fail before the inputs are read
            parse_measures(adhoc, compat=compat)
        if not ss.split_names(ms)[1]:  # no diversity measure: ad-hoc inputs
            prepared = _prepared()
        scorer = ss.scorer_for(
            ms,
            qrels=qrels,
            runs=runs,
            prepared=prepared,
            relevance_level=relevance_level,
            compat=compat,
        )
    # a scorer with its own data (diversity, RIC, HSA) defines the judgments to mask
    enc = getattr(scorer, "enc", None)
    if enc is None:
        enc = _prepared().enc
    names = list(scorer.names)
    masker = var.Masker(enc, with_jdx=bool(getattr(scorer, "uses_jdx", True)))
    enc_full = masker.full()  # enc itself unless compact (then widened into the masker's buffers)
    full = var.check_scores(scorer(enc_full), enc_full, names)
    if len(enc.run_names) < 2:
        msg = f"a study compares system rankings; need >= 2 runs, got {len(enc.run_names)}"
        raise ParameterError(msg)
    level = int(getattr(scorer, "mask_relevance_level", relevance_level))

    return Context(
        enc,
        scorer,
        names,
        full,
        kind,
        relevance_level=level,
        higher_is_better=higher_is_better(scorer),
        masker=masker,
    )


def subsample(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike | None = None,
    runs: RunsLike | None = None,
    measures: Sequence[str] | str | None = None,
    *,
    rates: Sequence[float] = DEFAULT_RATES,
    reps: int = 30,
    seed: int = 0,
    out_dir: str | os.PathLike[str] | None = None,
    prepared: Prepared | Compact | None = None,
    scorer: var.Scorer | None = None,
    relevance_level: int = 1,
    compat: int = 9,
    progress: bool = False,
) -> StudyResult:
    """Random-subsampling study: system rankings under qrels subsampled at each rate.

    Per query, keep ``max(1, ceil(p |rel|))`` relevant and ``max(10, ceil(p
    |nonrel|))`` judged non-relevant judgments at random; ``reps`` seeded
    repetitions per rate.

    Parameters
    ----------
    qrels, runs
        As for :func:`fasteval.evaluate` (or pass ``prepared``).
    measures
        Ad-hoc measures to score by (default ``map, ndcg, P_10``), or pass
        ``scorer`` (any :class:`~fasteval.analysis.variants.Scorer`).
    rates
        Sampling rates in (0, 1].
    reps, seed
        Repetitions per rate and the study seed.
    out_dir
        Save one Parquet file per finished setting, ``summary.parquet/csv`` and
        ``full.parquet`` here; an interrupted study resumes from them.
    progress
        Show a tqdm progress bar.

    Returns
    -------
    StudyResult
        ``units`` (one row per setting, rep, measure, statistic), ``summary``
        (mean, 95% CI, min, max per setting) and ``full`` (full-qrels scores).

    References
    ----------
    Buckley, C., & Voorhees, E. M. (2004). Retrieval evaluation with incomplete
    information. SIGIR '04.
    """
    ctx, settings, extra = plan_subsample(
        qrels,
        runs,
        measures,
        rates=rates,
        reps=reps,
        prepared=prepared,
        scorer=scorer,
        relevance_level=relevance_level,
        compat=compat,
    )
    return run_study(ctx, settings, seed=seed, out_dir=out_dir, progress=progress, extra=extra)


Plan = tuple[Context, list[Setting], dict[str, Any]]


def plan_subsample(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike | None,
    runs: RunsLike | None,
    measures: Sequence[str] | str | None,
    *,
    rates: Sequence[float] = DEFAULT_RATES,
    reps: int = 30,
    prepared: Prepared | Compact | None = None,
    scorer: var.Scorer | None = None,
    relevance_level: int = 1,
    compat: int = 9,
) -> Plan:
    """Context, settings and fingerprint extras of :func:`subsample` (no unit run yet)."""
    ctx = _context("subsample", qrels, runs, measures, prepared, scorer, relevance_level, compat)
    settings = Setting.for_rates(rates, reps, "rate")
    return ctx, settings, {"rates": [s.value for s in settings], "reps": reps}


def pool_depth(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike | None = None,
    runs: RunsLike | None = None,
    measures: Sequence[str] | str | None = None,
    *,
    depths: Sequence[int] = DEFAULT_DEPTHS,
    pool_runs: Sequence[str] | None = None,
    seed: int = 0,
    out_dir: str | os.PathLike[str] | None = None,
    prepared: Prepared | Compact | None = None,
    scorer: var.Scorer | None = None,
    relevance_level: int = 1,
    compat: int = 9,
    progress: bool = False,
) -> StudyResult:
    """Pool-depth study: keep only judgments of documents some run ranks in its top ``k``.

    Deterministic (one repetition per depth). ``pool_runs`` names the runs
    that build the pools (default: all).

    References
    ----------
    Zobel, J. (1998). How reliable are the results of large-scale information
    retrieval experiments? SIGIR '98.
    """
    ctx, settings, extra = plan_pool_depth(
        qrels,
        runs,
        measures,
        depths=depths,
        pool_runs=pool_runs,
        prepared=prepared,
        scorer=scorer,
        relevance_level=relevance_level,
        compat=compat,
    )
    return run_study(ctx, settings, seed=seed, out_dir=out_dir, progress=progress, extra=extra)


def plan_pool_depth(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike | None,
    runs: RunsLike | None,
    measures: Sequence[str] | str | None,
    *,
    depths: Sequence[int] = DEFAULT_DEPTHS,
    pool_runs: Sequence[str] | None = None,
    prepared: Prepared | Compact | None = None,
    scorer: var.Scorer | None = None,
    relevance_level: int = 1,
    compat: int = 9,
) -> Plan:
    """Context, settings and fingerprint extras of :func:`pool_depth`."""
    ctx = _context("pool-depth", qrels, runs, measures, prepared, scorer, relevance_level, compat)
    mask = None
    if pool_runs is not None:
        mask = _runs_mask(ctx.enc, pool_runs)
    ctx.pool_rank = var.min_pool_rank(ctx.enc, mask)
    settings = []
    for d in depths:
        if int(d) != d or d < 1:
            msg = f"pool depths must be positive integers, got {d!r}"
            raise ParameterError(msg)
        settings.append(Setting(str(int(d)), float(d), int(d), int(d), 1))
    return ctx, settings, {"depths": [int(d) for d in depths], "pool_runs": list(pool_runs or [])}


def _runs_mask(enc: Encoded, names: Sequence[str]) -> np.ndarray:
    unknown = sorted(set(names) - set(enc.run_names))
    if unknown:
        msg = f"unknown run(s) {unknown[:5]} (not in the archive)"
        raise ParameterError(msg)
    return np.isin(np.array(enc.run_names, dtype=object), list(names))


def _safe_label(name: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return keep if keep == name else f"{keep}-{zlib.crc32(name.encode()):08x}"


def leave_out(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike | None = None,
    runs: RunsLike | None = None,
    measures: Sequence[str] | str | None = None,
    *,
    rates: Sequence[float] | None = None,
    groups: dict[str, str] | None = None,
    depth: int = 100,
    reps: int = 30,
    seed: int = 0,
    out_dir: str | os.PathLike[str] | None = None,
    prepared: Prepared | Compact | None = None,
    scorer: var.Scorer | None = None,
    relevance_level: int = 1,
    compat: int = 9,
    progress: bool = False,
) -> StudyResult:
    """Unlabelled-systems study: drop judgments that only left-out systems brought to the pool.

    The pool is every run's top ``depth`` documents; a judged document only
    left-out runs put there loses its judgment.

    - ``rates`` without ``groups``: leave out a random share of the runs
      (``max(1, round(p n))``), ``reps`` times per share;
    - ``rates`` with ``groups`` (run -> group): a random share of the groups;
    - ``groups`` alone: leave-one-group-out, one setting per group.

    All runs are re-scored under every variant.

    References
    ----------
    Zobel, J. (1998). How reliable are the results of large-scale information
    retrieval experiments? SIGIR '98.
    Büttcher, S., Clarke, C. L. A., Yeung, P. C. K., & Soboroff, I. (2007).
    Reliable information retrieval evaluation with incomplete and biased
    judgements. SIGIR '07.
    """
    ctx, settings, extra = plan_leave_out(
        qrels,
        runs,
        measures,
        rates=rates,
        groups=groups,
        depth=depth,
        reps=reps,
        prepared=prepared,
        scorer=scorer,
        relevance_level=relevance_level,
        compat=compat,
    )
    return run_study(ctx, settings, seed=seed, out_dir=out_dir, progress=progress, extra=extra)


def plan_leave_out(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike | None,
    runs: RunsLike | None,
    measures: Sequence[str] | str | None,
    *,
    rates: Sequence[float] | None = None,
    groups: dict[str, str] | None = None,
    depth: int = 100,
    reps: int = 30,
    prepared: Prepared | Compact | None = None,
    scorer: var.Scorer | None = None,
    relevance_level: int = 1,
    compat: int = 9,
) -> Plan:
    """Context, settings and fingerprint extras of :func:`leave_out`."""
    if depth < 1:
        msg = f"pool depth must be >= 1, got {depth}"
        raise ParameterError(msg)
    ctx = _context("leave-out", qrels, runs, measures, prepared, scorer, relevance_level, compat)
    ctx.depth = depth
    ctx.pairs = var.pool_pairs(ctx.enc, depth)
    extra: dict[str, Any] = {"depth": depth}
    if groups is not None:
        missing = [r for r in ctx.enc.run_names if r not in groups]
        if missing:  # refused, as `fasteval report --groups` refuses them
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            msg = (
                f"run(s) {', '.join(missing[:5])}{more} have no group in the run -> group map"
                "\n  hint: add a 'run_id group' line for each"
            )
            raise ParameterError(msg)
        names = sorted({groups[r] for r in ctx.enc.run_names})
        ctx.group_names = names
        ctx.groups = np.array([names.index(groups[r]) for r in ctx.enc.run_names], np.int64)
        extra["groups"] = {r: groups[r] for r in ctx.enc.run_names}
    if rates is not None:
        settings = Setting.for_rates(rates, reps, "leave-out share")
        extra.update(rates=[s.value for s in settings], reps=reps)
    elif groups is not None:
        settings = [
            Setting(_safe_label(g), math.nan, zlib.crc32(g.encode()), g, 1) for g in ctx.group_names
        ]
    else:
        msg = "leave_out needs rates (share of runs or groups) or a run -> group map"
        raise ParameterError(msg)
    return ctx, settings, extra


PLANNERS: dict[str, Callable[..., tuple[Any, Any, Any]]] = {
    "subsample": plan_subsample,
    "pool-depth": plan_pool_depth,
    "leave-out": plan_leave_out,
}
