"""Compile the declared kernel signatures into the library the package ships with.

``fasteval/kernels/signatures.json`` declares the (kernel, argument types) pairs the
evaluation path calls; :func:`compile_library` compiles them with ``numba.pycc`` into
:data:`PARTS` extension modules (``_aot``, ``_aot1``), one process each, GIL released,
for the host CPU. ``setup.py`` runs it; :mod:`fasteval.kernels.jit` loads the modules
(numba's JIT serves where the build cannot compile). ``python -m fasteval.aot record``
rewrites ``signatures.json``; ``python -m fasteval.aot build [FOLDER]`` compiles.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from fasteval.kernels import jit


def record() -> None:
    """Run, on the packaged sample, the workload whose kernel calls the library must hold.

    Shell commands (text, gzip and Parquet runs, ranged tokenising, batched reads, every
    trec_eval family, both compat versions, diversity) and the in-memory inputs of the
    API and the ir_measures provider (polars/pandas frames with short, long,
    categorical and integer ids; dicts).
    """
    import warnings  # noqa: PLC0415

    import polars as pl  # noqa: PLC0415

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
            fasteval.evaluate(q, big, core)
            for runs in (one, gz, r):
                fasteval.evaluate(q, runs, core, batch_rows=300)
            warmup.in_memory(q, r)
            frame = load_runs(r)
            first = frame.filter(frame["run_id"] == frame["run_id"][0])
            ev = fasteval.Evaluator(q, core)
            longer = first.with_columns(
                pl.lit("sample-reranked").alias("run_id"), pl.col("doc_id") + "-p1"
            )
            for f in (
                frame,
                first,
                longer,
                first.with_columns(pl.col("run_id", "query_id").cast(pl.Categorical)),
                first.with_columns(pl.col("query_id").cast(pl.Int64)),
            ):
                ev.evaluate(f)
            with contextlib.suppress(ImportError):  # pandas is optional (through Arrow)
                fasteval.evaluate(q, first.to_pandas(), core)
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


def recorded() -> dict[str, list[Any]]:
    """Run :func:`record` on the JIT (this process must be on it); the declared form of
    every (kernel, argument types) it compiled: kernel -> sorted ``[argument key, return
    key]`` pairs, keys with mutability."""
    from numba.core.registry import CPUDispatcher  # noqa: PLC0415

    if jit.mode() != "jit":
        msg = f"recording needs numba's JIT: run it with {jit.AOT_ENV}=0"
        raise RuntimeError(msg)
    record()
    out: dict[str, list[Any]] = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("fasteval.kernels") or module is None:
            continue
        for value in vars(module).values():
            if not isinstance(value, CPUDispatcher) or value.py_func.__module__ != name:
                continue  # a kernel is read in its own module only
            overloads: dict[Any, Any] = value.overloads  # argument types -> compile result
            pairs = sorted(
                (
                    [
                        jit.type_key(args),
                        jit.type_key([c.signature.return_type])[0],
                    ]
                    for args, c in overloads.items()
                ),
                key=json.dumps,
            )
            calls: dict[Any, Any] = {}  # one export per call key: the first (read-only first)
            for key, ret in pairs:
                if not jit.has_none(key) and ret is not None:
                    calls.setdefault(jit.call_key(key), [key, ret])
            if calls:
                out[f"{name}:{value.py_func.__qualname__}"] = list(calls.values())
    return dict(sorted(out.items()))


def write_signatures(calls: dict[str, list[Any]], path: Path = jit.SIGNATURES) -> None:
    """Write ``calls`` as the checked-in declaration (one kernel signature a line)."""
    from fasteval.io import writers  # noqa: PLC0415

    rows = [json.dumps([k, key, ret]) for k, pairs in calls.items() for key, ret in pairs]
    writers.write_text('{"calls": [\n  ' + ",\n  ".join(rows) + "\n]}\n", path)


def declared(path: Path = jit.SIGNATURES) -> dict[str, list[tuple[Any, Any]]]:
    """The declared calls: kernel -> ``(argument key, return key)`` pairs (with mutability,
    as JSON lists)."""
    out: dict[str, list[tuple[Any, Any]]] = {}
    for kernel, key, ret in json.loads(path.read_text())["calls"]:
        out.setdefault(kernel, []).append((key, ret))
    return out


def numba_type(key: Any) -> Any:
    """The numba type a declared key stands for (arrays with their mutability)."""
    import numba  # noqa: PLC0415
    from numba.core import types  # noqa: PLC0415

    if isinstance(key, str):
        return {"bool": types.boolean, "none": types.none}.get(key) or getattr(types, key)
    head, *rest = key
    if head == "array":
        char, ndim, layout, aligned, mutable = rest
        dtype = numba.from_dtype(np.dtype(char))
        return types.Array(dtype, ndim, layout, readonly=not mutable, aligned=aligned)
    members = [numba_type(k) for k in rest[0]]
    if head == "tuple":
        return types.BaseTuple.from_types(members)  # type: ignore[no-untyped-call]
    module, _, qualname = head.rpartition(".")
    cls = getattr(importlib.import_module(module), qualname)
    return types.BaseTuple.from_types(members, cls)  # type: ignore[no-untyped-call]


PARTS = 2
"""How many processes compile the library at once, each into an extension module of
its own (:func:`split` shares the calls out); the modules are loaded together."""


def module_name(part: int) -> str:
    """The extension module of part ``part``: ``_aot``, ``_aot1``, ..."""
    return jit.LIBRARY + (str(part) if part else "")


def weight(fn: Any, seen: set[int] | None = None) -> int:
    """Source lines of kernel ``fn`` and of the kernels it calls: its compile work, roughly."""
    import inspect  # noqa: PLC0415

    seen = set() if seen is None else seen
    py = getattr(fn, "py_func", None)
    if py is None or id(py) in seen:
        return 0
    seen.add(id(py))
    total = len(inspect.getsourcelines(py)[0])
    names = py.__code__.co_names
    for name in names:
        value = py.__globals__.get(name)
        if inspect.ismodule(value):  # mp.gain_walk: the module's kernels named here
            total += sum(weight(getattr(value, n, None), seen) for n in names)
        else:
            total += weight(value, seen)
    return total


def split(parts: int) -> list[list[tuple[str, Any, Any]]]:
    """The declared calls as ``parts`` lists of ``(kernel, key, return key)`` of about
    equal :func:`weight` (heaviest first, each to the lightest list)."""
    calls = []
    for kernel, keys in declared().items():
        module, _, qualname = kernel.partition(":")
        w = weight(getattr(importlib.import_module(module), qualname))
        calls += [(w, kernel, key, ret) for key, ret in keys]
    shares: list[list[tuple[str, Any, Any]]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for w, kernel, key, ret in sorted(calls, key=lambda c: (-c[0], c[1], json.dumps(c[2]))):
        i = loads.index(min(loads))
        loads[i] += w
        shares[i].append((kernel, key, ret))
    return shares


def compile_part(tmp: Path, part: int, parts: int) -> None:
    """Compile part ``part`` of :func:`split` into ``tmp`` (on numba's JIT; pycc patched to
    release the GIL and target the host CPU, which it has no option for): the module and
    its index rows (``<module>.json``: kernel -> ``[argument key, module, export]``)."""
    pycc_compiler: Any = importlib.import_module("numba.pycc.compiler")
    cc_class: Any = importlib.import_module("numba.pycc").CC
    codegen: Any = importlib.import_module("numba.core.codegen")
    if jit.mode() != "jit":
        msg = f"compiling the library needs numba's JIT: run it with {jit.AOT_ENV}=0"
        raise RuntimeError(msg)

    flags_class: Any = pycc_compiler.Flags

    def gil_free_flags() -> Any:  # pycc's flags, with the GIL released in the wrappers
        flags = flags_class()
        flags.release_gil = True
        return flags

    pycc_compiler.Flags = gil_free_flags
    codegen.AOTCPUCodegen._customize_tm_features = codegen.JITCPUCodegen._customize_tm_features

    name = module_name(part)
    cc = cc_class(name)
    cc.output_dir = str(tmp)
    cc.output_file = jit.module_path(name, tmp).name
    cc.target_cpu = "host"
    cc.verbose = False
    index: dict[str, list[list[Any]]] = {}
    for n, (kernel, key, ret) in enumerate(split(parts)[part]):
        module, _, qualname = kernel.partition(":")
        dispatcher = getattr(importlib.import_module(module), qualname)
        sig = numba_type(ret)(*(numba_type(k) for k in key))
        export = f"k{n}_{qualname}"
        cc.export(export, sig)(dispatcher.py_func)
        index.setdefault(kernel, []).append([key, name, export])
    cc.compile()
    (tmp / (name + ".json")).write_text(json.dumps(index))


def _child_env() -> dict[str, str]:
    """The environment of a process compiling kernels: on the JIT, with this checkout first."""
    root = str(jit.KERNELS_DIR.parents[1])
    path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return dict(os.environ, **{jit.AOT_ENV: "0", "PYTHONPATH": path})


def compile_library(out: Path, parts: int = PARTS) -> Path:
    """Compile the declared signatures into ``out``: ``parts`` modules compiled at once
    (:func:`compile_part`, one process each), then their index ``_aot.json``.

    Returns the index's path. Modules of an earlier library left in ``out`` are removed.
    """
    out.mkdir(parents=True, exist_ok=True)
    names = [module_name(i) for i in range(parts)]
    modules: dict[str, str] = {}
    kernels: dict[str, list[list[Any]]] = {}
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "fasteval.aot", "part", tmp, str(i), str(parts)],
                env=_child_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(parts)
        ]
        errors = [p.communicate()[1] for p in procs]
        for p, err in zip(procs, errors, strict=True):
            if p.returncode != 0:
                lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
                raise RuntimeError(lines[-1] if lines else f"exit status {p.returncode}")
        # written atomically here, not by fasteval.io.writers: it imports polars, which
        # the package build's isolated environment does not have
        for name in names:
            data = jit.module_path(name, Path(tmp)).read_bytes()
            modules[name] = hashlib.sha256(data).hexdigest()
            for kernel, rows in json.loads((Path(tmp) / (name + ".json")).read_text()).items():
                kernels.setdefault(kernel, []).extend(rows)
            so = jit.module_path(name, out)
            part = so.with_name(so.name + ".tmp")
            part.write_bytes(data)
            os.replace(part, so)
    for old in out.glob(jit.LIBRARY + "*" + importlib.machinery.EXTENSION_SUFFIXES[0]):
        if old.name not in {jit.module_path(n, out).name for n in names}:
            old.unlink()
    info = {"digest": jit.digest(), "modules": modules, "kernels": dict(sorted(kernels.items()))}
    meta = jit.index_path(out)
    tmp_meta = meta.with_name(meta.name + ".tmp")
    tmp_meta.write_text(json.dumps(info))
    os.replace(tmp_meta, meta)
    return meta


def build(out: Path | None = None) -> tuple[Path | None, str]:
    """Compile the library into ``out`` (default: the package).

    Returns ``(the index's path, how long it took)`` or, when it could not be built,
    ``(None, why)`` in one line: the install goes on and numba's JIT serves.
    """
    t0 = time.perf_counter()
    try:
        meta = compile_library(out or jit.KERNELS_DIR)
    except (OSError, RuntimeError, ValueError) as e:
        return None, (str(e).strip().splitlines() or [type(e).__name__])[-1][:300]
    return meta, f"{time.perf_counter() - t0:.1f} s"


def main(argv: list[str]) -> int:
    """``record`` (rewrite signatures.json), ``build [FOLDER]`` (print the index's path) or
    ``part TMP I N`` (:func:`compile_part`, for ``build``)."""
    if argv[:1] == ["record"]:
        # a first process fills numba's cache: loading a kernel from it compiles no
        # kernel it calls, so this one's dispatchers hold the calls made from Python only
        env = dict(os.environ, **{jit.AOT_ENV: "0"})
        code = "from fasteval import aot; aot.record()"
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        calls = recorded()
        write_signatures(calls)
        print(f"{sum(len(v) for v in calls.values())} signatures of {len(calls)} kernels")
        return 0
    if argv[:1] == ["build"]:
        print(compile_library(Path(argv[1]) if len(argv) > 1 else jit.KERNELS_DIR))
        return 0
    if argv[:1] == ["part"] and len(argv) == 4:
        compile_part(Path(argv[1]), int(argv[2]), int(argv[3]))
        return 0
    print("usage: python -m fasteval.aot record | build [FOLDER]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
