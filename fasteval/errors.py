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
