"""Build the ahead-of-time kernel library that lets a fresh command skip numba.

:func:`build` runs two child processes with the JIT on (``FASTEVAL_AOT=0``). The
first runs the workload once, so that numba's on-disk cache holds every kernel.
The second:

1. it runs the evaluation workload of :func:`record` (the commands people
   start from the shell: text, gzip and Parquet runs, frames and dicts, every
   trec_eval measure family, the diversity measures) on the packaged sample,
   with the kernels already in numba's on-disk cache. Loading a kernel from
   that cache compiles nothing else, so the dispatchers then hold exactly the
   (kernel, argument types) pairs the evaluation calls from Python;
2. it exports each pair with ``numba.pycc`` under a name of its own, for this
   machine's CPU (as numba's JIT compiles) and with the GIL released (as
   ``nogil=True`` does; pycc has no option for it, so the compile flags are
   set here);
3. it writes the module and a JSON index beside it (kernel, argument type key,
   exported name, the module's SHA-256) through the atomic writer of
   :mod:`fasteval.io.writers`, and deletes older builds.

See :mod:`fasteval.kernels.jit` for how the library is used and when it is not.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.machinery
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fasteval.errors import FastevalError
from fasteval.io import writers
from fasteval.kernels import jit


def build(folder: Path | None = None, report: Callable[[str], None] | None = None) -> Path:
    """Build the library for these kernel sources in a child process; returns the module's path.

    Needs numba, a C compiler (``cc``) and a warm numba cache (``fasteval
    warmup`` runs this after warming it). Raises :class:`FastevalError` with
    the child's last lines when the build fails, and before any work when
    ``folder`` cannot be written.
    """
    target = writable_folder([folder] if folder is not None else jit.folders())
    t0 = time.perf_counter()
    _child("aot.record()")  # fills numba's cache, so the next child compiles nothing nested
    path = Path(_child(f"aot.main({str(target)!r})").strip().splitlines()[-1])
    if report is not None:
        report(f"ahead-of-time kernels built in {time.perf_counter() - t0:.1f} s: {path}")
    return path


def _child(call: str) -> str:
    """Run ``call`` in a fresh interpreter on numba's JIT; its standard output."""
    env = dict(os.environ, **{jit.AOT_ENV: "0"})
    code = f"from fasteval import aot; {call}"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        errors = [i for i, ln in enumerate(lines) if re.match(r"[\w.]+(Error|Exception):", ln)]
        tail = " ".join(lines[errors[-1] :] if errors else lines[-3:])
        msg = f"building the ahead-of-time kernels failed: {tail}"
        raise FastevalError(msg)
    return proc.stdout


def writable_folder(candidates: list[Path]) -> Path:
    """The first of ``candidates`` that is (or can be made) a folder we can write in."""
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=folder, delete=True)  # noqa: SIM115
            probe.close()
        except OSError:
            continue
        return folder
    where = ", ".join(str(f) for f in candidates)
    msg = f"cannot write the ahead-of-time kernels to {where} (set {jit.AOT_DIR_ENV})"
    raise FastevalError(msg)


def record() -> None:
    """Run the evaluation workload whose kernel calls the library will hold."""
    import warnings  # noqa: PLC0415

    import fasteval  # noqa: PLC0415
    from fasteval import warmup  # noqa: PLC0415
    from fasteval.io.tables import load_runs  # noqa: PLC0415

    q, r = warmup.SAMPLE_QRELS, warmup.SAMPLE_RUNS
    families = warmup.trec_families()
    core = ["map", "P_10", "ndcg_cut_10"]
    with tempfile.TemporaryDirectory() as d:
        run_dir, div = warmup.text_copies(Path(d))
        one = sorted(run_dir.iterdir())[0]
        gz = Path(d) / (one.name + ".gz")
        gz.write_bytes(gzip.compress(one.read_bytes()))
        big = big_run(one, Path(d) / "big.run")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for runs in (one, gz, run_dir, r, load_runs(r)):
                fasteval.evaluate(q, runs, core)
                fasteval.evaluate(q, runs, families)
            for compat in (9, 10):
                fasteval.evaluate(q, one, families, compat=compat, per_query=True)
            # files tokenised in ranges by several threads, and files or archives larger
            # than a batch (read in pieces)
            fasteval.evaluate(q, big, core)
            for runs in (one, gz, r):
                fasteval.evaluate(q, runs, core, batch_rows=300)
            warmup.in_memory(q, r)
            fasteval.diversity_evaluate(div, run_dir)


def big_run(one: Path, out: Path) -> Path:
    """``one``'s lines, then again under new query ids until the file passes the size at
    which text is tokenised in ranges (:data:`fasteval.io.tokens.SUBRANGE_BYTES`)."""
    from fasteval.io.tokens import SUBRANGE_BYTES  # noqa: PLC0415

    lines = one.read_text().splitlines()
    size = sum(len(x) + 1 for x in lines)
    parts: list[str] = []
    for k in range(SUBRANGE_BYTES // max(1, size) + 2):
        parts.extend(f"{k}x{line}" if k else line for line in lines)
    out.write_text("\n".join(parts) + "\n")
    return out


def exports() -> list[tuple[str, Any, Any, Any]]:
    """``(index name, key, python function, signature)`` of every compiled kernel call."""
    from numba.core.registry import CPUDispatcher  # noqa: PLC0415

    seen: set[int] = set()
    out = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("fasteval.kernels") or module is None:
            continue
        for value in vars(module).values():
            if not isinstance(value, CPUDispatcher) or id(value) in seen:
                continue
            seen.add(id(value))
            fn = value.py_func
            overloads: dict[Any, Any] = value.overloads
            for args, cres in overloads.items():
                key = jit.type_key(args)
                if jit.has_none(key):
                    continue
                sig = cres.signature.return_type(*args)
                out.append((f"{fn.__module__}:{fn.__qualname__}", key, fn, sig))
    return out


def main(folder: str) -> None:
    """The child process: record, compile, install; prints the module's path."""
    pycc_compiler: Any = importlib.import_module("numba.pycc.compiler")
    cc_class: Any = importlib.import_module("numba.pycc").CC
    flags_class: Any = pycc_compiler.Flags

    record()
    entries = exports()
    name = jit.module_name()

    def gil_free_flags() -> Any:
        """pycc's flags, with the GIL released in the Python wrappers (``nogil=True``)."""
        flags = flags_class()
        flags.release_gil = True
        return flags

    pycc_compiler.Flags = gil_free_flags
    # pycc targets a CPU model by name only; numba's JIT also sets the host's own
    # feature string (a virtual machine may hide some of the model's extensions)
    codegen: Any = importlib.import_module("numba.core.codegen")
    codegen.AOTCPUCodegen._customize_tm_features = codegen.JITCPUCodegen._customize_tm_features
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        cc = cc_class(name)
        cc.output_dir = tmp
        cc.target_cpu = "host"
        cc.verbose = False
        index: dict[str, list[list[Any]]] = {}
        for i, (kernel, key, fn, sig) in enumerate(entries):
            export = f"k{i}_{fn.__name__}"
            cc.export(export, sig)(fn)
            index.setdefault(kernel, []).append([key, export])
        cc.compile()
        data = next(Path(tmp).glob(name + "*")).read_bytes()
    so = out / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    writers.write_bytes(data, so)
    sha = hashlib.sha256(data).hexdigest()
    writers.write_text(json.dumps({"sha256": sha, "kernels": index}), out / (name + ".json"))
    for old in out.glob(jit.PREFIX + "*"):
        if not old.name.startswith(name):
            old.unlink(missing_ok=True)
    print(so)
