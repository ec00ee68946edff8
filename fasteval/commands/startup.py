"""Start-up defaults of the ``fasteval`` command (never of the library).

numba's first dispatch imports ``numba.np.arraymath``, which probes for a BLAS by
importing ``scipy.linalg`` when SciPy is installed: 0.45 s of a 2 s single-run
``fasteval eval`` here. fasteval's kernels use no BLAS (no ``np.dot`` or
``np.linalg`` inside numba; ``tests/unit/test_startup.py`` checks), so the
command lets that one probe fail. Only the probe: SciPy stays importable
afterwards, and a user's own process (the library) is never changed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class _NoBlasProbe:
    """A meta-path finder that refuses ``scipy.linalg`` while numba's arraymath
    module is being executed (it is in ``sys.modules`` but has not yet set
    ``_HAVE_BLAS``), and steps aside at every other time."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name == "scipy.linalg" or name.startswith("scipy.linalg."):
            mod = sys.modules.get("numba.np.arraymath")
            if mod is not None and not hasattr(mod, "_HAVE_BLAS"):
                msg = "fasteval's command does not use a BLAS in numba"
                raise ImportError(msg)
        return None


def skip_blas_probe() -> None:
    """Install the finder once (idempotent)."""
    if not any(isinstance(f, _NoBlasProbe) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoBlasProbe())
