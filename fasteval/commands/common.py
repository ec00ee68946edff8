"""What every ``fasteval`` sub-command shares: turning expected errors into one line."""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from fasteval.errors import FastevalError, InputFormatError, ParameterError, install_hint
from fasteval.io import formats

F = TypeVar("F", bound=Callable[..., Any])


def _one_line(msg: str) -> str:
    return " | ".join(part.strip() for part in cli_terms(str(msg)).splitlines() if part.strip())


# Library messages name an API keyword and the command-line option together, in one of
# three spellings: "lenient=True (CLI: --lenient)", "--run-id filename (API:
# run_id_from='filename')" and "(CLI: --collection FILE; API: collection=...)". On the
# command line, cli_terms keeps only the option, and only if the command has it.
_API_THEN_CLI = re.compile(r"(?P<api>[\w.]+(?:=\S+)?) \(CLI: (?P<opt>--[\w-]+)(?P<rest>[^);]*)\)")
_CLI_THEN_API = re.compile(r"(?P<opt>--[\w-]+)(?P<rest>[^()]*?) \(API: (?P<api>[^)]*)\)")
_BOTH = re.compile(r"\(CLI: (?P<opt>--[\w-]+)(?P<rest>[^);]*); API: (?P<api>[^)]*)\)")


def _commands_with(root: click.Command, opt: str, path: str) -> list[str]:
    """The command paths under ``root`` that have the option ``opt``."""
    found = []
    if any(opt in getattr(p, "opts", ()) for p in root.params):
        found.append(path)
    if isinstance(root, click.Group):
        for name, sub in sorted(root.commands.items()):
            found.extend(_commands_with(sub, opt, f"{path} {name}"))
    return found


def cli_terms(msg: str, ctx: click.Context | None = None) -> str:
    """``msg`` with its API keywords replaced by the options of the running command.

    A hint naming ``api (CLI: --opt value)`` becomes ``--opt value`` when the command
    has ``--opt``; otherwise it names the commands that do (``fasteval ndeval --order
    traditional``), or, if none does, the API keyword (a Python-only setting). Outside
    a click command the message is returned unchanged.
    """
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return msg
    here = ctx.command
    root = ctx.find_root()

    def option(m: re.Match[str], *, wrap: bool) -> str:
        opt, rest, api = m["opt"], m["rest"].rstrip(), m["api"]
        if any(opt in getattr(p, "opts", ()) for p in here.params):
            return f"({opt}{rest})" if wrap else f"{opt}{rest}"
        others = _commands_with(root.command, opt, root.info_name or "fasteval")
        others.sort(key=lambda path: not path.endswith(" eval"))  # eval first, if it has it
        if others:
            text = f"'{others[0]} {opt}{rest}'"
            return f"(in {text})" if wrap else text
        return f"({api} in Python)" if wrap else f"{api} (Python API only)"

    msg = _BOTH.sub(lambda m: option(m, wrap=True), msg)
    msg = _API_THEN_CLI.sub(lambda m: option(m, wrap=False), msg)
    return _CLI_THEN_API.sub(lambda m: option(m, wrap=False), msg)


# Optional imports a command may need, and the extra of pyproject.toml that installs them.
EXTRAS = {
    "matplotlib": "plots",
    "dask": "cluster",
    "distributed": "cluster",
    "ir_measures": "irmeasures",
    "snowballstemmer": "content",
}

#: Exit status of a command interrupted by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


def missing_extra_message(e: ImportError) -> str | None:
    """The one-line message for an optional dependency that is not installed, else ``None``."""
    name = (e.name or "").split(".")[0]
    if name not in EXTRAS:
        return None
    return f"this needs {name}, which is not installed: {install_hint(EXTRAS[name])}"


def no_extra_warning(module: str, what: str) -> bool:
    """Warn in one line, naming the extra to install, if the optional ``module`` is missing.

    Returns
    -------
    bool
        Whether ``module`` is installed (False after the warning: ``what`` was skipped).
    """
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as e:
        name = (e.name or module).split(".")[0]
        extra = EXTRAS.get(name, EXTRAS.get(module, "plots"))
        click.echo(
            f"fasteval: warning: {module} is not installed, so {what}; for them: "
            + install_hint(extra),
            err=True,
        )
        return False
    return True


def require_extra(module: str) -> None:
    """Fail now, before any input is read, if the optional ``module`` is not installed.

    Raises
    ------
    ParameterError
        Naming the module and the ``pip install 'fasteval[extra]'`` that provides it.
    """
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as e:
        raise ParameterError(missing_extra_message(e) or str(e)) from None


_ON_INTERRUPT = "fasteval.on_interrupt"


def on_interrupt(say: Callable[[], str]) -> None:
    """What the running command says if Ctrl-C stops it (instead of "nothing was written").

    ``say`` is called then, so it can count what was kept (a study's finished parts).
    """
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.find_root().meta[_ON_INTERRUPT] = say


def interrupted() -> None:
    """Say the command was interrupted, and what it kept; exit with status 130.

    Temporary files are gone; a command that keeps finished work (a study's parts)
    says so and how to resume (:func:`on_interrupt`).
    """
    ctx = click.get_current_context(silent=True)
    say = ctx.find_root().meta.get(_ON_INTERRUPT) if ctx is not None else None
    what = "nothing was written"
    if say is not None:
        try:
            what = say()
        except Exception:  # the Ctrl-C message must not fail
            what = "finished work may have been kept"
    click.echo(f"fasteval: interrupted (Ctrl-C); {what}", err=True)
    sys.exit(INTERRUPTED)


def study_kept(out: str | Path) -> Callable[[], str]:
    """The Ctrl-C message of a study writing into ``out``: what was kept, how to resume."""

    def say() -> str:
        folder = Path(out)
        parts = sorted(folder.glob("setting=*.parquet")) if folder.is_dir() else []
        if not (folder / "study.json").exists():
            return "nothing was written"
        kept = f"{len(parts)} finished part file(s) and study.json" if parts else "study.json"
        return (
            f"kept {kept} in {folder}; run the same command again to resume "
            "(finished parts are reused, the rest computed)"
        )

    return say


def check_output_folder() -> None:
    """Refuse ``-o PATH`` whose folder does not exist, before any input is read.

    Every command follows one rule: fasteval creates the file (or, for folder
    outputs such as ``study -o DIR``, the last folder) but never missing parent
    folders, so a typo in a path fails at once instead of after the work.
    """
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if "-o" not in getattr(param, "opts", ()) or not isinstance(value, str) or not value:
            continue
        folder = Path(value).parent
        if not folder.is_dir():
            msg = f"-o {value}: folder '{folder}' does not exist (create it first)"
            raise ParameterError(msg)


# parameters that name what a command writes, not what it reads
_OUTPUT_NAMES = ("output", "out", "outdir", "plot", "plot_dir", "summary", "workspace")


def provenance(params: dict[str, Any]) -> Any:
    """What made the running command's outputs (a :class:`fasteval.io.provenance.Provenance`).

    The inputs are the values of its path arguments and options that are not
    outputs (``-o``, ``--plot``, ...), and ``--collection``; the measures its
    ``-m``; the options everything else. None outside a click command.
    """
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None
    from fasteval.io.formats import named_format
    from fasteval.io.provenance import Provenance

    inputs: list[str] = []
    options: dict[str, Any] = {}
    parquet = params.get("format") == "parquet"  # the output is sure to be stamped
    for param in ctx.command.params:
        name = param.name or ""
        value = params.get(name)
        is_output = isinstance(param, OutputOption) or name in _OUTPUT_NAMES
        if is_output and isinstance(value, (str, Path)):
            parquet = parquet or named_format(value) == "parquet"
        if not is_output and (isinstance(param.type, click.Path) or name == "collection"):
            inputs += [str(v) for v in (value if isinstance(value, tuple) else [value]) if v]
        elif name != "measures":
            options[name] = list(value) if isinstance(value, tuple) else value
    measures = [str(m) for m in params.get("measures") or ()]
    made = Provenance(ctx.command_path, measures, options, inputs)
    if parquet:
        made.start()  # the inputs hashed while the command works, not after
    return made


def jit_note() -> None:
    """One note line when the kernels run on numba's JIT (no library: compiled on first use)."""
    from fasteval.kernels import jit

    if not jit.disabled() and jit.mode() == "jit":
        reason = jit.status()["reason"]
        click.echo(
            f"fasteval: note: kernels run on numba's JIT ({reason}), compiled on first "
            "use; reinstalling fasteval (`pip install -e .` in a checkout) builds the library",
            err=True,
        )


def friendly(fn: F) -> F:
    """Turn expected errors into one line on stderr and exit status 1 (no traceback)."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        def show(
            message: Any, category: Any, filename: Any, lineno: Any, *a: Any, **k: Any
        ) -> None:
            click.echo(f"fasteval: warning: {_one_line(str(message))}", err=True)

        with warnings.catch_warnings():
            # the command decides how warnings look, whatever filters are installed
            warnings.simplefilter("always")
            warnings.showwarning = show
            try:
                check_output(kwargs)
                from fasteval.io.provenance import made_by

                # the inputs' hashing starts before numpy and pyarrow load
                with made_by(provenance(kwargs)):  # stamped on the Parquet files written
                    jit_note()
                    return fn(*args, **kwargs)
            except (FastevalError, OSError) as e:
                if isinstance(e, InputFormatError) and "runs" in kwargs:
                    from fasteval.evaluator import qrels_given_as_run

                    e = qrels_given_as_run(e, list(kwargs["runs"])) or e
                click.echo(f"fasteval: error: {_one_line(str(e))}", err=True)
                sys.exit(1)
            except EOFError as e:
                # an input that ends early (click would take it for Ctrl-C: exit 130)
                click.echo(f"fasteval: error: an input ended early ({e})", err=True)
                sys.exit(1)
            except ImportError as e:
                msg = missing_extra_message(e)
                if msg is None:
                    raise
                click.echo(f"fasteval: error: {msg}", err=True)
                sys.exit(1)
            except KeyboardInterrupt:
                interrupted()

    return wrapper  # type: ignore[return-value]


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click decorators as one, applied in the order written (top first)."""

    def apply(fn: F) -> F:
        for deco in reversed(decorators):
            fn = deco(fn)
        return fn

    return apply


# The arguments and options every command that reads qrels and runs shares, so
# that they are spelled, defaulted and documented the same way everywhere.
qrels_and_runs = options(
    click.argument("qrels", type=click.Path(dir_okay=False)),
    click.argument("runs", nargs=-1, required=True, type=click.Path()),
)
run_id_option = click.option(
    "--run-id",
    "run_id_from",
    type=click.Choice(["tag", "filename"]),
    default="tag",
    show_default=True,
    help="Name runs after the tag column or the file name.",
)
keep_first_option = click.option(
    "--keep-first",
    is_flag=True,
    help="Keep the first of repeated documents in a ranking instead of failing.",
)
lenient_option = click.option(
    "--lenient", is_flag=True, help="Skip malformed lines (and say how many)."
)
# --run-id, --keep-first, --lenient: how run files are read
reading_options = options(run_id_option, keep_first_option, lenient_option)
level_option = click.option(
    "-l",
    "level",
    type=int,
    default=1,
    show_default=True,
    help="Relevance level: grade >= level is relevant.",
)


progress_option = click.option(
    "--progress/--no-progress",
    "progress",
    default=None,
    help="Progress bar on stderr (default: only when stderr is a terminal).",
)


def show_progress(progress: bool | None) -> bool:
    """Whether a command shows its progress bar: as asked, else when stderr is a terminal."""
    if progress is not None:
        return progress
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def progress_bar(total: int, unit: str, desc: str, show: bool) -> Any:
    """THE progress bar of every command: tqdm on stderr, shown if ``show``."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, disable=not show, file=sys.stderr)


@dataclass(frozen=True)
class Writes:
    """What a command writes to ``-o``: its formats, and how the file's suffix picks one.

    Parameters
    ----------
    formats
        The formats the command writes (its ``--format`` choices, or the one it has).
    text
        The format a text suffix (``.txt``, ``.run``, ...) or no suffix means, and the
        default without ``-o``; None when the command writes no text (refused).
    param
        The command's ``--format`` parameter (None: the suffix alone decides).
    any_suffix
        A suffix that names no format means ``text`` (runs and qrels have any name);
        otherwise it is an error listing the suffixes.
    named_by
        The command's own meaning of a suffix, over
        :data:`fasteval.io.formats.SUFFIX_FORMATS`.
    """

    formats: tuple[str, ...]
    text: str | None
    param: str | None = "fmt"
    any_suffix: bool = False
    named_by: tuple[tuple[str, str], ...] = ()


def _suffix_list(w: Writes) -> str:
    """``parquet (.parquet, .pq), csv (.csv), tsv (.txt, ... or none)``: what names each."""
    names = {**formats.SUFFIX_FORMATS, **dict(w.named_by)}
    listed = []
    for f in w.formats:
        suffixes = [s for s, g in names.items() if g == f]
        if f == w.text:
            suffixes += [s for s in formats.TEXT_SUFFIXES if s] + ["no suffix"]
        if suffixes:
            listed.append(f"{f} ({', '.join(suffixes)})")
    return ", ".join(listed)


def pick_format(
    w: Writes, fmt: str | None, output: str | None, where: str = "fasteval", opt: str = "-o"
) -> str:
    """The format a command writes: as ``--format`` says, else as ``-o``'s suffix says.

    A file is written in the format its suffix names, or the command refuses (a
    :class:`ParameterError`): a suffix naming a format the command does not write
    (``hsa -o h.jsonl``), one that disagrees with ``--format`` (``--format csv -o
    x.parquet``), Parquet into a text name, or a suffix that names nothing when the
    command writes several formats (``eval -o out.xlsx``; ``--format`` then says which).

    Parameters
    ----------
    w
        What the command writes.
    fmt
        Its ``--format``, None when not given.
    output
        Its ``-o``, None for standard output.
    where, opt
        The command's name and the option, for the messages (``fasteval hsa``, ``-o``).

    Returns
    -------
    str
        The format to write.
    """
    if output is None:
        return fmt or w.text or w.formats[0]
    suffix = formats.output_suffix(output)
    named = formats.named_format(output, w.named_by)
    text = named is None and (formats.is_text_name(output) or w.any_suffix)
    options = f"--format {'|'.join(w.formats)}" if w.param else ""
    if fmt is not None:
        agree = (
            fmt in (named, formats.named_format(output))
            or formats.agrees(output, fmt)
            or (text and fmt not in formats.BINARY)
            or (named is None and not text)  # a name that says nothing: --format decides
        )
        if agree:
            return fmt
        says = f"names {named}" if named else "names text"
        msg = (
            f"{opt} {output}: the suffix {suffix!r} {says}, but --format is {fmt}\n"
            f"  hint: leave --format out, or name the file for {fmt}"
        )
        raise ParameterError(msg)
    if text:
        named = w.text
        if named is None and not suffix and len(w.formats) == 1:
            named = w.formats[0]  # no suffix at all says nothing: the one format it writes
    if named is None and not text:
        msg = (
            f"{opt} {output}: cannot tell the format from the suffix {suffix!r}; "
            f"{where} writes {_suffix_list(w)}"
            + (f"\n  hint: or name it: {options}" if options else "")
        )
        raise ParameterError(msg)
    if named is None or named not in w.formats:
        what = named or "text"
        msg = (
            f"{opt} {output}: {where} cannot write {what} (the suffix {suffix!r}); "
            f"it writes {_suffix_list(w)}"
        )
        raise ParameterError(msg)
    return named


def output_format(fmt: str | None, output: str | None) -> str:
    """``eval``'s format: as ``--format`` says, else as ``-o``'s suffix says, else ``trec``."""
    return pick_format(EVAL_WRITES, fmt, output, "fasteval eval")


#: What ``fasteval eval`` writes.
EVAL_WRITES = Writes(("trec", "csv", "json", "jsonl", "parquet", "ndeval"), "trec")
#: What the analysis commands (hsa, ric, infodiff, correlate) write.
TABLE_WRITES = Writes(("tsv", "csv", "json", "parquet"), "tsv")


class OutputOption(click.Option):
    """``-o``, knowing what the command writes (:class:`Writes`); see :func:`check_output`."""

    def __init__(self, *args: Any, writes: Writes | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writes = writes


def check_output(params: dict[str, Any]) -> None:
    """Check ``-o`` before any input is read: its folder exists, its suffix fits.

    For a command whose ``-o`` says what it writes (:class:`OutputOption`), the
    format its ``--format`` parameter receives in ``params`` is the one
    :func:`pick_format` chooses.
    """
    check_output_folder()
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    for param in ctx.command.params:
        w = getattr(param, "writes", None)
        if not isinstance(w, Writes):
            continue
        value = params.get(param.name or "")
        fmt = params.get(w.param) if w.param else None
        chosen = pick_format(w, fmt, value, ctx.command_path, param.opts[0])
        if w.param and w.param in params:
            params[w.param] = chosen


def output_option(
    help: str = "Write here instead of standard output.",
    *,
    required: bool = False,
    writes: Writes | None = None,
) -> Callable[[F], F]:
    """``-o/--output FILE`` (optional unless ``required``).

    ``writes``: what the command writes; the file's suffix then picks the format,
    or the command refuses before reading anything (:func:`pick_format`).
    """
    return click.option(
        "-o",
        "--output",
        cls=OutputOption,
        writes=writes,
        type=click.Path(dir_okay=False),
        default=None,
        required=required,
        help=help,
    )
