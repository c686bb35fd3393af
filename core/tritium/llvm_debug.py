"""LLVM's debugging switches, applied around a backend's LLVM work: ``TRITON_ENABLE_LLVM_DEBUG`` (-debug),
``TRITON_LLVM_DEBUG_ONLY`` (-debug-only=...), ``LLVM_ENABLE_TIMING`` (the pass timing report) and
``DISABLE_LLVM_OPT`` (all optimization off, or named boolean LLVM options turned on).

LLVM keeps command-line options in process-wide globals; llvmlite sets them through ``set_option``. They are
set for the duration of one kernel's LLVM work and switched back off afterwards, so that a later kernel
compiled without the knob is not affected (and, for DISABLE_LLVM_OPT's flags, not miscached: the knob is part
of the cache key, the globals are not).
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Iterator

from . import knobs
from .debug_knobs import warn_once


def opt_disabled() -> bool:
    """DISABLE_LLVM_OPT is a true boolean: the backend skips its LLVM optimization pipeline."""
    return knobs.compilation.disable_llvm_opt is True


def disabled_opt_flags() -> tuple[str, ...]:
    """DISABLE_LLVM_OPT as a list (``disable-lsr,...``): boolean LLVM options to turn on while compiling."""
    value = knobs.compilation.disable_llvm_opt
    return tuple(f.lstrip("-") for f in value) if isinstance(value, tuple) else ()


#: LLVM appends every -debug-only list to one process-wide list, with no way to remove an entry
_debug_types: set[str] = set()


def _set(option: str) -> None:
    import llvmlite.binding as llvm
    llvm.set_option("tritium", option)


@contextmanager
def llvm_options(kernel: str = "") -> Iterator[None]:
    """LLVM's -debug / -debug-only and DISABLE_LLVM_OPT's flags, on for the block only."""
    flags = disabled_opt_flags()
    only = knobs.compilation.llvm_debug_only
    debug = bool(only) or knobs.compilation.enable_llvm_debug
    if not flags and not debug:
        yield
        return
    for flag in flags:
        # LLVM ignores names it does not know (llvmlite passes no error stream): nothing to check here
        _set(f"-{flag}")
    if only:
        stale = sorted(_debug_types - set(only))
        if stale:
            warn_once("TRITON_LLVM_DEBUG_ONLY stale", "TRITON_LLVM_DEBUG_ONLY: LLVM cannot forget a debug type once "
                      f"named in a process, so the output of {', '.join(stale)} (named earlier) still appears; "
                      "start a new process for a narrower list")
        _debug_types.update(only)
        _set("-debug-only=" + ",".join(only))
    elif debug:
        if _debug_types:
            warn_once("TRITON_ENABLE_LLVM_DEBUG narrowed", "TRITON_ENABLE_LLVM_DEBUG: an earlier "
                      f"TRITON_LLVM_DEBUG_ONLY list ({', '.join(sorted(_debug_types))}) stays in force in this "
                      "process (LLVM cannot forget it): -debug shows only those types")
        _set("-debug")
    if debug:
        print(f"// -----// LLVM debug output of kernel {kernel} follows (stderr) //----- //", file=sys.stderr,
              flush=True)
    try:
        yield
    finally:
        if debug:
            _set("-debug=false")
        for flag in flags:
            _set(f"-{flag}=false")


def run_module_passes(pass_builder: Any, module: Any, kernel: str = "") -> None:
    """Run the pass builder's module pipeline on ``module``, timed when LLVM_ENABLE_TIMING is on."""
    timing = knobs.compilation.llvm_timing
    if timing:
        pass_builder.start_pass_timing()
    pass_builder.getModulePassManager().run(module, pass_builder)
    if timing:
        report = pass_builder.finish_pass_timing()
        print(f"// -----// LLVM pass timing of kernel {kernel} //----- //\n{report}", file=sys.stderr)
