"""Registers the NVIDIA backend with tritium, exactly as a third-party backend would. Importing this module
imports nothing from CUDA: the compiler and driver classes load on first use."""
from __future__ import annotations

from tritium.hookspecs import PLUGIN_API, BackendSpec, LanguageExtra, hookimpl

TRITIUM_PLUGIN_API = PLUGIN_API

CAPABILITIES = frozenset({
    "device-memory",      # kernels read and write GPU memory (torch CUDA tensors, __cuda_array_interface__)
    "fp64", "fp8", "tensor-cores", "float-atomics", "int64-atomics", "device-print", "device-assert",
    "dot-fp32", "dot-fp16", "dot-bf16", "dot-int8", "dot-fp64", "warp-shuffle",
})


@hookimpl
def tritium_backends():
    # accelerators win over the host CPU (priority 0) when their driver is active
    return [BackendSpec(name="nvidia", compiler="tritium_nvidia.compiler:CUDABackend",
                        driver="tritium_nvidia.driver:CudaDriver",
                        description="NVIDIA GPUs, sm_80 and newer (PTX via llvmlite, cubin via ptxas)",
                        capabilities=CAPABILITIES, priority=100)]


@hookimpl
def tritium_knobs():
    from .knobs import nvidia
    return [nvidia]


@hookimpl
def tritium_language_extras():
    return [LanguageExtra("cuda", "tritium_nvidia.language_extra",
                          "NVIDIA's own: globaltimer, smid, num_warps, num_threads, gdc_*, libdevice")]
