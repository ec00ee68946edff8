"""The package's lazy public names and the engine's garbage-collector pause."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

import fasteval
from fasteval.parallel import gc_paused


@pytest.mark.parametrize("name", fasteval.__all__)
def test_every_public_name_resolves(name: str) -> None:
    value = getattr(fasteval, name)
    assert value is not None
    assert name in dir(fasteval)
    # the name comes from the module that defines it
    assert getattr(value, "__name__", name) == name


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = fasteval.no_such_thing  # type: ignore[attr-defined]


def test_submodules_still_import_from_the_package() -> None:
    from fasteval import parallel, studies

    assert callable(studies.subsample)
    assert callable(parallel.run)


def test_import_loads_no_engine_or_analysis_module() -> None:
    code = (
        "import sys, fasteval; "
        "print(sorted(m for m in sys.modules if m.startswith(('fasteval.', 'numba', 'polars'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "['fasteval._version', 'fasteval.errors']"


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_version_is_the_installed_distributions() -> None:
    """Outputs stamp ``fasteval.__version__``: it must be the version pip installed."""
    from importlib.metadata import version

    assert fasteval.__version__ == version("fasteval")
