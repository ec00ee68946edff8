"""The command's start-up defaults: numba's BLAS probe is skipped, nothing else is."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[2] / "fasteval" / "kernels"


def test_no_kernel_uses_blas() -> None:
    """The probe may be skipped only while no numba function needs a BLAS."""
    used = []
    for path in sorted(KERNELS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in {"dot", "vdot", "matmul", "linalg"}:
                used.append(f"{path.name}:{node.lineno} {node.attr}")
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                used.append(f"{path.name}:{node.lineno} @")
    assert len(list(KERNELS.glob("*.py"))) > 5
    assert used == []


def test_command_skips_the_probe_and_scipy_stays_importable() -> None:
    code = (
        "import fasteval.cli, numba, numpy as np, sys\n"
        "f = numba.njit(lambda a: a.sum())\n"
        "assert f(np.arange(3)) == 3\n"
        "import numba.np.arraymath as m\n"
        "print(m._HAVE_BLAS, 'scipy.linalg' in sys.modules)\n"
        "import scipy.linalg\n"
        "print(scipy.linalg.norm([3.0, 4.0]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "5.0"]


def test_the_library_keeps_the_probe() -> None:
    code = (
        "import fasteval, numba, numpy as np\n"
        "f = numba.njit(lambda a: a.sum())\n"
        "f(np.arange(3))\n"
        "import numba.np.arraymath as m\n"
        "print(m._HAVE_BLAS)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True"]


def test_scoring_an_archive_imports_neither_pandas_nor_pyarrow_compute(tmp_path: Path) -> None:
    """Only a pandas input should pay pandas' import; an archive's ids are read from its
    buffers, with no cast that would load pyarrow.compute."""
    data = KERNELS.parent / "data"
    archive = tmp_path / "runs.parquet"
    ingest = [sys.executable, "-m", "fasteval.cli", "ingest", str(data / "sample_runs.parquet")]
    subprocess.run([*ingest, "-o", str(archive)], capture_output=True, check=True)
    code = (
        "import sys, fasteval\n"
        f"df = fasteval.evaluate({str(data / 'sample.qrels')!r}, {str(archive)!r}, ['map'])\n"
        "print(df.height > 0, 'pandas' in sys.modules, 'pyarrow.compute' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False"]


def test_scoring_an_archive_into_parquet_imports_neither_pandas_nor_pyarrow_compute(
    tmp_path: Path,
) -> None:
    """The Parquet output is built from the engine's arrays: no pandas for it either
    (test_aot checks the modules numba would load, on the library)."""
    data = KERNELS.parent / "data"
    archive = tmp_path / "runs.parquet"
    ingest = [sys.executable, "-m", "fasteval.cli", "ingest", str(data / "sample_runs.parquet")]
    subprocess.run([*ingest, "-o", str(archive)], capture_output=True, check=True)
    out_file = tmp_path / "out.parquet"
    code = (
        "import sys\n"
        "from fasteval.cli import main\n"
        f"args = ['eval', {str(data / 'sample.qrels')!r}, {str(archive)!r}]\n"
        f"main(args + ['-q', '-m', 'map', '--format', 'parquet', '-o', {str(out_file)!r}],\n"
        "     standalone_mode=False)\n"
        "print('pandas' in sys.modules, 'pyarrow.compute' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-2:] == ["False", "False"], out.stdout
    import pyarrow.parquet as pq

    table = pq.read_table(out_file)
    assert table.num_rows > 1
    assert table.column("value").null_count == 0
    assert set(table.column("measure").to_pylist()) == {"map"}


@pytest.mark.parametrize("q", ["", "-q"])
def test_one_text_run_imports_neither_polars_pyarrow_compute_nor_pandas(
    tmp_path: Path, q: str
) -> None:
    """A text run's evaluation, as the command does it, leaves out polars (the long
    table is rendered from the engine's arrays), pyarrow.compute and pandas (a few
    query ids are sorted and looked up in Python)."""
    data = KERNELS.parent / "data"
    run = tmp_path / "one.run"
    judged = [ln.split() for ln in (data / "sample.qrels").read_text().splitlines()[:60]]
    lines = [f"{q} Q0 {d} {i} {1.0 / (i + 1)} r" for i, (q, _, d, _) in enumerate(judged)]
    run.write_text("\n".join(lines) + "\n")
    code = (
        "import sys\n"
        "from fasteval.cli import main\n"
        f"args = ['eval', {str(data / 'sample.qrels')!r}, {str(run)!r}, '-m', 'map', '-m', 'P_5']\n"
        f"main(args + ([{q!r}] if {q!r} else []), standalone_mode=False)\n"
        "print(*(m in sys.modules for m in ('polars', 'pyarrow.compute', 'pandas')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-3:] == ["False", "False", "False"], out.stdout
    lines = out.stdout.splitlines()[:-1]
    assert [ln.split("\t")[0].strip() for ln in lines if ln.split("\t")[1] == "all"] == [
        "map",
        "P_5",
    ]
    assert (len(lines) > 2) == bool(q), lines


def test_a_batch_of_run_files_loads_no_progress_bar_it_does_not_show(tmp_path: Path) -> None:
    """tqdm is loaded only to draw a bar: not when stderr is no terminal."""
    data = KERNELS.parent / "data"
    judged = [ln.split() for ln in (data / "sample.qrels").read_text().splitlines()[:60]]
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("a", "b", "c"):
        lines = [f"{q} Q0 {d} {i} {1.0 / (i + 1)} {name}" for i, (q, _, d, _) in enumerate(judged)]
        (runs / name).write_text("\n".join(lines) + "\n")
    code = (
        "import sys\n"
        "from fasteval.cli import main\n"
        f"main(['eval', {str(data / 'sample.qrels')!r}, {str(runs)!r}, '-m', 'map'],\n"
        "     standalone_mode=False)\n"
        "print('tqdm' in sys.modules)\n"
    )
    env = os.environ | {"FASTEVAL_BATCH_ROWS": "60"}  # a batch per file: a bar to update
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split()[-1] == "False", out.stdout
    lines = out.stdout.splitlines()[:-1]
    assert [ln.split()[2] for ln in lines if ln.startswith("runid")] == ["a", "b", "c"]


def _pool_in(code: str, env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=clean | env
    )
    return out.stdout.strip()


def test_the_command_takes_arrow_memory_from_malloc_unless_told_otherwise() -> None:
    code = "import fasteval.cli, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    assert _pool_in(code, {}) == "system"
    assert _pool_in(code, {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}) == "jemalloc"
    # the library leaves a user's process as it is
    lib = "import fasteval, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    plain = "import pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    assert _pool_in(lib, {}) == _pool_in(plain, {})


def test_keep_freed_memory_is_quiet_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    from fasteval.commands import startup

    class NoMallopt:
        def __init__(self, *_: object) -> None:
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoMallopt)
    startup.keep_freed_memory()  # no mallopt (macOS, musl-less builds): nothing happens


def test_keep_freed_memory_leaves_a_threshold_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    from fasteval.commands import startup

    calls: list[tuple[int, int]] = []

    class Libc:
        def __init__(self, *_: object) -> None:
            self.mallopt = Recorder()

    class Recorder:
        argtypes: tuple[object, ...] = ()

        def __call__(self, param: int, value: int) -> int:
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", Libc)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    startup.keep_freed_memory()
    assert calls == [(-3, 32 << 20), (-1, 1 << 30)]
    calls.clear()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    startup.keep_freed_memory()
    assert calls == [(-3, 32 << 20)]
    calls.clear()
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=65536")
    startup.keep_freed_memory()
    assert calls == []


def _sample_run(tmp_path: Path) -> Path:
    """A run file of the packaged qrels' first 60 judged documents."""
    run = tmp_path / "one.run"
    qrels = KERNELS.parent / "data" / "sample.qrels"
    judged = [ln.split() for ln in qrels.read_text().splitlines()[:60]]
    run.write_text("".join(f"{q} Q0 {d} {i} {1.0 / (i + 1)} r\n" for i, (q, _, d, _) in
                           enumerate(judged)))  # fmt: skip
    return run


def test_a_parquet_output_of_text_runs_does_not_import_polars(tmp_path: Path) -> None:
    """``-o x.parquet`` writes the engine's table through Arrow: no polars either."""
    data = KERNELS.parent / "data"
    run = _sample_run(tmp_path)
    out = tmp_path / "out.parquet"
    code = (
        "import sys\n"
        "from fasteval.cli import main\n"
        f"main(['eval', {str(data / 'sample.qrels')!r}, {str(run)!r}, '-m', 'map', '-q',"
        f" '-o', {str(out)!r}], standalone_mode=False)\n"
        "print('polars' in sys.modules)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split()[-1] == "False", got.stdout
    import polars as pl

    df = pl.read_parquet(out)
    assert df.columns == ["run_id", "query_id", "measure", "value"]
    assert df["query_id"].to_list()[-1] == "all" and df.height > 1


def test_a_parquet_output_hashes_its_inputs_before_numpy_and_pyarrow_load(
    tmp_path: Path,
) -> None:
    """The inputs' SHA-256 (the output's provenance) starts on its own thread before the
    command loads numpy and pyarrow."""
    data = KERNELS.parent / "data"
    run = _sample_run(tmp_path)
    out = tmp_path / "out.parquet"
    code = (
        "import sys\n"
        "from fasteval.io import provenance\n"
        "seen = []\n"
        "start = provenance.Provenance.start\n"
        "def spy(self):\n"
        "    seen.append(sorted(m for m in ('numpy', 'pyarrow') if m in sys.modules))\n"
        "    start(self)\n"
        "provenance.Provenance.start = spy\n"
        "from fasteval.cli import main\n"
        f"main(['eval', {str(data / 'sample.qrels')!r}, {str(run)!r}, '-m', 'map',"
        f" '-o', {str(out)!r}], standalone_mode=False)\n"
        "print(seen, 'numpy' in sys.modules)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split("\n")[-2] == "[[]] True", got.stdout
    import pyarrow.parquet as pq

    from fasteval.io.provenance import provenance_of

    made = provenance_of(pq.read_metadata(out).metadata)
    assert made is not None and len(made["inputs"]) == 2
