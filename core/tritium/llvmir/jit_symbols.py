"""C functions that JIT-compiled kernels call, made known to llvmlite's JIT linker (MCJIT resolves an object's
undefined symbols only through what was registered, or what the process itself exports)."""
from __future__ import annotations

from typing import Any, Iterable


def add_process_symbols(names: Iterable[str], libraries: Iterable[Any]) -> list[str]:
    """Register each name's address from the first of ``libraries`` (ctypes libraries) that has it; return the
    names none had."""
    import ctypes

    import llvmlite.binding as llvm
    libs = list(libraries)
    missing = []
    for name in names:
        for lib in libs:
            try:
                fn = getattr(lib, name)
            except AttributeError:
                continue
            llvm.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)
            break
        else:
            missing.append(name)
    return missing
