"""Content-based evaluation (SPEC 9; Hui, PIKM'14): measures, label completion, judgment selection.

The layer between labels and measures: the documents judged relevant are
turned into a language model (LM), and a run is scored by how close the LM of
its top documents is to it (:mod:`fasteval.measures.content`). The same LMs
predict labels for unjudged documents (:func:`complete_qrels`) and choose
which documents to judge (:func:`select_judgments`).

Everything here works on :class:`ContentData`: qrels and runs prepared once
(:func:`fasteval.engine.prepare`: rankings in trec_eval order) and joined to
the collection's rows. A qrels variant (a keep-mask over the judgments, as in
the robustness studies) only changes which documents feed the ground-truth
models; the rankings are never re-read.

Queries whose ground truth is empty are NaN, left out of the means and
counted by reason in :class:`ContentReport`; ranked documents missing from the
collection are skipped (they do not use up the depth) and counted.

The package follows those steps: :mod:`~fasteval.analysis.content.data` (the
joined data), :mod:`~fasteval.analysis.content.models` (the language models),
:mod:`~fasteval.analysis.content.measures`,
:mod:`~fasteval.analysis.content.completion` (label completion) and
:mod:`~fasteval.analysis.content.selection` (representative judgments); every
public name is exported here. Qrels are written by
:func:`fasteval.io.writers.write_qrels`.
"""

from __future__ import annotations

from fasteval.analysis.content.completion import (
    Completion,
    Pool,
    PoolModels,
    complete,
    complete_qrels,
    completed_qrels,
    f1_threshold,
    pool,
    pool_models,
)
from fasteval.analysis.content.data import (
    NOT_LOOKED_UP,
    ContentData,
    ensure_depth,
    prepare_content,
)
from fasteval.analysis.content.measures import (
    REASON_NO_RELEVANT,
    REASON_NOT_IN_COLLECTION,
    ContentEvaluation,
    ContentReport,
    ContentScores,
    content_evaluate,
    evaluate_content,
    run_means,
    score_groups,
    to_frame,
)
from fasteval.analysis.content.models import (
    GroundTruth,
    Models,
    ResultModels,
    build_models,
    ground_truth,
    group_blocks,
    result_models,
    similarity,
)
from fasteval.analysis.content.selection import Selection, select, select_judgments
from fasteval.measures.content import ContentMeasure, parse_content_measures

__all__ = [
    "NOT_LOOKED_UP",
    "REASON_NOT_IN_COLLECTION",
    "REASON_NO_RELEVANT",
    "Completion",
    "ContentData",
    "ContentEvaluation",
    "ContentMeasure",
    "ContentReport",
    "ContentScores",
    "GroundTruth",
    "Models",
    "Pool",
    "PoolModels",
    "ResultModels",
    "Selection",
    "build_models",
    "complete",
    "complete_qrels",
    "completed_qrels",
    "content_evaluate",
    "ensure_depth",
    "evaluate_content",
    "f1_threshold",
    "ground_truth",
    "group_blocks",
    "parse_content_measures",
    "pool",
    "pool_models",
    "prepare_content",
    "result_models",
    "run_means",
    "score_groups",
    "select",
    "select_judgments",
    "similarity",
    "to_frame",
]
