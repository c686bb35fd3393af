"""Settings of the CPU backend (``tritium.knobs.cpu``)."""
from __future__ import annotations

from typing import Any, Optional

from tritium.knobs import BoolKnob, IntKnob, KnobGroup, StrKnob


class _FollowsDebug(BoolKnob):
    """A boolean that, while unset (None), follows the kernel's debug mode."""

    def check(self, value: Any) -> Optional[bool]:
        return None if value is None else super().check(value)


class cpu_knobs(KnobGroup):
    group_name = "cpu"
    not_in_cache_key = ("native_launch", )   # how a launch calls the kernel, never the code
    target_cpu = StrKnob("TRITIUM_CPU_TARGET", doc="LLVM CPU name to compile for; default: the host's")
    target_features = StrKnob("TRITIUM_CPU_FEATURES", doc="LLVM target features; default: the host's")
    target_triple = StrKnob("TRITIUM_CPU_TRIPLE", doc="LLVM target triple to compile for (e.g. "
                            "aarch64-unknown-linux-gnu); default: the host's. Code for another triple is compiled "
                            "and cached but cannot run here: set TRITIUM_CPU_COMPILE_ONLY=1")
    compile_only = BoolKnob("TRITIUM_CPU_COMPILE_ONLY", False, doc="Launches compile (and cache) their kernel but "
                            "run nothing: for cross-compiling, and for checking that every kernel compiles")
    opt_level = IntKnob("TRITIUM_CPU_OPT_LEVEL", 3, doc="LLVM optimization level (0-3)")
    parallel_threshold = IntKnob("TRITIUM_CPU_PARALLEL_THRESHOLD", 1 << 20,
                                 doc="Estimated element operations below which a launch stays on one thread")
    outline_threshold = IntKnob("TRITIUM_CPU_OUTLINE_THRESHOLD", 6000,
                                doc="LLVM instructions above which each loop of a kernel is optimized as a function "
                                    "of its own (keeps compile time linear in kernel size); 0 turns it off")
    native_launch = BoolKnob("TRITIUM_CPU_NATIVE_LAUNCH", True,
                             doc="After a kernel's first 1000 launches, call it through a builtin JIT-compiled "
                                 "once per process (tritium.llvmir.native_call), ~0.25 us less per launch than "
                                 "ctypes on the development host; 0: always ctypes")
    interruptible = BoolKnob("TRITIUM_CPU_INTERRUPTIBLE", True,
                             doc="Launches that may run long (a loop with run-time bounds, a large grid) run on a "
                                 "helper thread so that Ctrl-C stops them; costs ~5 us per such launch. 0: the "
                                 "calling thread runs every launch (Ctrl-C waits for the kernel to finish)")
    bounds_check = _FollowsDebug(
        "TRITIUM_CPU_BOUNDS_CHECK", None,  # type: ignore[arg-type]
        doc="Compile kernels that check every load, store and atomic against the argument's buffer and raise "
        "OutOfBoundsError (kernel, line, program id, argument, offsets) instead of touching other memory; "
        "unset: on exactly when debugging (TRITON_DEBUG=1, @jit(debug=True))")


cpu = cpu_knobs()
