"""The ahead-of-time kernel library: same numbers as numba's JIT, no numba loaded.

``fasteval warmup`` builds the library (fasteval/aot.py); fasteval/kernels/jit.py
uses it while the argument types of each call are in it and switches the process
to numba otherwise. The library is built once here into a temporary folder and
every check runs a fresh interpreter on it, against one on the JIT.
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
from tests.conftest import SAMPLE_DATA

SAMPLE = SAMPLE_DATA
QRELS = SAMPLE / "sample.qrels"
RUNS = SAMPLE / "sample_runs.parquet"

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
    """Two calls with one key have one numba signature: the key is read off the values as
    numba reads their types (arrays: dtype, ndim, layout, read-only, alignment)."""
    from numba import typeof
    from numba.core.typing.typeof import Purpose

    if nest:  # a kernel NamedTuple and a plain tuple around the values
        u8 = np.zeros(3, np.uint8)
        i8 = np.zeros(2, np.int64)
        args = [Str(u8, i8, i8), tuple(args)]
    types = [typeof(a, Purpose.argument) for a in args]
    key = jit.arg_key(tuple(args))
    assert key == jit.type_key(types)
    assert not jit.has_none(key)


def test_keys_tell_apart_what_numba_tells_apart() -> None:
    """Layout, read-only, dtype and scalar kinds each change the key."""
    a = np.zeros(4, np.int64)
    ro = a.copy()
    ro.flags.writeable = False
    keys = [
        jit.arg_key((a,)),
        jit.arg_key((ro,)),
        jit.arg_key((a[::2],)),
        jit.arg_key((a.astype(np.int32),)),
        jit.arg_key((1,)),
        jit.arg_key((1.0,)),
        jit.arg_key((True,)),
    ]
    assert len(set(keys)) == len(keys)
    assert jit.has_none(jit.arg_key(("text",)))  # a str is not covered: numba handles it
    assert jit.freeze(json.loads(json.dumps(keys[2]))) == keys[2]


# --- the library itself --------------------------------------------------------------

DRIVER = """
import json, os, sys, warnings
warnings.simplefilter("default")
from fasteval.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    from fasteval.kernels import jit
    with open(os.environ["STATE_OUT"], "w") as f:
        json.dump({"mode": jit.mode(), "numba": "numba" in sys.modules,
                   "switched_by": jit.status()["switched_by"]}, f)
"""


def _run(
    args: list[str],
    tmp: Path,
    library: Path | None,
    code: str = DRIVER,
    **extra_env: str,
) -> tuple[str, str, dict[str, Any]]:
    """A fresh interpreter running ``code`` (default: ``fasteval ARGS``) on the JIT
    (``library=None``) or on the library: (stdout, stderr, {mode, numba imported})."""
    env = dict(os.environ, STATE_OUT=str(tmp / "state.json"), **extra_env)
    if library is None:
        env[jit.AOT_ENV] = "0"
    else:
        env[jit.AOT_ENV] = "1"
        env[jit.AOT_DIR_ENV] = str(library)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    state = json.loads((tmp / "state.json").read_text())
    return proc.stdout, proc.stderr, state


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The library for this checkout's kernels, built once into a temporary folder."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: the ahead-of-time library cannot be built here")
    from fasteval import aot

    folder = tmp_path_factory.mktemp("aot")
    so = aot.build(folder)
    assert so.parent == folder
    assert so.name.startswith(jit.module_name())
    return folder


TEXT_CASES = [
    ["-m", "map", "-m", "P_10"],
    ["-m", "all_trec", "-q"],
    ["-m", "official", "-c", "-M", "5", "--compat", "9"],
]


@pytest.mark.slow
@pytest.mark.parametrize("flags", TEXT_CASES, ids=["map-P10", "all_trec-q", "official-c-M5-v9"])
def test_commands_on_the_library_print_what_the_jit_prints(
    library: Path, tmp_path: Path, flags: list[str]
) -> None:
    """Text and Parquet runs, every trec_eval family: the same bytes, and numba never loaded."""
    from fasteval import warmup

    run_dir, _ = warmup.text_copies(tmp_path)
    for runs in (sorted(run_dir.iterdir())[0], run_dir, RUNS):
        args = ["eval", str(QRELS), str(runs), *flags]
        jit_out, _, jit_state = _run(args, tmp_path, None)
        aot_out, err, aot_state = _run(args, tmp_path, library)
        assert aot_out == jit_out
        assert jit_out.count("\n") > 1
        assert jit_state == {"mode": "numba", "numba": True, "switched_by": None}
        assert aot_state == {"mode": "aot", "numba": False, "switched_by": None}, err


@pytest.mark.slow
def test_big_files_in_ranges_and_pieces_run_on_the_library(library: Path, tmp_path: Path) -> None:
    """A file tokenised in ranges by both threads, read in pieces smaller than itself (as
    an MS MARCO run is): numba is not loaded for it either."""
    from fasteval import aot, warmup

    run_dir, _ = warmup.text_copies(tmp_path)
    big = aot.big_run(sorted(run_dir.iterdir())[0], tmp_path / "big.run")
    args = ["eval", str(QRELS), str(big), "-m", "map", "-m", "P_10", "-q"]
    jit_out, _, _ = _run(args, tmp_path, None, FASTEVAL_BATCH_ROWS="5000")
    aot_out, _, state = _run(args, tmp_path, library, FASTEVAL_BATCH_ROWS="5000")
    assert aot_out == jit_out
    assert jit_out.count("\n") > 40
    assert state == {"mode": "aot", "numba": False, "switched_by": None}


@pytest.mark.slow
def test_diversity_on_the_library_prints_what_the_jit_prints(library: Path, tmp_path: Path) -> None:
    """ndeval's measures run from the library too."""
    from fasteval import warmup

    run_dir, div = warmup.text_copies(tmp_path)
    args = ["ndeval", str(div), str(run_dir)]
    jit_out, _, _ = _run(args, tmp_path, None)
    aot_out, _, state = _run(args, tmp_path, library)
    assert aot_out == jit_out
    assert state == {"mode": "aot", "numba": False, "switched_by": None}


@pytest.mark.slow
def test_a_kernel_the_library_lacks_switches_the_process_to_numba(
    library: Path, tmp_path: Path
) -> None:
    """Fusion is not in the library: the command loads numba once and prints the same run."""
    args = ["fuse", str(RUNS), "--method", "combmnz", "-o", str(tmp_path / "f.run")]
    _run(args, tmp_path, None)
    want = (tmp_path / "f.run").read_bytes()
    (tmp_path / "f.run").unlink()
    _, _, state = _run(args, tmp_path, library)
    assert (tmp_path / "f.run").read_bytes() == want
    assert state["mode"] == "numba"
    assert state["numba"]
    assert state["switched_by"].startswith("fasteval.kernels.fusion.")


@pytest.mark.slow
def test_a_damaged_or_stale_library_is_not_used(library: Path, tmp_path: Path) -> None:
    """A flipped byte: a warning naming the file, numba's JIT, the same numbers.
    A library built from other sources (another digest in its name) is ignored."""
    args = ["eval", str(QRELS), str(RUNS), "-m", "map"]
    want, _, _ = _run(args, tmp_path, None)
    damaged = tmp_path / "damaged"
    shutil.copytree(library, damaged)
    so = next(damaged.glob("*.so"))
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0xFF
    so.write_bytes(bytes(data))
    out, err, state = _run(args, tmp_path, damaged)
    assert out == want
    assert state["mode"] == "numba"
    assert so.name in err
    assert "damaged" in err

    stale = tmp_path / "stale"
    stale.mkdir()
    for f in library.iterdir():
        shutil.copy(f, stale / f.name.replace(jit.module_name(), jit.PREFIX + "0" * 16))
    out, err, state = _run(args, tmp_path, stale)
    assert out == want
    assert state["mode"] == "numba"
    assert "damaged" not in err


API = """
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
print("\\n".join(p.write_csv() for p in parts))
from fasteval.kernels import jit
with open(os.environ["STATE_OUT"], "w") as f:
    json.dump({"mode": jit.mode(), "numba": "numba" in sys.modules,
               "switched_by": jit.status()["switched_by"]}, f)
"""


@pytest.mark.slow
def test_library_calls_on_frames_and_dicts_match_the_jit(library: Path, tmp_path: Path) -> None:
    """An Evaluator on polars frames (ids short and long, categorical, integer) and a
    dict, evaluate() on a pandas frame: the same output, and no call the library lacks."""
    pytest.importorskip("pandas")
    jit_out, _, _ = _run([str(RUNS), str(QRELS)], tmp_path, None, API)
    aot_out, _, state = _run([str(RUNS), str(QRELS)], tmp_path, library, API)
    assert aot_out == jit_out
    assert jit_out.count("\n") > 100
    assert state == {"mode": "aot", "numba": False, "switched_by": None}


def test_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path: Path) -> None:
    """One line naming the folder and the variable that moves it; nothing is run."""
    from fasteval import aot
    from fasteval.errors import FastevalError

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(FastevalError, match=r"cannot write .*a-file.*FASTEVAL_AOT_DIR"):
        aot.build(blocker / "aot")


@pytest.mark.slow
def test_warmup_without_a_working_compiler_warns_and_keeps_the_jit(tmp_path: Path) -> None:
    """`fasteval warmup` whose C compiler fails: exit 0, one warning line, no library."""
    from click.testing import CliRunner

    from fasteval import aot
    from fasteval.cli import main

    env = {"CC": "false", jit.AOT_DIR_ENV: str(tmp_path), jit.AOT_ENV: "1"}
    res = CliRunner().invoke(main, ["warmup"], env=env)
    assert res.exit_code == 0, res.output
    warning = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1, res.stderr
    assert "building the ahead-of-time kernels failed" in warning[0]
    assert "numba's JIT" in warning[0]
    assert not list(tmp_path.glob(jit.PREFIX + "*"))
    assert aot.writable_folder([tmp_path]) == tmp_path
