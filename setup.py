"""The package build compiles the evaluation kernels (see fasteval/aot.py).

setuptools builds one extension, ``fasteval.kernels._aot`` (with ``_aot1`` and the
index ``_aot.json`` beside it), with ``fasteval.aot.build``: it compiles the modules in
parallel processes of this build's interpreter (it has numba and numpy: pyproject's
build requirements). When that fails (no C compiler, say)
the build prints one line and goes on: the package then runs its kernels on
numba's JIT, compiled on first use.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _aot() -> Any:
    """This checkout's ``fasteval.aot`` (importing numpy only, which the build has)."""
    sys.path.insert(0, str(ROOT))
    try:
        from fasteval import aot  # noqa: PLC0415
    finally:
        sys.path.remove(str(ROOT))
    return aot


class BuildKernels(build_ext):
    """Compile the declared kernel signatures instead of C sources."""

    def run(self) -> None:
        aot = _aot()
        for ext in self.extensions:
            target = Path(self.get_ext_fullpath(ext.name)).parent
            target.mkdir(parents=True, exist_ok=True)
            meta, how = aot.build(target)
            if meta is None:
                print(
                    f"fasteval: kernels not compiled ahead of time ({how}); "
                    "numba's JIT will compile them on first use",
                    file=sys.stderr,
                )
                continue
            print(f"fasteval: kernels compiled ahead of time in {how}", file=sys.stderr)
            if self.inplace or getattr(self, "editable_mode", False):
                source = ROOT / "fasteval" / "kernels"
                if meta.parent.resolve() != source.resolve():
                    for name in json.loads(meta.read_text())["modules"]:
                        so = aot.jit.module_path(name, meta.parent)
                        shutil.copy(so, source / so.name)
                    shutil.copy(meta, source / meta.name)

    def get_outputs(self) -> list[str]:
        aot = _aot()
        outs = super().get_outputs()
        more = [aot.jit.index_path(Path(o).parent) for o in outs]
        more += [
            aot.jit.module_path(aot.module_name(i), Path(o).parent)
            for o in outs
            for i in range(1, aot.PARTS)
        ]
        return outs + [str(m) for m in more]

    def copy_extensions_to_source(self) -> None:
        """Done in :meth:`run` (with the index and the other modules beside the module)."""


setup(
    ext_modules=[Extension("fasteval.kernels._aot", sources=[], optional=True)],
    cmdclass={"build_ext": BuildKernels},
)
