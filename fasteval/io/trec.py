"""TREC text formats: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Fields are separated by any run of blanks (spaces or tabs); trailing extra
columns are ignored as trec_eval ignores them; blank lines and lines whose
first non-blank character is ``#`` are skipped (trec_eval 10). Files may be
gzip-compressed. Every malformed line raises :class:`InputFormatError`
naming the file, the line and the value, unless ``lenient=True``, in which
case the line is skipped and counted in a :class:`FastevalWarning`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fasteval.columns import QrelsColumns, RunColumns, numeric_array
from fasteval.errors import InputFormatError, ParameterError
from fasteval.io.files import BOM, PathLike, RawFiles, Workspace
from fasteval.io.tokens import (
    QRELS_LINE,
    RUN_FIELDS,
    RUN_LINE,
    Skipper,
    Tokens,
    check_columns,
    check_header,
    exact_decimals,
    first_with_field,
    read_judgments,
    tokenize_buffer,
    tokenize_files,
)
from fasteval.options import DEFAULTS, EvalOptions


def run_id_from_filename(path: PathLike) -> str:
    """A run's id from its file name: the name without ``.gz`` and then ``.txt``."""
    return Path(path).name.removesuffix(".gz").removesuffix(".txt")


def duplicate_run_id(name: str, first: str, second: str, opts: EvalOptions = DEFAULTS) -> str:
    """The message for one run id given by two files (or tables), its hint for ``opts``."""
    msg = (
        f"run id {name!r} is given by two files: {first} and {second}; each run needs its "
        "own id (with one id they would be merged into one run)\n"
    )
    if opts.run_id_from == "filename":
        return msg + "  hint: runs are named after their files (without .txt/.gz): rename one"
    return msg + (
        "  hint: if the run tags (6th column) are not unique, name runs after their files: "
        "use --run-id filename (API: run_id_from='filename')"
    )


def parse_qrels_files(
    paths: list[PathLike], *, lenient: bool = False, raw: RawFiles | None = None
) -> QrelsColumns:
    """Parse qrels files (``qid iter docno rel``) into columns (``raw``: their bytes, read
    already, as :func:`parse_run_files` takes them)."""
    said = ("qrels", "qid iter docno rel", "relevance")
    tok, rel = read_judgments(paths, QRELS_LINE, lenient, said, raw)
    return QrelsColumns(tok.field(0), tok.field(1), rel, tok.source())


def parse_run_files(
    paths: Sequence[PathLike],
    opts: EvalOptions = DEFAULTS,
    *,
    threads: int | None = None,
    workspace: Workspace | None = None,
    raw: RawFiles | None = None,
) -> RunColumns:
    """Parse run files (``qid Q0 docno rank score tag``, one run per file) into columns.

    Parameters
    ----------
    paths
        TREC run files, plain or gzip.
    opts
        ``lenient``: skip malformed lines (reported in a :class:`FastevalWarning`) instead
        of raising; ``run_id_from``: ``"tag"`` (the 6th column, which must be constant in
        a file) or ``"filename"``.
    threads
        Files read in parallel (decompression releases the GIL).
    workspace
        Arrays to reuse (see :class:`Workspace`); the columns then point into
        it and are valid only until its next use.
    raw
        The files' bytes, read ahead by :func:`read_files` (the same paths).
    """
    if not paths:
        msg = "no run files given"
        raise InputFormatError(msg)
    tok = tokenize_files(list(paths), RUN_LINE, threads, workspace, raw)
    return _run_columns(tok, list(paths), opts, opts.lenient)


def parse_run_piece(
    buf: np.ndarray,
    size: int,
    path: PathLike,
    *,
    lines_before: int = 0,
    opts: EvalOptions = DEFAULTS,
    workspace: Workspace | None = None,
    tag: tuple[str, int] | None = None,
) -> tuple[RunColumns, int]:
    """The columns of whole lines of a run file in ``buf[:size]`` (room for one byte more;
    unchanged while the columns are in use), the lines after line ``lines_before`` of
    ``path``, and the newlines counted. Never lenient (skipped lines could not be counted
    for the whole file). ``tag``: the file's run tag and its line, from the first piece."""
    if size == 0 or buf[size - 1] != 10:  # the last line of a file may lack its newline
        if buf.shape[0] <= size:
            msg = f"the buffer needs room for {size + 1} bytes, has {buf.shape[0]}"
            raise ParameterError(msg)
        buf[size] = 10
        size += 1
    if lines_before == 0 and size >= 3 and bytes(buf[:3]) == BOM:
        buf[:3] = 32  # as read_files: blanks keep every offset
    tok = tokenize_buffer(
        buf[:size],
        np.zeros(1, np.int64),
        np.array([size], np.int64),
        [str(path)],
        RUN_LINE,
        workspace,
        lines_before,
    )
    assert tok.lines is not None  # the tokenizer counts them
    return _run_columns(tok, [path], opts, False, tag, lines_before == 0), int(tok.lines[0])


def _run_columns(
    tok: Tokens,
    paths: Sequence[PathLike],
    opts: EvalOptions,
    lenient: bool,
    tag: tuple[str, int] | None = None,
    head: bool = True,
) -> RunColumns:
    """Run columns from tokenised run files: every check of :func:`parse_run_files`."""
    skipper = Skipper(lenient, "run")
    wordy = tok.ibad & tok.fbad  # rank and score both words: a header, or garbage
    if head:  # the first lines of a file, not a later piece's
        check_header(tok, wordy, lenient, "qid Q0 docno rank score tag", (3, 4))
    if opts.run_id_from == "tag":
        _check_one_tag(tok, wordy, tag)
    tok = check_columns(tok, RUN_FIELDS, skipper, "qid Q0 docno rank score tag")
    # as the tokenizer parsed them (correctly rounded, as float()); bad: not a decimal
    # number (inf and nan included), or beyond the double range
    score, bad = tok.fval, ~np.isfinite(tok.fval)
    if bad.any():  # NaN yet parsed: a decimal the tokenizer leaves to float() (rare)
        exact_decimals(tok, 4, np.flatnonzero(bad & ~tok.fbad))
        bad = ~np.isfinite(score)
    bad |= tok.fbad
    t = tok
    tok = skipper.reject(
        tok, bad, lambda r: f"score is not a finite number: {t.field_value(r, 4)!r}"
    )
    if bad.any():
        score = score[~bad]
    skipper.warn()
    counts = np.diff(tok.file_bounds())
    if (counts == 0).any():
        name = tok.names[int(np.flatnonzero(counts == 0)[0])]
        msg = f"{name}: every line was malformed; nothing left to evaluate"
        raise InputFormatError(msg)
    names = _run_names(tok, paths, opts)
    rank = numeric_array(tok.ival, tok.ibad)
    return RunColumns(
        run_names=names,
        run=tok.file_of,
        qid=tok.field(0),
        doc=tok.field(1),
        score=score,
        rank=rank,
        source=tok.source(),
    )


def _check_one_tag(tok: Tokens, wordy: np.ndarray, tag: tuple[str, int] | None) -> None:
    """Every line of a run file has the tag of its first (a header aside), or ``tag``."""
    bad = np.flatnonzero(tok.same_bad >= 0)
    r = int(tok.same_bad[bad[0]]) if bad.size else -1
    if tag is None:
        if r < 0:
            return
        r0 = int(np.flatnonzero((tok.file_of == tok.file_of[r]) & ~wordy)[0])
        tag = (tok.field_value(r0, 5), int(tok.line_no[r0]))
    else:  # the piece's lines are compared with its first: that one with the file's
        ref = first_with_field(tok.n_fields, tok.ibad, tok.fbad, 5, 0, tok.n_fields.shape[0])
        if ref >= 0 and tok.field_value(ref, 5, limit=None) != tag[0]:
            r = ref
        elif r < 0:
            return
    msg = (
        f"{tok.where(r)}: run tag {tok.field_value(r, 5)!r} differs from {tag[0]!r} on line "
        f"{tag[1]}; a run file holds one run\n  hint: name runs after their files "
        "instead: use --run-id filename (API: run_id_from='filename')"
    )
    raise InputFormatError(msg)


def _run_names(tok: Tokens, paths: Sequence[PathLike], opts: EvalOptions) -> list[str]:
    """Each file's run id (its first line's tag, or its name), each its own."""
    first_row = tok.first_rows()
    names: list[str] = []
    seen: dict[str, int] = {}
    by_name = opts.run_id_from == "filename"
    for f, p in enumerate(paths):
        if by_name:
            name = run_id_from_filename(p)
        else:
            name = tok.field_value(int(first_row[f]), 5, limit=None)
        if name in seen:
            g = seen[name]
            a, b = (tok.where(int(first_row[x])) for x in (g, f))
            if by_name:
                a, b = tok.names[g], tok.names[f]
            raise InputFormatError(duplicate_run_id(name, a, b, opts))
        seen[name] = f
        names.append(name)
    return names
