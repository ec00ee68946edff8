"""The kernel library built with the package: same numbers as numba's JIT, no numba loaded.

The package build compiles the signatures declared in fasteval/kernels/signatures.json
(fasteval/aot.py); fasteval/kernels/jit.py chooses the library or the JIT once, at
start-up. The checks run fresh interpreters on the library this checkout's install
built (or, where the install could not, one built here into a temporary folder),
against interpreters on the JIT.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.kernels import jit
from fasteval.kernels.text import Str
from tests.conftest import SAMPLE_DATA, SHARED

QRELS = SAMPLE_DATA / "sample.qrels"
RUNS = SAMPLE_DATA / "sample_runs.parquet"

# --- argument keys: ours from values, numba's from types, must agree -------------------

DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64, np.bool_]


@st.composite
def arrays(draw: Any) -> np.ndarray:
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    a = np.zeros(shape, dtype)
    view = draw(st.sampled_from(["c", "f", "strided"]))
    if view == "f":
        a = np.asfortranarray(a)
    elif view == "strided":
        a = np.zeros(tuple(2 * s for s in shape), dtype)[(slice(None, None, 2),) * ndim]
    if draw(st.booleans()):
        a.flags.writeable = False
    return a


values = st.one_of(
    arrays(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.sampled_from([np.int64(3), np.float64(0.5), np.int32(2), np.bool_(True)]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(values, min_size=1, max_size=4), st.booleans())
def test_value_keys_equal_the_keys_of_numbas_types(args: list[Any], nest: bool) -> None:
    """A call's key is read off its values as numba reads their types (arrays: dtype,
    ndim, layout, alignment), and a declared key (with mutability) accepts it."""
    from numba import typeof
    from numba.core.typing.typeof import Purpose

    from fasteval import aot

    if nest:  # a kernel NamedTuple and a plain tuple around the values
        u8 = np.zeros(3, np.uint8)
        i8 = np.zeros(2, np.int64)
        args = [Str(u8, i8, i8), tuple(args)]
    types = [typeof(a, Purpose.argument) for a in args]
    key = jit.arg_key(tuple(args))
    declared = jit.type_key(types)
    assert key == jit.call_key(declared)
    assert not jit.has_none(key)
    assert jit.call_key(json.loads(json.dumps(declared))) == key
    assert tuple(aot.numba_type(k) for k in declared) == tuple(types)


def test_keys_tell_apart_what_the_library_tells_apart() -> None:
    """Layout, dtype and scalar kinds change the key; writability does not (the seam
    passes a read-only array to a function declared on a writable one)."""
    a = np.zeros(4, np.int64)
    ro = a.copy()
    ro.flags.writeable = False
    keys = [
        jit.arg_key((a,)),
        jit.arg_key((a[::2],)),
        jit.arg_key((a.astype(np.int32),)),
        jit.arg_key((1,)),
        jit.arg_key((1.0,)),
        jit.arg_key((True,)),
    ]
    assert len(set(keys)) == len(keys)
    assert jit.arg_key((ro,)) == keys[0]
    assert jit.has_none(jit.arg_key(("text",)))  # a str is not covered: numba handles it


def test_declared_signatures_name_real_kernels() -> None:
    """Every declared call names a kernel of fasteval.kernels, with complete argument and
    return keys that numba reads as types."""
    import importlib

    from fasteval import aot

    calls = aot.declared()
    assert sum(len(v) for v in calls.values()) >= 10
    for kernel, pairs in calls.items():
        module, _, qualname = kernel.partition(":")
        fn = getattr(importlib.import_module(module), qualname)
        assert getattr(fn, "py_func", None) is not None, kernel
        for key, ret in pairs:
            assert not jit.has_none(key) and not jit.has_none(ret), kernel
            sig = aot.numba_type(ret)(*(aot.numba_type(k) for k in key))
            assert len(sig.args) == len(key)


# --- the library itself --------------------------------------------------------------

STATE = """
from fasteval.kernels import jit
with open(os.environ["STATE_OUT"], "w") as f:
    s = jit.status()
    json.dump({"mode": s["mode"], "numba": "numba" in sys.modules,
               "misses": s["misses"], "reason": s["reason"]}, f)
"""

DRIVER = """
import json, os, sys, warnings
warnings.simplefilter("default")
from fasteval.cli import main
try:
    for args in json.loads(sys.argv[1]):
        print("###", " ".join(args))
        main(args, standalone_mode=False)
finally:
""" + "\n".join("    " + line for line in STATE.strip().splitlines())


def _run(
    args: Any,
    tmp: Path,
    library: Path | None,
    code: str = DRIVER,
    **extra_env: str,
) -> tuple[str, str, dict[str, Any]]:
    """A fresh interpreter running ``code`` (default: the ``fasteval`` commands in
    ``args``, a list of argument lists) on the JIT (``library=None``) or on the library
    in the folder ``library``: (stdout, stderr, {mode, numba imported, misses, reason})."""
    env = dict(os.environ, STATE_OUT=str(tmp / "state.json"), **extra_env)
    env.pop(jit.AOT_DIR_ENV, None)
    if library is None:
        env[jit.AOT_ENV] = "0"
    else:
        env[jit.AOT_ENV] = "1"
        env[jit.AOT_DIR_ENV] = str(library)
    argv = [json.dumps(args)] if code is DRIVER else [str(a) for a in args]
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    state = json.loads((tmp / "state.json").read_text())
    return proc.stdout, proc.stderr, state


ON_LIBRARY = {"mode": "library", "numba": False, "misses": [], "reason": None}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the library the install built for these sources; where the install
    could not build it (no C compiler), one built here, else the tests skip saying why."""
    from fasteval import aot

    saved = os.environ.pop(jit.AOT_DIR_ENV, None)
    try:
        os.environ[jit.AOT_DIR_ENV] = str(jit.KERNELS_DIR)
        installed, why = jit.load_library()
    finally:
        os.environ.pop(jit.AOT_DIR_ENV, None)
        if saved is not None:
            os.environ[jit.AOT_DIR_ENV] = saved
    if installed is not None:
        return jit.KERNELS_DIR
    folder = tmp_path_factory.mktemp("aot")
    so, how = aot.build(folder)
    if so is None:
        pytest.skip(f"the kernel library cannot be built here ({why}; {how})")
    return folder


TEXT_CASES = [
    ["-m", "map", "-m", "P_10"],
    ["-m", "all_trec", "-q"],
    ["-m", "official", "-c", "-M", "5", "--compat", "9"],
]


@pytest.mark.slow
def test_commands_on_the_library_print_what_the_jit_prints(library: Path, tmp_path: Path) -> None:
    """Text, gzip and Parquet runs, every trec_eval family, files read in pieces and
    tokenised in ranges, ndeval's measures: the same bytes, and numba never loaded."""
    from fasteval import aot, warmup

    run_dir, div = warmup.text_copies(tmp_path)
    one = sorted(run_dir.iterdir())[0]
    big = aot.big_run(one, tmp_path / "big.run")
    commands = [
        ["eval", str(QRELS), str(runs), *flags]
        for runs in (one, run_dir, RUNS)
        for flags in TEXT_CASES
    ]
    commands += [
        ["eval", str(QRELS), str(big), "-m", "map", "-m", "P_10", "-q"],
        ["ndeval", str(div), str(run_dir)],
    ]
    jit_out, _, jit_state = _run(commands, tmp_path, None, FASTEVAL_BATCH_ROWS="5000")
    aot_out, err, aot_state = _run(commands, tmp_path, library, FASTEVAL_BATCH_ROWS="5000")
    assert aot_out == jit_out
    assert jit_out.count("\n") > 1000
    assert jit_state["mode"] == "jit" and jit_state["numba"]
    assert aot_state == ON_LIBRARY, err


def _oracle_commands() -> list[list[str]]:
    """The oracle suites' inputs as commands: trec_eval's own test cases (both compat
    versions) and all 129 TREC-8 runs with every trec_eval measure, per query."""
    from tests.oracle.test_trec_eval_suite import CASES, PREFS_CASES

    te = SHARED / "trec_eval"
    t8 = SHARED / "trec8_adhoc"
    if not (te.is_dir() and t8.is_dir()):
        pytest.skip(f"real data not available: {te}, {t8} (set FASTEVAL_SHARED_DATA)")
    out = []
    for c in [*CASES, *PREFS_CASES]:
        for v in (9, 10):
            z = te / ("v9.0.8" if v == 9 else "") / "zscores_file"
            flags = [f.replace("{zscores_file}", str(z)) for f in c.flags]
            out.append(["eval", str(te / c.qrels), str(te / c.run), "--compat", str(v), *flags])
    qrels = str(t8 / "qrels.trec8.adhoc.gz")
    for compat in ("9", "10"):
        out.append(["eval", qrels, str(t8 / "runs"), "-m", "all_trec", "-q", "--compat", compat])
    return out


@pytest.mark.slow
@pytest.mark.realdata
def test_the_oracle_suites_give_the_same_bytes_on_the_library_and_the_jit(
    library: Path, tmp_path: Path
) -> None:
    """Every output the oracle suites check (trec_eval's test suite, TREC-8 against
    trec_eval 9 and 10) is byte for byte the same from the library as from the JIT."""
    commands = _oracle_commands()
    jit_out, _, _ = _run(commands, tmp_path, None)
    aot_out, err, state = _run(commands, tmp_path, library)
    assert state == ON_LIBRARY, err
    assert jit_out.count("\n") > 129 * 50 * 100  # every run, query and measure
    assert aot_out == jit_out


API = (
    """
import json, os, sys
import polars as pl
import fasteval
from fasteval.io.tables import load_runs
frame = load_runs(sys.argv[1])
one = frame.filter(frame["run_id"] == frame["run_id"][0])
run = {}
for qid, doc, score in one.select("query_id", "doc_id", "score").iter_rows():
    run.setdefault(qid, {})[doc] = score
ev = fasteval.Evaluator(sys.argv[2], ["map", "ndcg_cut_10", "P_5"])
parts = [ev.evaluate(frame), ev.evaluate(run), fasteval.evaluate(sys.argv[2], one.to_pandas())]
# ids of more than 12 bytes (beside the views, one data buffer: the run ids; several:
# the documents), categorical and integer ids
longer = one.with_columns(pl.lit("sample-reranked").alias("run_id"), pl.col("doc_id") + "-p1")
coded = one.with_columns(pl.col("run_id", "query_id").cast(pl.Categorical))
ints = one.with_columns(pl.col("query_id").cast(pl.Int64))
parts += [ev.evaluate(longer), ev.evaluate(coded), ev.evaluate(ints)]
# the ir_measures provider, on pandas frames (what PyTerrier passes)
import ir_measures
from ir_measures import AP, nDCG, P
qrels = pl.read_csv(sys.argv[2], separator=" ", has_header=False,
                    new_columns=["query_id", "it", "doc_id", "relevance"],
                    schema_overrides={"query_id": pl.Utf8, "doc_id": pl.Utf8})
qp = qrels.drop("it").to_pandas()
rp = one.select("query_id", "doc_id", "score").to_pandas()
from fasteval.ir_measures_provider import provider as prov
print(sorted((str(m), round(v, 12)) for m, v in
             prov.calc_aggregate([AP, nDCG@10, P@5], qp, rp).items()))
print("\\n".join(p.write_csv() for p in parts))
"""
    + STATE
)


@pytest.mark.slow
def test_library_calls_on_frames_dicts_and_the_provider_match_the_jit(
    library: Path, tmp_path: Path
) -> None:
    """An Evaluator on polars frames (ids short and long, categorical, integer) and a
    dict, evaluate() on a pandas frame, the ir_measures provider: the same output, and
    no call the library lacks."""
    pytest.importorskip("pandas")
    pytest.importorskip("ir_measures")
    jit_out, _, _ = _run([RUNS, QRELS], tmp_path, None, API)
    aot_out, err, state = _run([RUNS, QRELS], tmp_path, library, API)
    assert aot_out == jit_out
    assert jit_out.count("\n") > 100
    assert state == ON_LIBRARY, err


ARCHIVE_TO_PARQUET = (
    """
import json, os, sys
from fasteval.cli import main
qrels, archive, out = sys.argv[1:4]
args = ["eval", qrels, archive, "-q", "-m", "map", "--format", "parquet", "-o", out]
main(args, standalone_mode=False)
mods = ("pandas", "pyarrow.compute", "importlib.metadata", "numpy.ma")
print(json.dumps({m: m in sys.modules for m in mods}))
"""
    + STATE
)


def test_scoring_an_archive_into_parquet_loads_no_module_it_does_not_need(
    library: Path, tmp_path: Path
) -> None:
    """On the library (no numba): no pandas (the output is built from buffers), no
    pyarrow.compute (the archive's ids are read as stored), no importlib.metadata (the
    output is stamped with the package's own version) and no numpy.ma (no set
    operation of numpy's on the way)."""
    data = jit.KERNELS_DIR.parent / "data"
    archive = tmp_path / "runs.parquet"
    ingest = [sys.executable, "-m", "fasteval.cli", "ingest", str(data / "sample_runs.parquet")]
    subprocess.run([*ingest, "-o", str(archive)], capture_output=True, check=True)
    out_file = tmp_path / "out.parquet"
    args = [data / "sample.qrels", archive, out_file]
    out, err, state = _run(args, tmp_path, library, ARCHIVE_TO_PARQUET)
    assert state == ON_LIBRARY, err
    loaded = json.loads(out.strip().splitlines()[-1])
    assert loaded == dict.fromkeys(loaded, False) and len(loaded) == 4, loaded
    assert out_file.stat().st_size > 0


GIL = (
    """
import json, os, sys, threading, time
import numpy as np
from fasteval.kernels import strings
# 120,000 equal strings of 8 KB at two places by turns: each is compared, byte for
# byte, with the one before
n, size = 120_000, 8192
buf = np.zeros(size + 8, np.uint8)
starts = (np.arange(n, dtype=np.int64) % 2) * 8
ends = starts + size
strings.equal_runs(buf, starts[:10], ends[:10])   # loaded, types read
ticks = []
done = threading.Event()
def count():
    while not done.is_set():
        ticks.append(time.perf_counter())
t = threading.Thread(target=count)
t.start()
time.sleep(0.05)
t0 = time.perf_counter()
heads = strings.equal_runs(buf, starts, ends)
t1 = time.perf_counter()
done.set(); t.join()
inside = [t0] + [x for x in ticks if t0 < x < t1] + [t1]
gap = max(b - a for a, b in zip(inside, inside[1:]))
print(json.dumps({"seconds": t1 - t0, "longest_gap": gap, "heads": int(heads.shape[0])}))
"""
    + STATE
)


@pytest.mark.slow
def test_library_kernels_release_the_gil(library: Path, tmp_path: Path) -> None:
    """While a library kernel runs in one thread, a Python thread keeps running: the
    longest pause of its ticks is a small part of the kernel's call (with the GIL held
    it would be nearly all of it)."""
    out, err, state = _run([], tmp_path, library, GIL)
    got = json.loads(out.strip().splitlines()[-1])
    assert state == ON_LIBRARY, err
    assert got["heads"] == 1
    assert got["seconds"] > 0.05, got  # long enough to see the other thread run
    assert got["longest_gap"] < 0.5 * got["seconds"], got


@pytest.mark.slow
def test_a_kernel_the_library_lacks_runs_on_the_jit_alone(library: Path, tmp_path: Path) -> None:
    """Fusion is not in the library: its kernels compile on the JIT, the library keeps
    serving the rest (the mode does not change), and the fused run is the same."""
    args = [["fuse", str(RUNS), "--method", "combmnz", "-o", str(tmp_path / "f.run")]]
    _run(args, tmp_path, None)
    want = (tmp_path / "f.run").read_bytes()
    (tmp_path / "f.run").unlink()
    _, _, state = _run(args, tmp_path, library)
    assert (tmp_path / "f.run").read_bytes() == want
    assert state["mode"] == "library"
    assert state["numba"]
    misses = state["misses"]
    assert misses and all(m.startswith("fasteval.kernels.fusion.") for m in misses)


def _library_files(folder: Path) -> list[Path]:
    """The library's index and every module it names."""
    meta = jit.index_path(folder)
    names = json.loads(meta.read_text())["modules"]
    return [meta, *(jit.module_path(n, folder) for n in names)]


def test_the_library_is_several_modules_compiled_apart() -> None:
    """The build shares the declared calls out among PARTS modules, each call once, of
    about equal weight, the same way in every process."""
    from fasteval import aot

    shares = aot.split(aot.PARTS)
    assert aot.PARTS >= 2 and len(shares) == aot.PARTS and all(shares)
    flat = sorted(json.dumps(c) for share in shares for c in share)
    declared = sorted(
        json.dumps((k, key, ret)) for k, pairs in aot.declared().items() for key, ret in pairs
    )
    assert flat == declared
    assert aot.split(aot.PARTS) == shares
    assert len({aot.module_name(i) for i in range(aot.PARTS)}) == aot.PARTS


@pytest.mark.slow
def test_every_module_of_the_library_is_loaded(library: Path, tmp_path: Path) -> None:
    """In library mode all the index's modules are loaded, and the kernels of the
    evaluation path come from more than one of them."""
    code = (
        "import json, os, sys\n"
        "from fasteval.kernels import jit, ranking, text\n"
        "lib = jit._state['library']\n"
        "mods = sorted({n for rows in lib.index.values() for _, n, _ in rows})\n"
        "files = jit.status()['library']\n"
        "print(json.dumps({'loaded': sorted(lib.modules), 'used': mods, 'files': files}))\n" + STATE
    )
    out, err, state = _run([], tmp_path, library, code)
    got = json.loads(out.strip().splitlines()[-1])
    names = json.loads(jit.index_path(library).read_text())["modules"]
    assert got["loaded"] == sorted(names) and len(names) >= 2
    assert got["used"] == got["loaded"]
    assert sorted(Path(f).name for f in got["files"]) == sorted(
        jit.module_path(n, library).name for n in names
    )
    assert state["mode"] == "library", err


BYTES = (
    """
import json, os, sys
import numpy as np
from fasteval.kernels import hashing
buf = np.frombuffer(b"FBIS3-10001FBIS3-10002FBIS3-10001", np.uint8)
p = buf.ctypes.data
print(json.dumps([
    int(hashing.compare_bytes(p, 0, 11, 11, 22)),
    int(hashing.compare_bytes(p, 11, 22, 22, 33)),
    bool(hashing.equal_bytes(p, 0, 11, p, 22, 33)),
    int(hashing.hash_bytes(p, 0, 11)) == int(hashing.hash_bytes(p, 22, 33)),
]))
"""
    + STATE
)


@pytest.mark.slow
def test_byte_helpers_outside_the_library_compile_with_their_intrinsic(
    library: Path, tmp_path: Path
) -> None:
    """The byte helpers read through an intrinsic (not through an array, whose reference
    count every call would touch). Called with the library in use, they are not in it:
    they compile on the JIT, the intrinsic with them, and agree with Python's bytes."""
    out, err, state = _run([], tmp_path, library, BYTES)
    assert json.loads(out.strip().splitlines()[-1]) == [-1, 1, True, True]
    assert state["mode"] == "library", err
    assert state["numba"]
    assert "fasteval.kernels.hashing.compare_bytes" in state["misses"]


@pytest.mark.slow
def test_a_damaged_stale_or_missing_library_is_not_used(library: Path, tmp_path: Path) -> None:
    """A flipped byte in any module, a module from another build, an index of other
    sources, a module or the whole library missing: the JIT, the same numbers, the
    reason in the status, and one note line from the command."""
    args = [["eval", str(QRELS), str(RUNS), "-m", "map"]]
    want, _, _ = _run(args, tmp_path, None)
    files = _library_files(library)
    cases = []
    for k, module in enumerate(files[1:]):
        damaged = tmp_path / f"damaged{k}"
        damaged.mkdir()
        for f in files:
            shutil.copy(f, damaged / f.name)
        data = bytearray(module.read_bytes())
        data[len(data) // 2] ^= 0xFF
        (damaged / module.name).write_bytes(bytes(data))
        cases.append((damaged, "damaged"))
    # one module from another build of other sources (the others and the index current)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for f in files:
        shutil.copy(f, mixed / f.name)
    last = files[-1]
    (mixed / last.name).write_bytes(files[1].read_bytes())
    cases.append((mixed, "damaged"))

    stale = tmp_path / "stale"
    shutil.copytree(mixed, stale)
    shutil.copy(last, stale / last.name)
    meta = json.loads(jit.index_path(stale).read_text())
    meta["digest"] = "0" * 16
    jit.index_path(stale).write_text(json.dumps(meta))
    cases.append((stale, "sources changed"))

    partial = tmp_path / "partial"
    shutil.copytree(mixed, partial)
    (partial / last.name).unlink()
    cases.append((partial, "is missing"))

    missing = tmp_path / "missing"
    missing.mkdir()
    cases.append((missing, "no library"))
    for folder, why in cases:
        out, err, state = _run(args, tmp_path, folder)
        assert out == want
        assert state["mode"] == "jit"
        assert why in state["reason"], (folder, state["reason"])
        notes = [ln for ln in err.splitlines() if ln.startswith("fasteval: note:")]
        assert len(notes) == 1 and why in notes[0], err


def test_a_build_without_a_compiler_reports_one_line_and_no_library(tmp_path: Path) -> None:
    """The package build's step (aot.build) with a C compiler that fails: no library,
    and one line saying why, for setup.py to print; the install goes on."""
    from fasteval import aot

    saved = os.environ.get("CC")
    os.environ["CC"] = "false"
    try:
        so, why = aot.build(tmp_path)
    finally:
        if saved is None:
            os.environ.pop("CC")
        else:
            os.environ["CC"] = saved
    assert so is None
    assert why and "\n" not in why
    assert not list(tmp_path.glob(jit.LIBRARY + "*"))


def test_the_build_hook_goes_on_without_a_library(tmp_path: Path, capsys: Any) -> None:
    """setup.py's build_ext prints one line and raises nothing when the library
    cannot be built, so `pip install` succeeds and the JIT serves."""
    import importlib.util

    from setuptools import Distribution

    setup_file = jit.KERNELS_DIR.parents[1] / "setup.py"
    spec = importlib.util.spec_from_file_location("fasteval_setup", setup_file)
    assert spec is not None and spec.loader is not None
    setup_py = importlib.util.module_from_spec(spec)
    import setuptools

    calls: list[Any] = []
    real_setup = setuptools.setup
    setuptools.setup = lambda **kw: calls.append(kw)  # type: ignore[assignment]
    try:
        spec.loader.exec_module(setup_py)
    finally:
        setuptools.setup = real_setup  # type: ignore[assignment]
    (kw,) = calls
    dist = Distribution({"name": "fasteval", "ext_modules": kw["ext_modules"]})
    cmd = kw["cmdclass"]["build_ext"](dist)
    cmd.build_lib = str(tmp_path)
    cmd.ensure_finalized()
    saved = os.environ.get("CC")
    os.environ["CC"] = "false"
    try:
        cmd.run()
    finally:
        if saved is None:
            os.environ.pop("CC")
        else:
            os.environ["CC"] = saved
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("fasteval:")]
    assert len(lines) == 1 and "numba's JIT will compile them" in lines[0], lines
    assert not list(tmp_path.rglob("_aot*.so"))


def test_the_mode_is_chosen_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """mode() is read once: changing the variable afterwards changes nothing."""
    first = jit.mode()
    monkeypatch.setenv(jit.AOT_ENV, "1" if first == "jit" else "0")
    assert jit.mode() == first
