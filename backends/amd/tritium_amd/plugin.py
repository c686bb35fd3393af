"""Registers the AMD backend with tritium, exactly as a third-party backend would. Importing this module imports
nothing from HIP or LLVM: the compiler and driver classes load on first use."""
from __future__ import annotations

from tritium.hookspecs import PLUGIN_API, BackendSpec, hookimpl

TRITIUM_PLUGIN_API = PLUGIN_API

CAPABILITIES = frozenset({
    "device-memory",      # kernels read and write GPU memory (torch ROCm tensors, __cuda_array_interface__, DLPack)
    "fp64", "fp8", "tensor-cores", "float-atomics", "int64-atomics", "device-assert",
    "dot-fp32", "dot-fp16", "dot-bf16", "dot-int8", "dot-fp64", "warp-shuffle",
})


@hookimpl
def tritium_backends():
    return [BackendSpec(name="amd", compiler="tritium_amd.compiler:HIPBackend", driver="tritium_amd.driver:HipDriver",
                        description="AMD GPUs: CDNA gfx90a/gfx942/gfx950 (wave64, MFMA), RDNA (wave32); AMDGCN via "
                                    "llvmlite, hsaco via the ziglang wheel's ld.lld, run through hip-python",
                        capabilities=CAPABILITIES, priority=100)]


@hookimpl
def tritium_knobs():
    from .knobs import amd
    return [amd]
