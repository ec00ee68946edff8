"""Start-up defaults of the ``fasteval`` command (never of the library).

numba's first dispatch imports ``numba.np.arraymath``, which probes for a BLAS by
importing ``scipy.linalg`` when SciPy is installed, a large part of a single-run
``fasteval eval``. fasteval's kernels use no BLAS (no ``np.dot`` or
``np.linalg`` inside numba; ``tests/unit/test_startup.py`` checks), so the
command lets that one probe fail. Only the probe: SciPy stays importable
afterwards, and a user's own process (the library) is never changed.

:func:`keep_freed_memory` sets glibc's ``malloc`` to keep the memory a command
frees for its next batch (the command's process only, as well).
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


def keep_freed_memory() -> None:
    """glibc: blocks up to 32 MB from the heap, and the heap's free top kept for the command.

    A command allocates the same large arrays batch after batch (and in every
    thread's arena). With glibc's defaults each is given back to the system when
    freed and faulted in afresh, zeroed, when allocated again; these settings
    save page faults and system time at the same peak memory (benchmarks/RESULTS.md,
    "Figures moved out of the code"; the command's process ends
    soon after; the library itself leaves ``malloc`` alone). Where there is no
    glibc ``mallopt`` (macOS, Windows), nothing. A threshold the user set
    (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` or the same in
    ``GLIBC_TUNABLES``) is left as the user set it.
    """
    import ctypes
    import os

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    for param, env, tunable, value in (
        (-3, "MALLOC_MMAP_THRESHOLD_", "mmap_threshold", 32 << 20),  # glibc's largest
        (-1, "MALLOC_TRIM_THRESHOLD_", "trim_threshold", 1 << 30),
    ):
        if env not in os.environ and f"glibc.malloc.{tunable}" not in tunables:
            mallopt(param, value)
