"""The hot path keeps the shape issue 45 gave it (``scripts/hotpath_metrics.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "hotpath_metrics.py"


def _metrics() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hotpath_metrics", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("hotpath_metrics", module)
    spec.loader.exec_module(module)
    return module


def test_options_travel_as_one_value() -> None:
    """At most ten internal functions take one of trec_eval's options on its own."""
    found = _metrics().option_functions()
    assert len(found) <= 10, "\n".join(found)


def test_only_the_format_homes_test_a_suffix() -> None:
    """Input formats live in io/formats.py, output names in io/writers.py."""
    assert _metrics().suffix_modules() == ["fasteval/io/formats.py", "fasteval/io/writers.py"]


def test_no_timing_claim_in_the_code() -> None:
    """Figures go stale in comments: they live in benchmarks/RESULTS.md."""
    assert _metrics().timing_claims() == []


def test_the_counters_see_what_they_count(tmp_path: Path) -> None:
    """Each counter finds its pattern (so an empty list above means something)."""
    m = _metrics()
    assert m.TIMING.search("ran 1.38 -> 1.22 s") and m.TIMING.search("2.6x faster")
    assert not m.TIMING.search("a 95% interval of the 1990s runs")
    assert m.SUFFIX.search("p . suffix == '.gz'") and m.SUFFIX.search("name . endswith ( '.csv'")
    assert not m.SUFFIX.search("text . endswith ( '\\n' )")
