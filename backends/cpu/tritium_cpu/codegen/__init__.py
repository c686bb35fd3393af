"""Lowering of tile IR to LLVM IR for the host CPU (see :mod:`.lower`)."""
from typing import Any


def __getattr__(name: str) -> Any:
    # lazy: loading a precompiled object (tritium.load_compiled) reads .mathlib_extra's C symbols, and must not
    # import the lowering (MLIR) on the way
    if name == "lower_to_llvm":
        from .module import lower_to_llvm
        return lower_to_llvm
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
