"""Settings of the CPU backend (``tritium.knobs.cpu``)."""
from __future__ import annotations

from tritium.knobs import IntKnob, KnobGroup, StrKnob


class cpu_knobs(KnobGroup):
    group_name = "cpu"
    target_cpu = StrKnob("TRITIUM_CPU_TARGET", doc="LLVM CPU name to compile for; default: the host's")
    target_features = StrKnob("TRITIUM_CPU_FEATURES", doc="LLVM target features; default: the host's")
    opt_level = IntKnob("TRITIUM_CPU_OPT_LEVEL", 3, doc="LLVM optimization level (0-3)")
    parallel_threshold = IntKnob("TRITIUM_CPU_PARALLEL_THRESHOLD", 1 << 20,
                                 doc="Estimated element operations below which a launch stays on one thread")


cpu = cpu_knobs()
