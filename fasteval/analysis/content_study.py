"""The content study (SPEC 9; Hui's Figure 3 with the content layer).

For each subsampling rate (SPEC 7's rule, :func:`fasteval.analysis.variants.subsample_mask`,
with the same seeded generators as :func:`fasteval.analysis.studies.subsample`)
and repetition, Kendall's tau between the system ranking by a label measure
on the full qrels and the rankings by

- ``a:<label>``: the label measure on the reduced qrels;
- ``b:<content>``: the content measure whose ground truth is built from the
  reduced qrels;
- ``c:<label>``: the label measure on the reduced qrels completed by content
  (:func:`fasteval.analysis.content.complete`).

Units, resuming and summaries follow :mod:`fasteval.analysis.studies`: one
Parquet file per finished rate in the output folder, skipped when the study
is run again with the same parameters.

The completed qrels add judgments, which a keep-mask cannot express, so the
runs are also joined once to an *augmented* qrels: the real judgments plus
every pooled, unjudged document (a placeholder). A completed variant is then a
grade vector and a mask over the augmented judgments, never a re-parse.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from tqdm import tqdm

from fasteval import parallel
from fasteval.analysis import content as ac
from fasteval.analysis import studies as st
from fasteval.analysis import study_scorers as ss
from fasteval.analysis import study_store as store
from fasteval.analysis import variants as var
from fasteval.analysis.studies import STATISTICS, Setting
from fasteval.engine import QrelsLike, RunsLike, prepare
from fasteval.engine.encode import Encoded
from fasteval.errors import MeasureError, ParameterError
from fasteval.io.tables import qrels_to_table, runs_to_table
from fasteval.kernels.families import UNJUDGED
from fasteval.measures.content import ContentMeasure, is_content_measure, parse_content_measures
from fasteval.parallel import gc_paused

# the statistics of each curve (keys of fasteval.analysis.studies.STATISTICS)
CURVE_STATISTICS = ("tau", "tau_ap")


@dataclass
class ContentContext:
    """What every unit of a content study shares."""

    data: ac.ContentData
    label: str
    content: list[ContentMeasure]
    scorer: var.Scorer
    full: np.ndarray  # full-qrels label scores per run
    aug: Encoded  # runs joined to the real + placeholder judgments
    aug_real: np.ndarray  # bool per augmented judgment: a real one
    aug_base: np.ndarray  # its judgment index in data.enc (-1 for placeholders)
    aug_key: np.ndarray  # query * (n_docs + 1) + collection row (-1 row: never predicted)
    depth: int = 20
    # diversity label measure (alpha_nDCG@20, ...): its scorer, its judged documents'
    # index in data.enc, its run order in data.enc's, the runs (for completed qrels)
    div: DiversityLabel | None = None
    # one Masker per thread (a Masker reuses its buffers from one variant to the next)
    maskers: threading.local = dataclasses.field(default_factory=threading.local, repr=False)

    # units with an identical keep-mask (every repetition at rate 1) give identical curves
    memo: dict[bytes, tuple[list[float], int]] = dataclasses.field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # what completed_variant needs of the augmented qrels, computed once
        valid = np.flatnonzero(self.aug_key >= 0)
        o = np.argsort(self.aug_key[valid], kind="stable")
        self._key_sorted = self.aug_key[valid][o]
        self._key_idx = valid[o]
        self._has = np.flatnonzero(self.aug.jdx >= 0)
        self._has_j = self.aug.jdx[self._has]
        self._base0 = np.maximum(self.aug_base, 0)
        self._real = self.aug_real & (self.aug_base >= 0)

    @property
    def names(self) -> list[str]:
        """Measure column labels of the unit table (curve prefix ``a:``, ``b:``, ``c:``)."""
        return [f"a:{self.label}", *(f"b:{m.name}" for m in self.content), f"c:{self.label}"]


def _augmented(
    data: ac.ContentData, depth: int
) -> tuple[Encoded, np.ndarray, np.ndarray, np.ndarray]:
    enc = data.enc
    prep = data.prep
    pool = ac.pool(data, depth)
    new = pool.jdx < 0
    real_t = pl.from_arrow(qrels_to_table(prep.qrels))
    assert isinstance(real_t, pl.DataFrame)
    real = real_t.select(
        pl.col("query_id").cast(pl.String),
        pl.col("doc_id").cast(pl.String),
        pl.col("relevance").cast(pl.Int32),
    )
    extra = pl.DataFrame(
        {
            "query_id": pl.Series([enc.qids[i] for i in pool.query[new].tolist()], dtype=pl.String),
            "doc_id": pl.Series(data.coll.doc_ids.take(pool.doc[new])).cast(pl.String),
            "relevance": np.zeros(int(new.sum()), np.int32),
        }
    )
    n_real = real.height
    aug = prepare(pl.concat([real, extra]), runs_to_table(prep.runs)).enc
    if aug.qids != enc.qids:  # pragma: no cover - the same runs and queries
        msg = "internal: the augmented qrels changed the query set"
        raise ParameterError(msg)
    base_of_row = np.full(n_real, -1, np.int64)
    base_of_row[enc.qr_rows] = np.arange(enc.qr_rows.shape[0])
    is_real = aug.qr_rows < n_real
    base = np.where(is_real, base_of_row[np.minimum(aug.qr_rows, n_real - 1)], -1)
    doc_rows = np.concatenate(
        [data.jdoc[base_of_row[np.arange(n_real)]], pool.doc[new].astype(np.int32)]
    )
    aq = np.repeat(np.arange(aug.qr_off.shape[0] - 1), np.diff(aug.qr_off)).astype(np.int64)
    ad = doc_rows[aug.qr_rows].astype(np.int64)
    key = np.where(ad >= 0, aq * (len(data.coll) + 1) + ad, -1)
    return aug, is_real, base, key


def completed_variant(
    ctx: ContentContext, keep: np.ndarray, truth: ac.GroundTruth | None = None
) -> tuple[Encoded, int]:
    """The augmented ``Encoded`` of the reduced qrels completed by content; and the predictions.

    The ``Encoded`` shares its buffers with the next call in the same thread
    (as :class:`fasteval.analysis.variants.Masker`'s): score it first.
    """
    data = ctx.data
    comp = ac.complete(data, keep, depth=ctx.depth, intent_aware=False, truth=truth)
    pred_key = comp.pred_query.astype(np.int64) * (len(data.coll) + 1) + comp.pred_doc
    n_aug = ctx.aug_key.shape[0]
    predicted = np.zeros(n_aug, bool)
    if pred_key.shape[0] and ctx._key_sorted.shape[0]:
        at = np.minimum(np.searchsorted(ctx._key_sorted, pred_key), ctx._key_sorted.shape[0] - 1)
        hit = ctx._key_sorted[at] == pred_key
        predicted[ctx._key_idx[at[hit]]] = True
    kept_real = ctx._real & keep[ctx._base0]
    t = ctx.maskers
    if getattr(t, "completed", None) is None:
        grades0 = np.zeros(n_aug, np.int32)
        rel0 = ctx.aug.rel.copy()
        enc_c = dataclasses.replace(ctx.aug, qr_rel=grades0, rel=rel0)
        t.completed = (grades0, rel0, var.Masker(enc_c, with_jdx=False))
    grades, rel, masker = t.completed
    # in place: the Masker reads its Encoded's rel and qr_rel when called
    level = max(1, data.relevance_level)
    np.copyto(grades, np.where(kept_real, data.enc.qr_rel[ctx._base0], level))
    g = grades[ctx._has_j]
    rel[ctx._has] = np.where(g < 0, np.int32(UNJUDGED), g)
    return masker(kept_real | predicted), int(comp.pred_doc.shape[0])


def run_unit(ctx: ContentContext, setting: Setting, rep: int, seed: int) -> list[dict[str, Any]]:
    """Curves a, b and c of one (rate, repetition)."""
    rng = st.unit_rng(seed, "subsample", setting.key, rep)
    if ctx.div is not None:  # the diversity study's masks: over its judged documents
        keep_d = var.subsample_mask(ctx.div.scorer.enc, float(setting.value), rng)
        keep = np.zeros(ctx.data.enc.qr_rel.shape[0], bool)
        keep[ctx.div.to_content[keep_d]] = True
    else:
        keep = var.subsample_mask(
            ctx.data.enc, float(setting.value), rng, relevance_level=ctx.data.relevance_level
        )
    digest = hashlib.sha256(keep.tobytes()).digest()
    hit = ctx.memo.get(digest)
    if hit is None:
        hit = ctx.memo[digest] = _statistics(ctx, keep)
    values, n_pred = hit
    rows = []
    n_kept = int(keep.sum())
    for (name, stat), value in zip(
        ((n, s) for n in ctx.names for s in CURVE_STATISTICS), values, strict=True
    ):
        rows.append(
            {
                "setting": setting.label,
                "x": setting.x,
                "rep": rep,
                "measure": name,
                "statistic": stat,
                "value": value,
                "judgments": n_kept + (n_pred if name.startswith("c:") else 0),
            }
        )
    return rows


def _statistics(ctx: ContentContext, keep: np.ndarray) -> tuple[list[float], int]:
    """Tau and tau_AP of curves a, b, c for one keep-mask (``ctx.names`` x CURVE_STATISTICS)."""
    enc = ctx.data.enc
    sc = ac.score_groups(ctx.data, ctx.content, keep, reuse_results=True)
    b = ac.run_means(enc, sc.values)
    if ctx.div is not None:
        a, c, n_pred = _diversity_curves(ctx, ctx.div, keep, sc)
    else:
        masker = getattr(ctx.maskers, "masker", None)
        if masker is None:
            masker = ctx.maskers.masker = var.Masker(enc, with_jdx=False)
        a = ctx.scorer(masker(keep))[:, 0]
        enc_c, n_pred = completed_variant(ctx, keep, sc.truth)
        c = ctx.scorer(enc_c)[:, 0]
    cols = [a, *(b[:, i] for i in range(b.shape[1])), c]
    values = []
    for v in cols:
        ok = np.isfinite(ctx.full) & np.isfinite(v)
        for stat in CURVE_STATISTICS:
            fn = STATISTICS[stat]
            values.append(float(fn(ctx.full[ok], v[ok])) if ok.sum() >= 2 else math.nan)
    return values, n_pred


def _diversity_curves(
    ctx: ContentContext, div: DiversityLabel, keep: np.ndarray, sc: ac.ContentScores
) -> tuple[np.ndarray, np.ndarray, int]:
    """Curves a and c of a diversity label measure (run scores in ``data.enc`` order).

    (a) masks the diversity scorer's judged documents; (c) completes the
    reduced qrels per subtopic and scores the completed diversity qrels as
    if read from a file (they add judgments no mask can express).
    """
    data = ctx.data
    keep_d = keep[div.to_content]
    a = div.scorer(var.apply_mask(div.scorer.enc, keep_d))[div.run_order, 0]
    truth = sc.truth_ia if sc.truth_ia is not None else None
    comp = ac.complete(data, keep, depth=ctx.depth, intent_aware=True, truth=truth)
    qrels_c = ac.completed_qrels(data, comp, keep)
    scorer_c = ss.DiversityScorer.from_inputs(
        qrels_c, div.runs, [ctx.label], relevance_level=data.relevance_level, order=div.order
    )
    pos = {r: i for i, r in enumerate(scorer_c.enc.run_names)}
    c_all = scorer_c(scorer_c.enc)[:, 0]
    c = np.array([c_all[pos[r]] if r in pos else math.nan for r in data.enc.run_names])
    return a, c, int(comp.pred_doc.shape[0])


def split_measures(measures: Sequence[str]) -> tuple[str, list[ContentMeasure]]:
    """One label measure and the content measures from a list of names."""
    names = [p.strip() for n in measures for p in str(n).split(",") if p.strip()]
    label = [n for n in names if not is_content_measure(n)]
    content = parse_content_measures([n for n in names if is_content_measure(n)])
    if len(label) != 1 or not content:
        msg = (
            f"the content study needs one label measure and at least one content measure, "
            f"got {names}\n  hint: -m map -m LMJS@20"
        )
        raise MeasureError(msg)
    return label[0], content


@dataclass
class DiversityLabel:
    """What curves a and c need when the label measure is a diversity one (ndeval's)."""

    scorer: ss.DiversityScorer
    to_content: np.ndarray  # per judged document of scorer.enc: its judgment index in data.enc
    run_order: np.ndarray  # scorer run index of every data.enc run
    runs: pl.DataFrame  # the runs, to score completed qrels
    order: str  # ndeval's "rank" order when every row has a rank, else "traditional"


def _diversity_label(data: ac.ContentData, label: str, relevance_level: int) -> DiversityLabel:
    enc = data.enc
    qrels = ac.completed_qrels(data, _no_prediction())
    runs = pl.from_arrow(runs_to_table(data.prep.runs))
    assert isinstance(runs, pl.DataFrame)
    # ndeval orders by the rank column (as the diversity studies do); runs without
    # ranks (a frame of scores) by score, then docno
    order = "rank" if runs["rank"].null_count() == 0 else "traditional"
    scorer = ss.DiversityScorer.from_inputs(
        qrels, runs, [label], relevance_level=relevance_level, order=order
    )
    d = scorer.prep.qrels
    rows = scorer.prep.doc_rows[scorer.enc.qr_rows]
    div_keys = pl.DataFrame(
        {
            "query_id": pl.Series(d.qid.take(rows)).cast(pl.String),
            "doc_id": pl.Series(d.doc.take(rows)).cast(pl.String),
        }
    )
    own = pl.DataFrame(
        {
            "query_id": pl.Series(data.prep.qrels.qid.take(enc.qr_rows)).cast(pl.String),
            "doc_id": pl.Series(data.prep.qrels.doc.take(enc.qr_rows)).cast(pl.String),
            "j": np.arange(enc.qr_rows.shape[0], dtype=np.int64),
        }
    )
    j = div_keys.join(own, on=["query_id", "doc_id"], how="left", maintain_order="left")["j"]
    if j.null_count():  # pragma: no cover - both read the same qrels rows
        msg = "internal: a judged document of the diversity qrels has no ad-hoc judgment"
        raise ParameterError(msg)
    pos = {r: i for i, r in enumerate(scorer.enc.run_names)}
    run_order = np.array([pos[r] for r in enc.run_names], np.int64)
    return DiversityLabel(scorer, j.to_numpy().astype(np.int64), run_order, runs, order)


def _no_prediction() -> ac.Completion:
    e64, e32 = np.zeros(0, np.int64), np.zeros(0, np.int32)
    return ac.Completion(e64, e32, np.zeros(0), e64, e32, e32, np.zeros(0), 0)


def plan(
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    measures: Sequence[str],
    *,
    depth: int = 20,
    relevance_level: int = 1,
    compat: int = 9,
    data: ac.ContentData | None = None,
) -> ContentContext:
    """Read and join everything a content study needs (no unit run yet).

    A diversity label measure (``alpha_nDCG@20``, ``ERR_IA@20``, ...) reads
    the qrels as diversity qrels; its content measure is then usually
    ``LMJS_IA@k``, and the completion predicts labels per subtopic.
    """
    label, content = split_measures(measures)
    diversity = bool(ss.split_names([label])[1])
    if any(m.intent_aware for m in content) and not diversity:
        msg = (
            "LMJS_IA needs diversity qrels: pair it with a diversity label measure\n"
            "  hint: -m alpha_nDCG@20 -m LMJS_IA@20"
        )
        raise MeasureError(msg)
    if depth < 1:
        msg = f"completion pool depth must be >= 1, got {depth}"
        raise ParameterError(msg)
    if data is None:
        data = ac.prepare_content(
            qrels,
            runs,
            collection,
            diversity=diversity,
            relevance_level=relevance_level,
            compat=compat,
        )
    if diversity and not data.has_subtopics:
        msg = f"{label} needs diversity qrels (query_id, subtopic, doc_id, relevance)"
        raise ParameterError(msg)
    if len(data.enc.run_names) < 2:
        msg = f"a study compares system rankings; need >= 2 runs, got {len(data.enc.run_names)}"
        raise ParameterError(msg)
    if diversity:
        div = _diversity_label(data, label, relevance_level)
        full = div.scorer(div.scorer.enc)[div.run_order, 0]
        none64 = np.zeros(0, np.int64)
        return ContentContext(
            data, label, content, div.scorer, full, data.enc, np.zeros(0, bool), none64, none64,
            depth, div,
        )  # fmt: skip
    scorer = var.AdhocScorer([label], relevance_level=relevance_level, compat=compat)
    full = scorer(data.enc)[:, 0]
    aug, is_real, base, key = _augmented(data, depth)
    return ContentContext(data, label, content, scorer, full, aug, is_real, base, key, depth)


def content_study(  # noqa: PLR0913 (keyword-only options)
    qrels: QrelsLike,
    runs: RunsLike,
    collection: Any,
    measures: Sequence[str] = ("map", "LMJS@20"),
    *,
    rates: Sequence[float] = st.DEFAULT_RATES,
    reps: int = 30,
    seed: int = 0,
    depth: int = 20,
    out_dir: str | os.PathLike[str] | None = None,
    relevance_level: int = 1,
    compat: int = 9,
    progress: bool = False,
    data: ac.ContentData | None = None,
    concurrent: bool = True,
) -> st.StudyResult:
    """Hui's Figure 3 with the content layer: curves a, b, c of tau against the sampling rate.

    Parameters
    ----------
    qrels, runs, collection
        As for :func:`fasteval.analysis.content.content_evaluate` (ad-hoc qrels).
    measures
        One label measure (``map``, ``ndcg``, ``P_10``...) and content
        measures (``LMJS@20``...).
    rates, reps, seed
        Subsampling rates in (0, 1], repetitions per rate, the study seed
        (the masks equal :func:`fasteval.analysis.studies.subsample`'s).
    depth
        Pool depth K of the label completion.
    out_dir
        Save one Parquet file per finished rate, ``summary.parquet/csv`` and
        ``full.parquet``; an interrupted study resumes from them.
    concurrent
        Run the variants concurrently, one per thread (see ``_run_units``);
        ``False`` runs them in turn with each kernel split over the threads.
        The rows are the same.

    Returns
    -------
    StudyResult
        ``units`` (per rate, rep, curve and statistic), ``summary`` (mean,
        95% CI, min, max) and ``full`` (full-qrels label scores).

    References
    ----------
    Hui, K. (2014). Towards robust & reusable evaluation for novelty &
    diversity. PIKM '14.
    """
    with gc_paused():
        ctx = plan(
            qrels,
            runs,
            collection,
            measures,
            depth=depth,
            relevance_level=relevance_level,
            compat=compat,
            data=data,
        )
        settings = Setting.for_rates(rates, reps, "rate")
        out = Path(out_dir) if out_dir is not None else None
        fp: dict[str, Any] = {}
        parts: list[pl.DataFrame] = []
        todo = list(settings)
        if out is not None:
            fp = _fingerprint(ctx, settings, seed, reps, depth)
            store.check_out_dir(out, fp)
            parts, todo = _saved_parts(out, settings, fp)
        parts += _run_todo(ctx, todo, seed, out, fp, progress=progress, concurrent=concurrent)
        return st.finish_study(settings, parts, _full_frame(ctx), out)


def _fingerprint(
    ctx: ContentContext, settings: Sequence[Setting], seed: int, reps: int, depth: int
) -> dict[str, Any]:
    """What identifies a content study in its output folder (a resumed study must match)."""
    return {
        "kind": "content",
        "seed": seed,
        "measures": ctx.names,
        "statistics": list(CURVE_STATISTICS),
        "data": _data_hash(ctx),
        "rates": [s.value for s in settings],
        "reps": reps,
        "depth": depth,
    }


def _saved_parts(
    out: Path, settings: Sequence[Setting], fp: dict[str, Any]
) -> tuple[list[pl.DataFrame], list[Setting]]:
    """The units of the settings already saved in ``out``, and the settings still to run."""
    parts: list[pl.DataFrame] = []
    todo = []
    for s in settings:
        f = store.setting_file(out, s)
        if f.exists():
            parts.append(store.read_units(f, fp))
        else:
            todo.append(s)
    return parts, todo


def _run_todo(
    ctx: ContentContext,
    todo: Sequence[Setting],
    seed: int,
    out: Path | None,
    fp: dict[str, Any],
    *,
    progress: bool,
    concurrent: bool,
) -> list[pl.DataFrame]:
    """The units of every setting of ``todo``, in order, each saved in ``out`` when given."""
    parts = []
    with tqdm(
        total=sum(s.reps for s in todo),
        unit="variant",
        desc="content study",
        disable=not progress,
    ) as bar:
        for s, rows in _run_units(ctx, todo, seed, bar.update, concurrent):
            df = pl.DataFrame(rows, schema=store.UNIT_SCHEMA)
            if out is not None:
                store.write_part(df, store.setting_file(out, s), fp)
            parts.append(df)
    return parts


def _full_frame(ctx: ContentContext) -> pl.DataFrame:
    """The full-qrels label scores: ``run_id, measure, value``."""
    return pl.DataFrame(
        {
            "run_id": ctx.data.enc.run_names,
            "measure": [ctx.label] * len(ctx.data.enc.run_names),
            "value": ctx.full,
        },
        schema={"run_id": pl.String, "measure": pl.String, "value": pl.Float64},
    )


def _warm(ctx: ContentContext) -> None:
    """Fill the caches every unit reads (looked-up depth, result models, pool), once."""
    data = ctx.data
    ac.ensure_depth(data, max([ctx.depth, *(m.k for m in ctx.content)]))
    for m in ctx.content:
        ac.group_blocks(data, data.enc, m.k)
    ac.pool_models(data, ctx.depth)


def _unit_rows(ctx: ContentContext, s: Setting, rep: int, seed: int) -> list[dict[str, Any]]:
    with parallel.kernel_threads(1):
        return run_unit(ctx, s, rep, seed)


def _run_units(
    ctx: ContentContext,
    todo: Sequence[Setting],
    seed: int,
    tick: Any,
    concurrent: bool = True,
) -> Any:
    """Yield ``(setting, rows)`` for every setting of ``todo``, in order.

    With ``concurrent`` (the units are independent: a keep-mask each; the
    shared caches are filled first) one unit per thread with single-threaded
    kernels, so that one unit's Python glue overlaps another's kernels; a
    unit's kernel calls are milliseconds each, and splitting each over a
    fresh thread pool costs more CPU than it saves (benchmarks/RESULTS.md,
    "Figures moved out of the code"). Otherwise one unit after the other, each kernel split over
    the threads. Rows come back in (setting, rep) order either way.
    """
    n_t = parallel.threads() if concurrent else 1
    if n_t <= 1 or not todo:
        for s in todo:
            rows: list[dict[str, Any]] = []
            for rep in range(s.reps):
                rows.extend(run_unit(ctx, s, rep, seed))
                tick(1)
            yield s, rows
        return
    _warm(ctx)
    with ThreadPoolExecutor(n_t) as ex:
        futs = [[ex.submit(_unit_rows, ctx, s, rep, seed) for rep in range(s.reps)] for s in todo]
        for s, fs in zip(todo, futs, strict=True):
            rows = []
            for f in fs:
                rows.extend(f.result())
                tick(1)
            yield s, rows


def _data_hash(ctx: ContentContext) -> str:
    h = hashlib.sha256()
    enc = ctx.data.enc
    h.update("\n".join(enc.run_names).encode())
    h.update(enc.qr_rel.tobytes())
    h.update(enc.qr_off.tobytes())
    h.update(ctx.full.tobytes())
    h.update(ctx.data.coll.doc_off.tobytes())
    h.update(ctx.data.coll.counts.tobytes())
    return h.hexdigest()[:16]
