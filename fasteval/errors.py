"""Exceptions raised by fasteval.

Every error names what went wrong and where (file, line, value) so that a
user can fix the input without reading a traceback; the CLI prints the
message on one line and exits non-zero.
"""

from __future__ import annotations


class FastevalError(Exception):
    """Base class of every error fasteval raises on purpose."""


class InputFormatError(FastevalError):
    """A qrels or run file (or table) is malformed: bad line, bad value, duplicates."""


class SchemaError(FastevalError):
    """A table handed to fasteval lacks a required column or has the wrong type."""


class MeasureError(FastevalError):
    """An unknown measure name or an invalid measure parameter."""


class DataMismatchError(FastevalError):
    """Runs and qrels do not fit together (e.g. no query in common)."""


class FastevalWarning(UserWarning):
    """Something was skipped or adjusted on the user's request (e.g. lenient parsing)."""


class ParameterError(FastevalError, ValueError):
    """An argument out of its domain (e.g. ``compat=8``, ``max_depth=0``)."""


class DamagedFileError(InputFormatError):
    """A file fasteval stored does not hold what was written (a page checksum or digest).

    ``what``: the damage found, without the file's name and the advice.
    """

    def __init__(self, msg: str, what: str = "") -> None:
        super().__init__(msg)
        self.what = what or msg


class WriteError(FastevalError):
    """An output could not be written (disk full, read-only, no permission, I/O error).

    The target keeps its previous content and no temporary file is left behind.
    """


def install_hint(extra: str) -> str:
    """How to install an optional extra, from an index and from a checkout (one line)."""
    return f"pip install 'fasteval[{extra}]' (from a checkout: pip install -e '.[{extra}]')"
