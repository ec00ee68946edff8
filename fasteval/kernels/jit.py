"""How the kernels run: from the library built with the package, or on numba's JIT.

Every kernel is decorated with :func:`njit` from here; the choice is made once, at the
first kernel module's import:

- **library**: the modules the package build compiled from ``signatures.json`` (see
  :mod:`fasteval.aot`), used all or none, when the index's digest matches these sources
  and every module's SHA-256 matches. A kernel is then a :class:`Kernel` running the
  library's function for its argument types (numba not imported); a call the library
  lacks compiles that one kernel on the JIT.
- **jit**: no usable library (or ``FASTEVAL_AOT=0``): :func:`njit` *is* numba's.

Arguments meet the library at :func:`arg_key` (dtype, dimensions, layout; not
writability). ``FASTEVAL_AOT_DIR`` names another library folder. This module imports
neither numba nor anything that does.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

AOT_ENV = "FASTEVAL_AOT"
"""Environment variable: ``0`` keeps every kernel on numba's JIT."""

AOT_DIR_ENV = "FASTEVAL_AOT_DIR"
"""Environment variable: a folder holding the library, instead of this package's."""

KERNELS_DIR = Path(__file__).resolve().parent
LIBRARY = "_aot"
"""The library's name: its index ``_aot.json`` names its extension modules (``_aot``,
``_aot1``...; compiled in parallel, loaded together)."""

SIGNATURES = KERNELS_DIR / "signatures.json"
"""The kernel calls the library holds: kernel -> argument type keys (checked in)."""

Key = Any
"""An argument type key: a string, or nested tuples of strings and ints."""

_lock = threading.RLock()
_state: dict[str, Any] = {"mode": None, "library": None, "reason": None, "misses": []}


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit`` (same options), or a :class:`Kernel` when the library is in use."""

    def decorate(fn: Callable[..., Any]) -> Any:
        if mode() == "jit":
            import numba  # noqa: PLC0415 (only when the JIT is used)

            return numba.njit(**options)(fn)
        return Kernel(fn, options, _state["library"])

    if args and callable(args[0]):
        return decorate(args[0])
    return decorate


def intrinsic(make: Callable[..., Any]) -> Any:
    """numba's ``intrinsic`` on the JIT; with the library, a stand-in that becomes one only
    when a kernel using it is compiled (numba is not imported until then)."""
    if mode() == "jit":
        from numba.extending import intrinsic as numba_intrinsic  # noqa: PLC0415

        return numba_intrinsic(make)
    return Intrinsic(make)


_intrinsics: list[Intrinsic] = []


class Intrinsic:
    """An intrinsic kept as its maker until a JIT compilation needs it (:func:`_teach_numba`)."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self.make = make
        self.real: Any = None
        _intrinsics.append(self)

    def __call__(self, *args: Any) -> Any:
        msg = f"{self.make.__name__} runs only inside compiled kernels"
        raise TypeError(msg)

    def numba(self) -> Any:
        """The numba intrinsic (made once)."""
        if self.real is None:
            with _lock:
                if self.real is None:
                    from numba.extending import intrinsic as numba_intrinsic  # noqa: PLC0415

                    self.real = numba_intrinsic(self.make)
        return self.real


def mode() -> str:
    """``"library"`` when kernels run from the package's library, else ``"jit"`` (decided on
    the first call, the first kernel module's import, and fixed from then on)."""
    m = _state["mode"]
    if m is None:
        with _lock:
            m = _state["mode"]
            if m is None:
                if disabled():
                    library, reason = None, f"{AOT_ENV}=0"
                else:
                    library, reason = load_library()
                _state["library"], _state["reason"] = library, reason
                m = _state["mode"] = "jit" if library is None else "library"
    return str(m)


def disabled() -> bool:
    """Whether ``FASTEVAL_AOT=0`` keeps every kernel on numba's JIT."""
    return os.environ.get(AOT_ENV, "1") == "0"


class Kernel:
    """A kernel served by the library, with numba's JIT for argument types it lacks (other
    attributes are those of its own numba dispatcher, made on first need)."""

    def __init__(self, fn: Callable[..., Any], options: dict[str, Any], library: Library) -> None:
        self.py_func = fn
        self.options = options
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.dispatcher: Any = None
        self.table = library.functions(fn.__module__, fn.__qualname__)

    def __call__(self, *args: Any) -> Any:
        return self.resolve(args)(*args)

    def resolve(self, args: tuple[Any, ...]) -> Callable[..., Any]:
        """The function a call with ``args`` runs: the library's, else this kernel's JIT."""
        f = self.table.get(arg_key(args)) if self.table else None
        if f is not None:
            return f
        if self.dispatcher is None:
            with _lock:
                misses: list[str] = _state["misses"]
                if len(misses) < 20:
                    misses.append(f"{self.__module__}.{self.__qualname__}")
        return self.dispatch()

    def dispatch(self) -> Any:
        """This kernel's numba dispatcher (made once). Kernels it calls are typed as
        their own dispatchers (:func:`_teach_numba`), so no module's names change."""
        if self.dispatcher is None:
            with _lock:
                if self.dispatcher is None:
                    import numba  # noqa: PLC0415

                    _teach_numba()
                    for stand_in in _intrinsics:  # registered before numba types the kernel
                        stand_in.numba()
                    self.dispatcher = numba.njit(**self.options)(self.py_func)
        return self.dispatcher

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dispatch(), name)

    def __repr__(self) -> str:
        return f"<fasteval kernel {self.__module__}.{self.__qualname__}>"


_taught: list[bool] = []


def _teach_numba() -> None:
    """Let numba type a :class:`Kernel` (a global of a kernel it compiles) as the kernel's
    own dispatcher, so a JIT kernel calls other kernels as usual."""
    if _taught:
        return
    from numba.core import types  # noqa: PLC0415
    from numba.core.typing.typeof import typeof_impl  # noqa: PLC0415

    @typeof_impl.register(Kernel)  # type: ignore[misc]
    def _typeof_kernel(val: Kernel, c: Any) -> Any:
        return types.Dispatcher(val.dispatch())

    @typeof_impl.register(Intrinsic)  # type: ignore[misc]
    def _typeof_intrinsic(val: Intrinsic, c: Any) -> Any:
        from numba.core.registry import cpu_target  # noqa: PLC0415

        return cpu_target.typing_context.resolve_value_type(val.numba())

    _taught.append(True)


def resolve(kernel: Callable[..., Any], args: tuple[Any, ...]) -> Callable[..., Any]:
    """What ``kernel(*args)`` runs (see :meth:`Kernel.resolve`); other callables as they are."""
    return kernel.resolve(args) if isinstance(kernel, Kernel) else kernel


def status() -> dict[str, Any]:
    """How this process runs its kernels: ``mode``, the ``library``'s module files (or
    ``None``), ``reason`` (why no library) and ``misses`` (kernels the JIT compiled)."""
    m = mode()
    library = _state["library"]
    return {
        "mode": m,
        "library": None if library is None else [x.__file__ for x in library.modules.values()],
        "reason": _state["reason"],
        "misses": list(_state["misses"]),
    }


# --- the call seam: argument type keys ----------------------------------------


def arg_key(args: tuple[Any, ...]) -> Key:
    """The type key of a call's arguments, as the library indexes its functions (arrays by
    dtype, dimensions, layout, alignment; ``None``: a value the scheme does not cover)."""
    return tuple([_value_key(a) for a in args])


_SCALARS: dict[type, str] = {bool: "bool", int: "int64", float: "float64"}
_TUPLE_NAMES: dict[type, str] = {}  # a named tuple type -> its key's name


# numpy's array flag bits (ndarray.flags.num)
_C, _F, _ALIGNED = 0x1, 0x2, 0x100


def _value_key(a: Any) -> Key:
    t = type(a)
    if t is np.ndarray:  # C-level attributes only: this runs on every kernel call
        d = a.dtype
        if not d.isnative or d.fields is not None:
            return None
        n = a.flags.num
        layout = "C" if n & _C else ("F" if n & _F else "A")
        return ("array", d.char, a.ndim, layout, bool(n & _ALIGNED))
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
    """The declared key of values of numba's ``types``: their :func:`arg_key`, arrays also
    carrying whether they are mutable (:func:`call_key` drops it)."""
    return tuple(_type_key(t) for t in types)


def _type_key(t: Any) -> Key:
    from numba.core import types  # noqa: PLC0415 (build time only)

    if isinstance(t, types.Array):
        if not isinstance(t.dtype, types.Number | types.Boolean):
            return None
        char = np.dtype(str(t.dtype)).char
        return ("array", char, t.ndim, t.layout, bool(t.aligned), bool(t.mutable))
    if isinstance(t, types.Boolean):
        return "bool"
    if isinstance(t, types.NoneType):
        return "none"
    if isinstance(t, types.Number):
        return str(t)
    if isinstance(t, types.BaseNamedTuple):
        cls = t.instance_class
        return (f"{cls.__module__}.{cls.__qualname__}", type_key(t.types))
    if isinstance(t, types.BaseTuple):
        return ("tuple", type_key(t.types))
    return None


def call_key(declared: Key) -> Key:
    """The :func:`arg_key` of calls a declared key (with mutability; tuples or the lists
    JSON gives) accepts."""
    if isinstance(declared, tuple | list):
        if declared and declared[0] == "array":
            return tuple(declared[:5])
        return tuple(call_key(k) for k in declared)
    return declared


def has_none(key: Key) -> bool:
    """Whether a key has a part this scheme does not cover."""
    if key is None:
        return True
    if isinstance(key, tuple | list):
        return any(has_none(k) for k in key)
    return False


# --- the library on disk ----------------------------------------------------


def digest() -> str:
    """What the library must have been built from: the kernel sources, the declared
    signatures, numpy's major version (its C API) and the Python build."""
    h = hashlib.sha256()
    for p in sorted([*KERNELS_DIR.glob("*.py"), SIGNATURES]):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    for part in (np.__version__.split(".")[0], sys.version, sys.platform):
        h.update(part.encode())
    return h.hexdigest()[:16]


def index_path(where: Path | None = None) -> Path:
    """The library's index (``_aot.json``) in ``where``, by default where the library is
    looked for: ``FASTEVAL_AOT_DIR``, else this package's kernels."""
    env = os.environ.get(AOT_DIR_ENV)
    return (where or (Path(env) if env else KERNELS_DIR)) / (LIBRARY + ".json")


def module_path(name: str, where: Path) -> Path:
    """The file of the library's extension module ``name`` (``_aot``, ``_aot1``...) in ``where``."""
    return where / (name + importlib.machinery.EXTENSION_SUFFIXES[0])


class Library:
    """The loaded modules and the index of (kernel, argument types) -> (module, function)."""

    def __init__(self, modules: dict[str, Any], index: dict[str, list[list[Any]]]) -> None:
        self.modules = modules
        self.index = index

    def functions(self, module: str, qualname: str) -> dict[Key, Callable[..., Any]]:
        """The library's functions of one kernel, by the :func:`arg_key` of calls."""
        out: dict[Key, Callable[..., Any]] = {}
        for key, name, export in self.index.get(f"{module}:{qualname}", []):
            out[call_key(key)] = getattr(self.modules[name], export)
        return out


def load_library() -> tuple[Library | None, str | None]:
    """The library built from these sources, or ``None`` and why (absent, stale, damaged).

    Every module the index names must be there with its SHA-256: all are used or none.
    """
    meta = index_path()
    if not meta.is_file():
        return None, f"no library at {meta.parent}"
    modules: dict[str, Any] = {}
    try:
        info = json.loads(meta.read_text())
        if info.get("digest") != digest():
            return None, "the kernel sources changed since the library was built"
        for name, sha in info["modules"].items():
            so = module_path(name, meta.parent)
            if not so.is_file():
                return None, f"no library at {so.parent} ({so.name} is missing)"
            if hashlib.sha256(so.read_bytes()).hexdigest() != sha:
                return None, f"{so}: damaged (its SHA-256 does not match {meta.name})"
            full = f"fasteval.kernels.{name}"
            loader = importlib.machinery.ExtensionFileLoader(full, str(so))
            spec = importlib.util.spec_from_file_location(full, so, loader=loader)
            if spec is None:  # pragma: no cover (a file path always gives a spec)
                return None, f"{so}: not loadable"
            modules[name] = importlib.util.module_from_spec(spec)
            loader.exec_module(modules[name])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ImportError) as e:
        return None, f"{meta.parent}: library not loaded ({e})"
    # free one untouched 16 MB block, as numba's start-up does: glibc then raises its mmap
    # threshold and reuses heap memory for kernel outputs instead of faulting in fresh pages
    np.empty(16 << 20, np.uint8)
    return Library(modules, info["kernels"]), None
