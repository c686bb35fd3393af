"""``tl.extra.libdevice`` on the GPU emulator.

The GPU lowering turns a libdevice function without an MLIR ``math`` equivalent into one call per register of
``tt.extern_elementwise``'s symbol (``sinpi_f32``, ``mulhi_u32_u32``...), which a GPU backend resolves in its vendor
library. The emulator has no device library: each symbol becomes a call to ``emu_libdevice_<symbol>``, a host
function that computes the element with the interpreter's definitions (interpreter/libdevice.py, the suite's
reference for every backend). So the emulator checks the lowering's side of the call (which registers, which
types, the result's place in the layout), not a vendor's numerics; it is slow (Python per element) and meant for
tests like the rest of the emulator.
"""
from __future__ import annotations

import ctypes
import re
from typing import Any, Callable, Optional

PREFIX = "emu_libdevice_"
_CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
           "i32": ctypes.c_int32, "i64": ctypes.c_int64}
_INT_VIEW = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}
_DECLARE = re.compile(r"^declare (\w+) @" + PREFIX + r"(\w+)\(([^)]*)\)", re.M)
#: the host functions handed to the JIT linker; LLVM's symbol table is process-wide and keeps their addresses
_callbacks: dict[str, Any] = {}
#: what the functions raised: an exception cannot cross the C call, so the launcher raises it after the launch
_errors: list[BaseException] = []


def variants() -> dict[str, tuple[tuple, Any]]:
    """symbol -> (argument types, result type) of every libdevice variant."""
    from ..language.extra import libdevice
    out = {}
    for name, sigs in libdevice.SIGNATURES.items():
        for args, ret in sigs:
            out[libdevice._variant(name, args)] = (tuple(args), ret)
    return out


_VARIANTS: dict[str, tuple[tuple, Any]] = {}


def call(fn: Any, module: Any, symbol: str, libpath: str, args: list[tuple[str, str]], ret: str,
         kernel: str = "") -> str:
    """The emulator target's ``extern_call``: a call to the host's implementation of libdevice ``symbol``."""
    if not _VARIANTS:
        _VARIANTS.update(variants())
    if libpath or symbol not in _VARIANTS:
        raise NotImplementedError(
            f"the GPU emulator cannot call external function {symbol}" + (f" from {libpath}" if libpath else "") +
            ": it runs libdevice's functions (tl.extra.libdevice) only; use those or tl.math in kernels tested on it")
    name = PREFIX + symbol
    module.declare(name, f"declare {ret} @{name}({', '.join(t for t, _ in args)}) nounwind")
    return fn.inst(f"call {ret} @{name}({', '.join(f'{t} {v}' for t, v in args)})")


def used(llir: str) -> list[tuple[str, str, list[str]]]:
    """(symbol, result type, argument types) of the libdevice functions a kernel's LLVM IR calls (its metadata
    keeps them, so that a launcher built from a cached object finds them)."""
    return [(m.group(2), m.group(1), [a.strip() for a in m.group(3).split(",") if a.strip()])
            for m in _DECLARE.finditer(llir)]


def register(functions: list) -> None:
    """Tell the JIT linker where each function lives (before an object that calls them is finalized)."""
    import llvmlite.binding as llvm
    for symbol, ret, args in functions:
        if symbol in _callbacks:
            continue
        proto = ctypes.CFUNCTYPE(_CTYPES[ret], *[_CTYPES[a] for a in args])
        cb = proto(_host_function(symbol))
        _callbacks[symbol] = cb
        llvm.add_symbol(PREFIX + symbol, ctypes.cast(cb, ctypes.c_void_p).value)


def take_error() -> Optional[BaseException]:
    """The first exception a libdevice function raised since the last call (the others are dropped)."""
    first = _errors[0] if _errors else None
    _errors.clear()
    return first


def _host_function(symbol: str) -> Callable[..., Any]:
    import numpy as np

    from ..interpreter import libdevice as reference
    from ..interpreter.values import storage
    if not _VARIANTS:
        _VARIANTS.update(variants())
    arg_types, ret_type = _VARIANTS[symbol]
    dtypes = [storage(t) for t in arg_types]
    out_dt = storage(ret_type)

    def run(*values: Any) -> Any:
        try:
            return compute(*values)
        except BaseException as exc:   # (a ctypes callback would print it and return garbage)
            _errors.append(exc)
            return False if out_dt.kind == "b" else 0

    def compute(*values: Any) -> Any:
        # the C call gives signed integers: reinterpret each in its variant's type (u32 keeps its bits)
        arrays = [np.array([v], dtype=_INT_VIEW[dt.itemsize]).view(dt) if dt.kind in "iu" else
                  np.array([v], dtype=dt) for v, dt in zip(values, dtypes)]
        r = np.asarray(reference.extern(symbol, arrays, list(arg_types), ret_type)).astype(out_dt).reshape(1)
        if out_dt.kind == "b":
            return bool(r[0])
        if out_dt.kind in "iu":
            return int(r.view(_INT_VIEW[out_dt.itemsize])[0])
        return float(r[0])
    return run
