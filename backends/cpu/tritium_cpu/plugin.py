"""Registers the CPU backend with tritium, exactly as a third-party backend would."""
from __future__ import annotations

from tritium.hookspecs import PLUGIN_API, BackendSpec, hookimpl

TRITIUM_PLUGIN_API = PLUGIN_API

CAPABILITIES = frozenset({
    "host-memory",        # kernels read and write host arrays (numpy, torch CPU tensors)
    "fp64", "int64-atomics", "float-atomics", "device-print", "device-assert",
    "dot-fp32", "dot-fp16", "dot-bf16", "dot-int8", "dot-fp64", "fp8",
})


@hookimpl
def tritium_backends():
    return [BackendSpec(name="cpu", compiler="tritium_cpu.compiler:CPUBackend", driver="tritium_cpu.driver:CPUDriver",
                        description="the host CPU (LLVM, vectorized, multi-threaded)", capabilities=CAPABILITIES,
                        priority=0, variants="tritium_cpu.isa:runnable_levels")]


@hookimpl
def tritium_knobs():
    from .knobs import cpu
    return [cpu]
