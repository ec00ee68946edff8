"""How the kernels are compiled: numba's JIT, or a library built ahead of time.

Every kernel is decorated with :func:`njit` from here instead of numba's. By
default that *is* numba's ``njit``: the kernel is a numba dispatcher,
compiled on first use and cached on disk.

numba itself costs a fresh process about 0.3 s to import and 0.3 s more for
its first dispatch (it builds its target context even when every kernel comes
from the cache), and about 110 MB of memory; a one-run ``fasteval eval`` spends
most of its time there. ``fasteval warmup`` therefore also records which
kernels the evaluation commands call, with which argument types, and compiles
those into one extension module with ``numba.pycc`` (see
:mod:`fasteval.aot`): the same kernel source, the same compiler, for
this machine's CPU, with the GIL released as ``nogil=True`` does.

When that library is present and was built from exactly these kernel sources
(its name carries a digest of them, of the numba and numpy versions and of the
Python build) and its own SHA-256 matches, each kernel becomes a
:class:`Kernel`: a call whose argument types the library holds runs the
library's function and numba is never imported. The first call it does not
hold switches the whole process to numba, once: every kernel gets its numba
dispatcher and every module's reference to a :class:`Kernel` is replaced by
the dispatcher, so kernels calling kernels compile as usual. Results are the
same either way; only the start-up differs.

``FASTEVAL_AOT=0`` turns the library off; ``FASTEVAL_AOT_DIR`` says where it is
(default: ``__pycache__`` beside these sources, else ``~/.cache/fasteval``).

This module imports neither numba nor anything that does.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

AOT_ENV = "FASTEVAL_AOT"
"""Environment variable: ``0`` keeps every kernel on numba's JIT."""

AOT_DIR_ENV = "FASTEVAL_AOT_DIR"
"""Environment variable: the folder holding the ahead-of-time library."""

KERNELS_DIR = Path(__file__).resolve().parent
PREFIX = "fasteval_aot_"

Key = Any
"""An argument type key: a string, or nested tuples of strings and ints."""

_lock = threading.RLock()
_kernels: list[Kernel] = []
_state: dict[str, Any] = {"mode": None, "library": None}


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit`` (same options), or a :class:`Kernel` when the AOT library is in use."""

    def decorate(fn: Callable[..., Any]) -> Any:
        if mode() == "numba":
            import numba  # noqa: PLC0415 (only when the JIT is used)

            return numba.njit(**options)(fn)
        kernel = Kernel(fn, options)
        with _lock:
            if _state["mode"] == "numba":  # switched since mode() was read
                return kernel.dispatch()
            _kernels.append(kernel)
        return kernel

    if args and callable(args[0]):
        return decorate(args[0])
    return decorate


def mode() -> str:
    """``"aot"`` when kernels run from the ahead-of-time library, else ``"numba"``."""
    m = _state["mode"]
    if m is None:
        with _lock:
            m = _state["mode"]
            if m is None:
                library = None if disabled() else load_library()
                _state["library"] = library
                m = _state["mode"] = "numba" if library is None else "aot"
    return str(m)


def disabled() -> bool:
    """Whether ``FASTEVAL_AOT=0`` keeps every kernel on numba's JIT."""
    return os.environ.get(AOT_ENV, "1") == "0"


class Kernel:
    """A kernel run from the ahead-of-time library while its argument types are there.

    Calls with other argument types switch the process to numba
    (:func:`use_numba`) and go to the numba dispatcher from then on. Other
    attributes (``py_func``, ``signatures``, ...) are the dispatcher's.
    """

    def __init__(self, fn: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = fn
        self.options = options
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.dispatcher: Any = None
        library = _state["library"]
        self.table: dict[Key, Callable[..., Any]] = (
            {} if library is None else library.functions(fn.__module__, fn.__qualname__)
        )

    def __call__(self, *args: Any) -> Any:
        return self.resolve(args)(*args)

    def resolve(self, args: tuple[Any, ...]) -> Callable[..., Any]:
        """The function a call with ``args`` runs: the library's, else the dispatcher.

        For a kernel called many times with arguments of one type (the chunks of
        one parallel call), so that their types are read once.
        """
        d = self.dispatcher
        if d is None:
            key = arg_key(args)
            f = self.table.get(key) if self.table else None
            if f is not None:
                return f
            use_numba(f"{self.__module__}.{self.__qualname__}{key!r}")
            d = self.dispatcher
        return d  # type: ignore[no-any-return]

    def dispatch(self) -> Any:
        """The numba dispatcher of this kernel (created once)."""
        if self.dispatcher is None:
            import numba  # noqa: PLC0415

            self.dispatcher = numba.njit(**self.options)(self.py_func)
        return self.dispatcher

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        use_numba(f"{self.__module__}.{self.__qualname__}.{name}")
        return getattr(self.dispatch(), name)

    def __repr__(self) -> str:
        return f"<fasteval kernel {self.__module__}.{self.__qualname__}>"


def resolve(kernel: Callable[..., Any], args: tuple[Any, ...]) -> Callable[..., Any]:
    """What ``kernel(*args)`` runs (see :meth:`Kernel.resolve`); other callables as they are."""
    return kernel.resolve(args) if isinstance(kernel, Kernel) else kernel


def use_numba(reason: str = "asked for") -> None:
    """Switch the process to numba's JIT for every kernel (once; safe from any thread).

    ``reason`` (the kernel call the library lacks) is kept for :func:`status`.
    """
    with _lock:
        if _state["mode"] == "numba":
            return
        if _state["library"] is not None:
            _state["switched_by"] = reason
        for k in _kernels:
            k.dispatch()
        for name, module in list(sys.modules.items()):
            if name.startswith("fasteval") and module is not None:
                space = vars(module)
                for attr, value in list(space.items()):
                    if isinstance(value, Kernel):
                        space[attr] = value.dispatch()
        _state["mode"] = "numba"


def status() -> dict[str, Any]:
    """How this process runs its kernels: ``mode``, the ``library`` file (or ``None``), and
    ``switched_by``, the first kernel call the library lacked (``None`` if none did)."""
    m = mode()
    library = _state["library"]
    return {
        "mode": m,
        "library": None if library is None else library.module.__file__,
        "switched_by": _state.get("switched_by"),
    }


def arg_key(args: tuple[Any, ...]) -> Key:
    """The type key of a call's arguments (see :func:`type_key` for numba's side)."""
    return tuple([_value_key(a) for a in args])


_SCALARS: dict[type, str] = {bool: "bool", int: "int64", float: "float64"}
_TUPLE_NAMES: dict[type, str] = {}  # a named tuple type -> its key's name


# numpy's array flag bits (ndarray.flags.num)
_C, _F, _ALIGNED, _WRITEABLE = 0x1, 0x2, 0x100, 0x400


def _value_key(a: Any) -> Key:
    t = type(a)
    if t is np.ndarray:  # C-level attributes only: this runs on every kernel call
        d = a.dtype
        if not d.isnative or d.fields is not None:
            return None
        n = a.flags.num
        layout = "C" if n & _C else ("F" if n & _F else "A")
        return ("array", d.char, a.ndim, layout, bool(n & _WRITEABLE), bool(n & _ALIGNED))
    s = _SCALARS.get(t)
    if s is not None:
        return s
    if isinstance(a, tuple):  # (lists, not generators: this runs on every kernel call)
        inner = tuple([_value_key(x) for x in a])
        if t is tuple:
            return ("tuple", inner)
        name = _TUPLE_NAMES.get(t)
        if name is None:
            name = _TUPLE_NAMES[t] = f"{t.__module__}.{t.__qualname__}"
        return (name, inner)
    if isinstance(a, np.generic):
        return a.dtype.name
    return None


def type_key(types: Any) -> Key:
    """The type key numba's argument types give; equal to :func:`arg_key` of such values.

    ``None`` when a type is one this scheme does not cover (the call then goes to numba).
    """
    return tuple(_type_key(t) for t in types)


def _type_key(t: Any) -> Key:
    from numba.core import types  # noqa: PLC0415 (build time only)

    if isinstance(t, types.Array):
        if not isinstance(t.dtype, types.Number | types.Boolean):
            return None
        char = np.dtype(str(t.dtype)).char
        return ("array", char, t.ndim, t.layout, bool(t.mutable), bool(t.aligned))
    if isinstance(t, types.Boolean):
        return "bool"
    if isinstance(t, types.Number):
        return str(t)
    if isinstance(t, types.BaseNamedTuple):
        cls = t.instance_class
        return (f"{cls.__module__}.{cls.__qualname__}", tuple(_type_key(x) for x in t.types))
    if isinstance(t, types.BaseTuple):
        return ("tuple", tuple(_type_key(x) for x in t.types))
    return None


def has_none(key: Key) -> bool:
    """Whether a key has a part this scheme does not cover."""
    if key is None:
        return True
    if isinstance(key, tuple):
        return any(has_none(k) for k in key)
    return False


def freeze(key: Key) -> Key:
    """A key read back from JSON (lists) as the tuples :func:`arg_key` gives."""
    if isinstance(key, list):
        return tuple(freeze(k) for k in key)
    return key


# --- the library on disk ----------------------------------------------------


def digest() -> str:
    """What the library must have been built from: kernel sources, numba, numpy, Python."""
    h = hashlib.sha256()
    for p in sorted(KERNELS_DIR.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(_numba_version())
    for part in (np.__version__, sys.version, sys.platform):
        h.update(part.encode())
    return h.hexdigest()[:16]


def _numba_version() -> bytes:
    """numba's ``_version.py`` (its version and git revision), read without importing numba
    or ``importlib.metadata`` (15 ms)."""
    spec = importlib.machinery.PathFinder.find_spec("numba")
    if spec is None or not spec.submodule_search_locations:
        return b"?"
    try:
        return (Path(next(iter(spec.submodule_search_locations))) / "_version.py").read_bytes()
    except OSError:
        return b"?"


def folders() -> list[Path]:
    """Where the library is looked for, in order (the first writable one is built into)."""
    env = os.environ.get(AOT_DIR_ENV)
    if env:
        return [Path(env)]
    return [KERNELS_DIR / "__pycache__", Path.home() / ".cache" / "fasteval"]


def module_name() -> str:
    """The extension module's name for these sources (its file adds the platform suffix)."""
    return PREFIX + digest()


class Library:
    """The loaded ahead-of-time module and its index of (kernel, argument types) -> function."""

    def __init__(self, module: Any, index: dict[str, list[list[Any]]]) -> None:
        self.module = module
        self.index = index

    def functions(self, module: str, qualname: str) -> dict[Key, Callable[..., Any]]:
        """The library's functions of one kernel, by argument type key."""
        out: dict[Key, Callable[..., Any]] = {}
        for key, export in self.index.get(f"{module}:{qualname}", []):
            out[freeze(key)] = getattr(self.module, export)
        return out


def load_library() -> Library | None:
    """The library built from these sources, or ``None`` (absent, stale or damaged)."""
    name = module_name()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for folder in folders():
        so = folder / (name + suffix)
        meta = folder / (name + ".json")
        if not (so.is_file() and meta.is_file()):
            continue
        try:
            info = json.loads(meta.read_text())
            if hashlib.sha256(so.read_bytes()).hexdigest() != info["sha256"]:
                warnings.warn(
                    f"{so}: damaged (its SHA-256 does not match {meta.name}); "
                    "using numba's JIT; `fasteval warmup` builds it again",
                    stacklevel=2,
                )
                return None
            loader = importlib.machinery.ExtensionFileLoader(name, str(so))
            spec = importlib.util.spec_from_file_location(name, so, loader=loader)
            assert spec is not None
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        except (OSError, ValueError, KeyError, ImportError) as e:
            warnings.warn(f"{so}: not loaded ({e}); using numba's JIT", stacklevel=2)
            return None
        _adapt_malloc()
        return Library(module, info["kernels"])
    return None


def _adapt_malloc() -> None:
    """Free one 16 MB block, as numba's start-up does, so glibc reuses memory for outputs.

    glibc serves blocks over its mmap threshold (128 KB at start) with fresh
    pages and, once such a block is freed, raises the threshold to its size
    (and the trim threshold to twice that). numba's JIT start-up frees large
    blocks, so a JIT process reuses heap memory for kernel outputs; a process
    that never loads numba kept the 128 KB threshold and faulted in fresh pages
    for every output array (about 500 page faults, +1 ms, per warm one-run
    ``evaluate``). This is glibc's own adaptation, started early; other C
    libraries ignore it.
    """
    block = np.empty(16 << 20, np.uint8)  # never touched: only its free() matters
    del block
