"""What every ``fasteval`` sub-command shares: turning expected errors into one line."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import click

from fasteval.errors import FastevalError

F = TypeVar("F", bound=Callable[..., Any])


def _one_line(msg: str) -> str:
    return " | ".join(part.strip() for part in str(msg).splitlines() if part.strip())


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
                return fn(*args, **kwargs)
            except (FastevalError, OSError) as e:
                click.echo(f"fasteval: error: {_one_line(str(e))}", err=True)
                sys.exit(1)

    return wrapper  # type: ignore[return-value]
