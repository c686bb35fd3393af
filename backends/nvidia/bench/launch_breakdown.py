"""Where the host time of a cached launch goes, on a GPU: the driver call alone (through cuda-bindings, through
ctypes, through tritium's native builtin and its packing variant, which builds kernelParams from packed bytes),
tritium's whole cached launch with the launcher calling the driver each way (TRITIUM_NVIDIA_NATIVE_LAUNCH) and
Triton's, in one process, then a profile of tritium's.

Run on a machine with an NVIDIA GPU: python backends/nvidia/bench/launch_breakdown.py
"""
from __future__ import annotations

import cProfile
import ctypes
import pstats
import statistics
import struct
import sys
import time
from typing import Any, Callable

import torch

import tritium
import tritium.language as tl


@tritium.jit
def store_one(out_ptr, value):
    tl.store(out_ptr, value)


def per_call_us(call: Callable[[], Any], batches: int = 60, per_batch: int = 200) -> float:
    call()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            call()
        times.append((time.perf_counter() - t0) * 1e6 / per_batch)
        torch.cuda.synchronize()
    return statistics.median(times)


def main() -> None:
    out = torch.zeros(4, device="cuda")
    store_one.warmup(out, 3, grid=(1, ))   # compiled (and LLVM initialized) before the native call is built
    t0 = time.perf_counter()
    store_one[(1, )](out, 3)
    print(f"first launch of a compiled kernel (loads the module, builds the native call): "
          f"{(time.perf_counter() - t0) * 1e3:.1f} ms")
    torch.cuda.synchronize()
    assert out[0].item() == 3
    state = next(iter(store_one.device_caches.values()))
    launcher = next(iter(state.kernels.values())).kernel._launcher  # the CudaLauncher object
    from cuda.bindings import driver as cu

    device = torch.cuda.current_device()
    func = launcher.functions[device]
    stream = torch.cuda.current_stream().cuda_stream
    params = launcher.params_addr
    rows = []
    rows.append(("cuLaunchKernel via cuda-bindings", per_call_us(
        lambda: cu.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, stream, params, 0))))
    lib = ctypes.CDLL("libcuda.so.1")
    direct = lib.cuLaunchKernel
    u32, ptr = ctypes.c_uint32, ctypes.c_void_p
    direct.argtypes = [ptr, u32, u32, u32, u32, u32, u32, u32, ptr, ptr, ptr]
    h = int(func)
    rows.append(("cuLaunchKernel via ctypes (libcuda)", per_call_us(
        lambda: direct(h, 1, 1, 1, 32, 1, 1, 0, stream, params, None))))
    from tritium_nvidia import cuda as nv_cuda
    from tritium_nvidia import launch_call
    from tritium_nvidia.knobs import nvidia as nv_knobs
    try:
        native, source = nv_cuda.native_launch()
        rows.append(("cuLaunchKernel via the native builtin", per_call_us(
            lambda: native(h, 1, 1, 1, 32, 1, 1, 0, stream, params, 0))))
        print(f"native builtin: cuLaunchKernel's address from {source}")
        packed = nv_cuda.native_packed_launch()
        offsets = struct.pack(f"@{len(launcher.arguments.offsets)}Q", *launcher.arguments.offsets)
        pack = launcher.arguments.packer.pack
        rows.append(("cuLaunchKernel via the packing builtin (+ struct.pack)", per_call_us(
            lambda: packed(h, 1, 1, 1, 32, 1, 1, 0, stream, offsets, pack(out.data_ptr(), 3), 0))))
    except Exception as exc:  # noqa: BLE001 - the table says what could be measured
        print(f"native builtin unavailable: {type(exc).__name__}: {exc}")
    for native_launch in (False, True):  # the launcher's launch call chosen again with the knob each way
        nv_knobs.native_launch = native_launch
        launch_call.reset()
        launch_call.NATIVE_AFTER = 0  # chosen at the next launch, not after the process's first 100
        store_one[(1, )](out, 3)
        torch.cuda.synchronize()
        how = "cuda-bindings"
        if launch_call.is_native:
            how = "native, packing" if launch_call.packed[0] is launch_call.launch else "native, buffer + lock"
        rows.append((f"tritium launcher's hot_call only ({how})",
                     per_call_us(lambda: launcher.hot_call((1, 1, 1), (out.data_ptr(), 3)))))
        rows.append((f"tritium kernel[(1,)](out, 3) ({how})", per_call_us(lambda: store_one[(1, )](out, 3))))
        if launch_call.packed[0] is launch_call.launch:  # the same native call without its packing variant
            saved, launch_call.packed = launch_call.packed, (None, None)
            rows.append(("tritium kernel[(1,)](out, 3) (native, buffer + lock)",
                         per_call_us(lambda: store_one[(1, )](out, 3))))
            launch_call.packed = saved
    try:
        import triton
        import triton.language as ttl

        @triton.jit
        def store_one_triton(out_ptr, value):
            ttl.store(out_ptr, value)

        rows.append((f"Triton {triton.__version__} kernel[(1,)](out, 3)",
                     per_call_us(lambda: store_one_triton[(1, )](out, 3))))
    except ImportError:
        pass
    for name, us in rows:
        print(f"{name:55s} {us:6.2f} us", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20000):
        store_one[(1, )](out, 3)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
