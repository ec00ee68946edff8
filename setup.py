"""The package build compiles the evaluation kernels (see fasteval/aot.py).

setuptools builds one extension, ``fasteval.kernels._aot``, by running
``python -m fasteval.aot build`` on this build's interpreter (it has numba and
numpy: pyproject's build requirements). When that fails (no C compiler, say)
the build prints one line and goes on: the package then runs its kernels on
numba's JIT, compiled on first use.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class BuildKernels(build_ext):
    """Compile the declared kernel signatures instead of C sources."""

    def run(self) -> None:
        for ext in self.extensions:
            target = Path(self.get_ext_fullpath(ext.name)).parent
            target.mkdir(parents=True, exist_ok=True)
            sys.path.insert(0, str(ROOT))
            try:
                from fasteval import aot  # noqa: PLC0415 (from this checkout)
            finally:
                sys.path.remove(str(ROOT))
            so, how = aot.build(target)
            if so is None:
                print(
                    f"fasteval: kernels not compiled ahead of time ({how}); "
                    "numba's JIT will compile them on first use",
                    file=sys.stderr,
                )
                continue
            print(f"fasteval: kernels compiled ahead of time in {how}", file=sys.stderr)
            meta = so.with_name("_aot.json")
            if self.inplace or getattr(self, "editable_mode", False):
                source = ROOT / "fasteval" / "kernels"
                if so.parent.resolve() != source.resolve():
                    shutil.copy(so, source / so.name)
                    shutil.copy(meta, source / meta.name)

    def get_outputs(self) -> list[str]:
        outs = super().get_outputs()
        return outs + [str(Path(o).with_name("_aot.json")) for o in outs]

    def copy_extensions_to_source(self) -> None:
        """Done in :meth:`run` (with the index beside the module)."""


setup(
    ext_modules=[Extension("fasteval.kernels._aot", sources=[], optional=True)],
    cmdclass={"build_ext": BuildKernels},
)
